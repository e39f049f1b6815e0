/**
 * How the import writes rows: named rows typed from the table interfaces of `src/db/schema.ts`,
 * inserted or replaced by id through statements compiled once per table.
 *
 * A row names every column of its table (`Row<T>`: kysely's `Insertable`, with the nullable
 * columns required too), so the compiler refuses a row that misses a column or names one the
 * table lacks; the statements' column lists are the rows' own keys, so nothing is kept in step
 * by hand.
 */
import type { Insertable, Kysely } from 'kysely';
import { type ParamOf, precompiledQuery } from '../db/compiled.js';
import type { Database, SqlBool } from '../db/schema.js';

/** Child tables whose rows are replaced with their parent's: table → parent column. */
const CHILDREN = {
  draft_messages: 'draft_id',
  thread_messages: 'thread_id',
  discovery_queries: 'job_id',
  backlink_checks: 'backlink_id',
} as const;
export type ChildTable = keyof typeof CHILDREN;

/** The tables the import writes rows of (tokens go through `createToken`). */
export type ImportTable = Exclude<keyof Database, 'api_tokens' | 'idempotency_keys' | 'prospects_fts' | 'leads_fts'>;

/** One row of `T`, every column named (null for an empty nullable one). */
export type Row<T extends ImportTable> = Required<Insertable<Database[T]>>;

export const bool = (value: boolean): SqlBool => (value ? 1 : 0);
/** A JSON column's text. */
export const json = (value: unknown): string => JSON.stringify(value);

/** A primary-key clash, as better-sqlite3 and node:sqlite report it. */
const isIdConflict = (error: unknown) =>
  (error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
  /UNIQUE constraint failed: \w+\.id$/.test((error as Error).message ?? '');

/** The statements of one table's writes, by table and columns (the shape), each compiled once per dialect. */
const insertStatement = precompiledQuery<string, unknown, string>((db, param, shape) => {
  const [table, columns] = shapeOf(shape);
  return db.insertInto(table).values(valuesOf(columns, param));
});
const insertNewStatement = precompiledQuery<string, unknown, string>((db, param, shape) => {
  const [table, columns] = shapeOf(shape);
  return db
    .insertInto(table)
    .values(valuesOf(columns, param))
    .onConflict((oc) => oc.column('id').doNothing());
});
const updateStatement = precompiledQuery<string, unknown, string>((db, param, shape) => {
  const [table, columns] = shapeOf(shape);
  return db
    .updateTable(table)
    .set(valuesOf(columns.slice(1), param))
    .where('id', '=', param('id'));
});
const deleteChildren = precompiledQuery<'parentId', unknown, ChildTable>((db, param, table) =>
  db.deleteFrom(table).where(CHILDREN[table], '=', param('parentId')),
);

/** `table:col1,col2,…` → the table and its columns. */
const shapeOf = (shape: string): [ImportTable, string[]] => {
  const [table, columns] = shape.split(':') as [ImportTable, string];
  return [table, columns.split(',')];
};
const valuesOf = (columns: readonly string[], param: ParamOf<string>) =>
  Object.fromEntries(columns.map((column) => [column, param(column)]));

/**
 * Writes rows of one table, inserting or replacing by id. A plain INSERT is the fastest way in
 * while ids are new (the usual case: a first import); after the first clash with an existing id
 * the table switches to `INSERT … ON CONFLICT (id) DO NOTHING` followed, for an existing id, by
 * an UPDATE of every column. Never `INSERT OR REPLACE`: that deletes the old row, and with it
 * (ON DELETE CASCADE) every record below it.
 *
 * Every row of a table names the same columns, in the order of the first row's keys.
 */
class TableWriter<T extends ImportTable> {
  private readonly shape: string;
  private clashed = false;

  constructor(table: T, first: Row<T>) {
    const columns = Object.keys(first);
    if (columns[0] !== 'id') throw new Error(`import: a row of ${table} must name its id first`);
    this.shape = `${table}:${columns.join(',')}`;
  }

  /** @returns true when a row with this id existed and was replaced. */
  async write(db: Kysely<Database>, row: Row<T>): Promise<boolean> {
    const values = row as Record<string, unknown>;
    if (!this.clashed) {
      try {
        await insertStatement.run(db, values, this.shape);
        return false;
      } catch (error) {
        if (!isIdConflict(error)) throw error;
        this.clashed = true;
      }
    }
    if ((await insertNewStatement.run(db, values, this.shape)) > 0) return false;
    await updateStatement.run(db, values, this.shape);
    return true;
  }
}

/** The row writers of one import (in its transaction), one per table, and the deletes of replaced records' children. */
export class RowWriter {
  private readonly writers = new Map<ImportTable, TableWriter<ImportTable>>();

  constructor(private readonly trx: Kysely<Database>) {}

  /**
   * Inserts `row` into `table`, or replaces the row with its id.
   * @returns true when a row with this id existed and was replaced.
   */
  write<T extends ImportTable>(table: T, row: Row<T>): Promise<boolean> {
    let writer = this.writers.get(table) as TableWriter<T> | undefined;
    if (!writer) this.writers.set(table, (writer = new TableWriter(table, row)) as unknown as TableWriter<ImportTable>);
    return writer.write(this.trx, row);
  }

  /** Deletes the child rows of a replaced parent, which is about to be given the document's. */
  async clearChildren(table: ChildTable, parentId: string): Promise<void> {
    await deleteChildren.run(this.trx, { parentId }, table);
  }
}
