/**
 * Exact list totals from the counters of `row_counts` (sql/0003_row_counts.sql), kept by
 * triggers: one primary-key lookup per counter instead of a COUNT(*) over every match.
 *
 * A counter row is (tbl, scope, key, n): `scope` is the id of the record a list is scoped to,
 * `key` the scope kind and the values of the filter columns, at the finest grain the triggers
 * keep (e.g. `site:live` for the live backlinks of a site). A coarser total is the sum of the
 * fine rows: `countedTotal` is given every key the filter admits.
 *
 * The import bypasses the triggers for a table it loads in bulk and recounts that table at the
 * end of its transaction (`pauseRowCounts`): see there.
 */
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { SqliteHandle } from '../db/sqlite-handle.js';
import { loadMigrations } from '../db/migrate.js';
import type { Database } from '../db/schema.js';

/** The tables whose list totals come from `row_counts`. */
export const COUNTED_TABLES = [
  'backlinks',
  'backlink_checks',
  'prospects',
  'contacts',
  'drafts',
  'threads',
  'thread_messages',
  'discovery_jobs',
  'discovery_queries',
  'keywords',
  'blocked_domains',
  'leads',
] as const;
export type CountedTable = (typeof COUNTED_TABLES)[number];

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
  // Raw SQL, one text per number of keys: `row_counts` is not in the query builder's schema.
  const { rows } = await db.executeQuery<{ key: K; n: number }>(
    CompiledQuery.raw(countersByKeySql(keys.length), [tbl, scope, ...keys]),
  );
  for (const row of rows) counts[row.key] = Number(row.n);
  return counts;
}

const countersSql: string[] = [];
const countersByKeySql = (n: number): string =>
  (countersSql[n] ??=
    `SELECT key, n FROM row_counts WHERE tbl = ? AND scope = ? AND key IN (${Array(n).fill('?').join(', ')})`);

/**
 * The sum of the counters `keys` of `scope` in `tbl`: the exact number of rows of `tbl` that
 * the filter those keys spell out admits.
 */
export async function countedTotal(
  db: Kysely<Database>,
  tbl: CountedTable,
  scope: string,
  keys: readonly string[],
): Promise<number> {
  const counts = await countedByKey(db, tbl, scope, keys);
  return Object.values<number>(counts).reduce((sum, n) => sum + n, NO_ROWS);
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

// ---- bulk loads ---------------------------------------------------------------------------------

/** The migration that creates `row_counts` and backfills it (sql/0003_row_counts.sql). */
const ROW_COUNTS_MIGRATION = 3;

let backfill: Record<CountedTable, string> | undefined;

/**
 * The backfill statements of sql/0003_row_counts.sql, by counted table: the one definition of
 * how a table's counters follow from its rows. The recount of a bulk import runs these very
 * statements, read from the migration (embedded in the executable like every migration); the
 * migration is frozen once shipped, so the two cannot drift apart.
 * @throws Error when the migration has no backfill statement for a counted table.
 */
export function backfillStatements(): Readonly<Record<CountedTable, string>> {
  if (backfill) return backfill;
  const migration = loadMigrations().find((m) => m.version === ROW_COUNTS_MIGRATION);
  const section = (migration?.sql.split(/^-- ---- backfill.*$/m)[1]?.split(/^-- ---- triggers.*$/m)[0] ?? '').replace(
    /--.*$/gm,
    '',
  );
  const byTable = new Map<string, string[]>();
  for (const statement of section
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const tbl = /^INSERT INTO row_counts \(tbl, scope, key, n\)\s+SELECT '(\w+)'/.exec(statement)?.[1];
    if (!tbl) throw new Error(`sql/0003_row_counts.sql: not a backfill statement: ${statement.slice(0, 60)}`);
    byTable.set(tbl, [...(byTable.get(tbl) ?? []), `${statement};`]);
  }
  const missing = COUNTED_TABLES.filter((tbl) => !byTable.has(tbl));
  if (missing.length > 0) throw new Error(`sql/0003_row_counts.sql has no backfill for ${missing.join(', ')}`);
  backfill = Object.fromEntries(COUNTED_TABLES.map((tbl) => [tbl, byTable.get(tbl)!.join('\n')])) as Record<
    CountedTable,
    string
  >;
  return backfill;
}

/**
 * Rebuilds every counter of `tbl` from its rows with the migration's backfill statements (a walk
 * of one covering index per scope kind: about 0.25 µs a row, against some 6 µs a row for the
 * triggers' upserts).
 */
export function recountTable(sqlite: SqliteHandle, tbl: CountedTable): void {
  sqlite.prepare('DELETE FROM row_counts WHERE tbl = ?').run(tbl);
  sqlite.exec(backfillStatements()[tbl]);
}

/**
 * Stops counting `tables` for the rest of the current transaction, for a bulk load: drops their
 * counting triggers (`<table>_count_insert|delete|update`). A table with a trigger pays for a
 * statement journal on every write, even when the trigger does nothing, so only dropping them
 * makes a bulk load as fast as it was without counters.
 *
 * Exact and safe because DDL is transactional in SQLite: call it inside a write transaction,
 * then call the returned `resume` before that transaction commits. `resume` recounts each table
 * from its rows and recreates the triggers from their stored SQL. A rollback (a refused import)
 * brings the triggers back untouched. No other connection can write meanwhile (SQLite has one
 * writer), and readers keep seeing the last committed schema and counters until the commit.
 */
export function pauseRowCounts(sqlite: SqliteHandle, tables: readonly CountedTable[]): () => void {
  if (tables.length === 0) return () => {};
  const triggers = sqlite
    .prepare(
      `SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN (${tables.map(() => '?').join(', ')})
       AND name IN (${tables.map(() => '?, ?, ?').join(', ')}) ORDER BY name`,
    )
    .all(...tables, ...tables.flatMap((t) => [`${t}_count_insert`, `${t}_count_delete`, `${t}_count_update`])) as {
    name: string;
    sql: string;
  }[];
  for (const { name } of triggers) sqlite.exec(`DROP TRIGGER "${name}"`);
  return () => {
    for (const tbl of tables) recountTable(sqlite, tbl);
    for (const trigger of triggers) sqlite.exec(trigger.sql);
  };
}
