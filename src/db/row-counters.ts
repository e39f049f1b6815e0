/**
 * The row counters of `row_counts` (sql/sqlite/0003_row_counts.sql), as the store keeps them: the
 * counted tables, the statements that rebuild a table's counters from its rows, and the pause of
 * the counting triggers during a bulk load. Reading the counters is `src/repos/row-counts.ts`'s.
 */
import { type Kysely, sql } from 'kysely';
import { loadMigrations } from './migrate.js';
import type { Database } from './schema.js';
import type { SqliteHandle } from './sqlite/handle.js';
import { dialectOf, sqliteOf } from './store.js';

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

/** The migration that creates `row_counts` and backfills it (sql/sqlite/0003_row_counts.sql). */
const ROW_COUNTS_MIGRATION = 3;

let backfill: Record<CountedTable, string> | undefined;

/**
 * The backfill statements of sql/sqlite/0003_row_counts.sql, by counted table: the one definition of
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
    if (!tbl) throw new Error(`sql/sqlite/0003_row_counts.sql: not a backfill statement: ${statement.slice(0, 60)}`);
    byTable.set(tbl, [...(byTable.get(tbl) ?? []), `${statement};`]);
  }
  const missing = COUNTED_TABLES.filter((tbl) => !byTable.has(tbl));
  if (missing.length > 0) throw new Error(`sql/sqlite/0003_row_counts.sql has no backfill for ${missing.join(', ')}`);
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
function recountTable(sqlite: SqliteHandle, tbl: CountedTable): void {
  sqlite.prepare('DELETE FROM row_counts WHERE tbl = ?').run(tbl);
  sqlite.exec(backfillStatements()[tbl]);
}

/**
 * Stops counting `tables` for the rest of the current transaction `trx`, for a bulk load, and
 * resolves with `resume`, to call before that transaction commits: it recounts each table from
 * its rows and counts on. A rollback (a refused import) undoes both.
 *
 * PostgreSQL: `pause_row_counts` and `resume_row_counts` of sql/postgres/0003_row_counts.sql
 * (the tables locked against other writers until the commit; their search indexes' entries
 * merged at the resume).
 *
 * SQLite: drops their counting triggers (`<table>_count_insert|delete|update`). A table with a trigger pays for a
 * statement journal on every write, even when the trigger does nothing, so only dropping them
 * makes a bulk load as fast as it was without counters.
 *
 * Exact and safe because DDL is transactional in SQLite: call it with a write transaction
 * (`inTransaction`), then call the returned `resume` before that transaction commits. `resume` recounts each table
 * from its rows and recreates the triggers from their stored SQL. A rollback (a refused import)
 * brings the triggers back untouched. No other connection can write meanwhile (SQLite has one
 * writer), and readers keep seeing the last committed schema and counters until the commit.
 */
export async function pauseRowCounts(
  trx: Kysely<Database>,
  tables: readonly CountedTable[],
): Promise<() => Promise<void>> {
  if (tables.length === 0) return async () => {};
  if (dialectOf(trx) === 'postgres') {
    const list = sql`ARRAY[${sql.join([...tables])}]::text[]`;
    await sql`SELECT pause_row_counts(${list})`.execute(trx);
    return async () => {
      await sql`SELECT resume_row_counts(${list})`.execute(trx);
    };
  }
  const sqlite = sqliteOf(trx);
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
  return async () => {
    for (const tbl of tables) recountTable(sqlite, tbl);
    for (const trigger of triggers) sqlite.exec(trigger.sql);
  };
}
