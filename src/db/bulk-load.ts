/**
 * What a bulk load (the import) asks of the store: insert-or-replace by id, for records whose ids
 * may already be stored, and the row counters paused while it writes (`pauseRowCounts`).
 *
 * Insert-or-replace by id is where the two stores differ in how that is fastest and safe.
 *
 * Never `INSERT OR REPLACE` (nor DELETE and INSERT): that deletes the old row, and with it
 * (ON DELETE CASCADE) every record below it. An existing row is updated in place instead.
 * - SQLite: a plain INSERT is the fastest way in while ids are new (the usual case: a first
 *   import); after the first clash with an existing id the table switches to
 *   `INSERT … ON CONFLICT (id) DO NOTHING` followed, for an existing id, by an UPDATE of every
 *   column.
 * - PostgreSQL: `INSERT … ON CONFLICT (id) DO NOTHING` from the first row, since a failed
 *   statement would abort the whole transaction.
 */
import type { InsertObject, Kysely, UpdateObject } from 'kysely';
import { type ParamOf, precompiledQuery } from './compiled.js';
import type { CountedTable } from './row-counters.js';
import type { Database } from './schema.js';
import { piecesOf } from './store.js';

/** Tables with a text `id` primary key. */
type TableWithId = {
  [T in keyof Database]: Database[T] extends { id: string } ? T : never;
}[keyof Database];

/** A primary-key clash, as better-sqlite3 and node:sqlite report it. */
const isIdConflict = (error: unknown) =>
  (error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
  /UNIQUE constraint failed: \w+\.id$/.test((error as Error).message ?? '');

/** `table:col1,col2,…` → the table and its columns. */
const shapeOf = (shape: string): [TableWithId, string[]] => {
  const [table, columns] = shape.split(':') as [TableWithId, string];
  return [table, columns.split(',')];
};
const valuesOf = (columns: readonly string[], param: ParamOf<string>) =>
  Object.fromEntries(columns.map((column) => [column, param(column)]));

/** The statements of one table's writes, by table and columns (the shape), each compiled once per dialect. */
const insert = precompiledQuery<string, unknown, string>((db, param, shape) => {
  const [table, columns] = shapeOf(shape);
  return db.insertInto(table).values(valuesOf(columns, param) as InsertObject<Database, TableWithId>);
});
const insertNew = precompiledQuery<string, unknown, string>((db, param, shape) => {
  const [table, columns] = shapeOf(shape);
  return db
    .insertInto(table)
    .values(valuesOf(columns, param) as InsertObject<Database, TableWithId>)
    .onConflict((oc) => oc.column('id').doNothing());
});
const update = precompiledQuery<string, unknown, string>((db, param, shape) => {
  const [table, columns] = shapeOf(shape);
  return db
    .updateTable(table)
    .set(valuesOf(columns.slice(1), param) as UpdateObject<Database, TableWithId>)
    .where('id', '=', param('id'));
});

/**
 * Writes rows of one table in a transaction, inserting each or replacing the row with its id (see
 * the module comment). Every row names the same columns, `id` first, in the order of the first
 * row's keys.
 */
export class UpsertById {
  private readonly shape: string;
  private clashed: boolean;

  /** @throws Error when `first` does not name its `id` first. */
  constructor(
    private readonly trx: Kysely<Database>,
    table: keyof Database,
    first: Record<string, unknown>,
  ) {
    const columns = Object.keys(first);
    if (columns[0] !== 'id') throw new Error(`a row of ${table} must name its id first`);
    this.shape = `${table}:${columns.join(',')}`;
    this.clashed = piecesOf(trx).failedStatementAbortsTransaction;
  }

  /**
   * Inserts `row`, or replaces the stored row with its id.
   * @returns true when a row with this id existed and was replaced.
   * @throws what the database throws (a constraint other than the id's).
   */
  async write(row: Record<string, unknown>): Promise<boolean> {
    if (!this.clashed) {
      try {
        await insert.run(this.trx, row, this.shape);
        return false;
      } catch (error) {
        if (!isIdConflict(error)) throw error;
        this.clashed = true;
      }
    }
    if ((await insertNew.run(this.trx, row, this.shape)) > 0) return false;
    await update.run(this.trx, row, this.shape);
    return true;
  }
}

/**
 * Stops counting `tables` for the rest of the current transaction `trx`, for a bulk load, and
 * resolves with `resume`, to call before that transaction commits: it recounts each table from
 * its rows and counts on. A rollback (a refused import) undoes both. Call it with a write
 * transaction (`inTransaction`).
 *
 * - SQLite: drops their counting triggers, then recounts with the migration's backfill
 *   statements and recreates them (./sqlite/row-counters.ts).
 * - PostgreSQL: `pause_row_counts` and `resume_row_counts` of sql/postgres/0003_row_counts.sql
 *   (the tables locked against other writers until the commit; their search indexes' entries
 *   merged at the resume).
 * @throws Error when `trx` belongs to no open store.
 */
export async function pauseRowCounts(
  trx: Kysely<Database>,
  tables: readonly CountedTable[],
): Promise<() => Promise<void>> {
  if (tables.length === 0) return async () => {};
  return piecesOf(trx).pauseRowCounts(trx, tables);
}
