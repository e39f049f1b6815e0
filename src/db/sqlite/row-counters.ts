/**
 * SQLite's side of the row counters (sql/sqlite/0003_row_counts.sql): the statements that rebuild
 * a table's counters from its rows, read from the migration, and the pause of the counting
 * triggers during a bulk load (`pauseRowCounts` of ../bulk-load.ts on SQLite).
 */
import type { Kysely } from 'kysely';
import { loadMigrations } from '../migrate.js';
import { COUNTED_TABLES, type CountedTable } from '../row-counters.js';
import type { Database } from '../schema.js';
import { sqliteOf } from '../store.js';
import type { SqliteHandle } from './handle.js';

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
  const migration = loadMigrations('sqlite').find((m) => m.version === ROW_COUNTS_MIGRATION);
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
 * Drops the counting triggers of `tables` (`<table>_count_insert|delete|update`) in the write
 * transaction `trx`, and resolves with the resume: it recounts each table from its rows and
 * recreates the triggers from their stored SQL. A table with a trigger pays for a statement
 * journal on every write, even when the trigger does nothing, so only dropping them makes a bulk
 * load as fast as it was without counters.
 *
 * Exact and safe because DDL is transactional in SQLite: a rollback (a refused import) brings the
 * triggers back untouched. No other connection can write meanwhile (SQLite has one writer), and
 * readers keep seeing the last committed schema and counters until the commit.
 */
export async function pauseCountingTriggers(
  trx: Kysely<Database>,
  tables: readonly CountedTable[],
): Promise<() => Promise<void>> {
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
