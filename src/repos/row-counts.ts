/**
 * Exact list totals from the counters of `row_counts` (sql/sqlite/0003_row_counts.sql), kept by
 * triggers: one primary-key lookup per counter instead of a COUNT(*) over every match.
 *
 * A counter row is (tbl, scope, key, n): `scope` is the id of the record a list is scoped to,
 * `key` the scope kind and the values of the filter columns, at the finest grain the triggers
 * keep (e.g. `site:live` for the live backlinks of a site). A coarser total is the sum of the
 * fine rows: `countedTotal` is given every key the filter admits.
 *
 * The import bypasses the triggers for a table it loads in bulk and recounts that table at the
 * end of its transaction (`pauseRowCounts` in `src/db/row-counters.ts`): see there.
 */
import { type Kysely, sql } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import { isStampedTable } from '../db/change-stamps.js';
import type { CountedTable } from '../db/row-counters.js';
import type { Database } from '../db/schema.js';
import { cachedValue } from './data-cache.js';

/** A missing row is a counter never incremented: 0. */
const NO_ROWS = 0;

/** The counters `keys` of `scope` in `tbl`, one by one (0 for a key without a row): one primary-key lookup each. */
export async function countedByKey<K extends string>(
  db: Kysely<Database>,
  tbl: CountedTable,
  scope: string,
  keys: readonly K[],
): Promise<Record<K, number>> {
  const counts = Object.fromEntries(keys.map((k) => [k, NO_ROWS])) as Record<K, number>;
  if (keys.length === 0) return counts;
  const params: Record<string, unknown> = { tbl, scope };
  keys.forEach((key, i) => {
    params[`k${i}`] = key;
  });
  for (const row of await countersByKey.all(db, params, String(keys.length))) counts[row.key as K] = Number(row.n);
  return counts;
}

/** The counters of a table and scope among n keys; one compiled statement per n (the shape). */
const countersByKey = precompiledQuery<string, { key: string; n: number }, string>((db, param, n) =>
  db
    .selectFrom('row_counts')
    .select(['key', 'n'])
    .where('tbl', '=', param('tbl'))
    .where('scope', '=', param('scope'))
    .where(
      'key',
      'in',
      Array.from({ length: Number(n) }, (_, i) => param(`k${i}`)),
    ),
);

/**
 * The sum of the counters `keys` of `scope` in `tbl`: the exact number of rows of `tbl` that
 * the filter those keys spell out admits. Kept in the store's data cache of `tbl` where `tbl` is
 * a table caches may read (src/repos/data-cache.ts, decisions.md §16 "Caches"): a table's
 * counters change only with its own rows (its counting triggers, or a bulk load's recount in the
 * same transaction as its rows, `pauseRowCounts` in src/db/bulk-load.ts), so what changes them
 * changes `tbl`'s stamp.
 */
export async function countedTotal(
  db: Kysely<Database>,
  tbl: CountedTable,
  scope: string,
  keys: readonly string[],
): Promise<number> {
  const count = async () =>
    Object.values<number>(await countedByKey(db, tbl, scope, keys)).reduce((sum, n) => sum + n, NO_ROWS);
  return isStampedTable(tbl) ? cachedValue(db, [tbl], `total|${tbl}|${scope}|${keys.join(',')}`, count) : count();
}

/**
 * Every counter of `scope` in the tables `tbls`, as `{ tbl: { key: n } }`: one range of the
 * primary key per table (a site's pipeline reads its status counters this way).
 */
export async function countersOf(
  db: Kysely<Database>,
  tbls: readonly CountedTable[],
  scope: string,
): Promise<Record<string, Record<string, number>>> {
  const { rows } = await sql<{ tbl: string; key: string; n: number }>`SELECT tbl, key, n FROM row_counts
    WHERE tbl IN (${sql.join(tbls)}) AND scope = ${scope}`.execute(db);
  const out: Record<string, Record<string, number>> = Object.fromEntries(tbls.map((t) => [t, {}]));
  for (const row of rows) out[row.tbl]![row.key] = Number(row.n);
  return out;
}

/** `${kind}:${value}` for each value: the keys of a status-like filter (`values` = one value, or every one). */
export const keysOf = (kind: string, values: readonly string[]) => values.map((v) => `${kind}:${v}`);
