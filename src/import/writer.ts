/**
 * How the import writes rows: named rows typed from the table interfaces of `src/db/schema.ts`,
 * inserted or replaced by id through statements prepared once per import.
 *
 * A row names every column of its table (`Row<T>`: kysely's `Insertable`, with the nullable
 * columns required too), so the compiler refuses a row that misses a column or names one the
 * table lacks; the statements' column lists are the rows' own keys, so nothing is kept in step
 * by hand.
 */
import type { Insertable } from 'kysely';
import type { Store } from '../db/connection.js';
import type { SqliteStatement } from '../db/sqlite-handle.js';
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

/**
 * Writes rows of one table, inserting or replacing by id. A plain INSERT is the fastest way in
 * while ids are new (the usual case: a first import); after the first clash with an existing id
 * the table switches to `INSERT … ON CONFLICT (id) DO NOTHING` followed, for an existing id, by
 * an UPDATE of every column. Never `INSERT OR REPLACE`: that deletes the old row, and with it
 * (ON DELETE CASCADE) every record below it.
 *
 * Values are bound by position, in the order of the first row's keys (binding by name costs a
 * string per column and row in better-sqlite3).
 */
class TableWriter<T extends ImportTable> {
  private readonly columns: readonly (keyof Row<T> & string)[];
  private insert: SqliteStatement;
  private update: SqliteStatement | undefined;
  private clashed = false;

  constructor(
    private readonly sqlite: Store['sqlite'],
    private readonly table: T,
    first: Row<T>,
  ) {
    this.columns = Object.keys(first) as (keyof Row<T> & string)[];
    if (this.columns[0] !== 'id') throw new Error(`import: a row of ${table} must name its id first`);
    this.insert = sqlite.prepare(this.insertSql(''));
  }

  private insertSql(onConflict: string): string {
    return `INSERT INTO ${this.table} (${this.columns.join(', ')}) VALUES (${this.columns.map(() => '?').join(', ')})${onConflict}`;
  }

  /** @returns true when a row with this id existed and was replaced. */
  write(row: Row<T>): boolean {
    const values = this.columns.map((column) => row[column]);
    if (!this.clashed) {
      try {
        this.insert.run(values);
        return false;
      } catch (error) {
        if (!isIdConflict(error)) throw error;
        this.clashed = true;
        this.insert = this.sqlite.prepare(this.insertSql(' ON CONFLICT (id) DO NOTHING'));
      }
    }
    if (Number(this.insert.run(values).changes) > 0) return false;
    this.update ??= this.sqlite.prepare(
      `UPDATE ${this.table} SET ${this.columns
        .slice(1)
        .map((c) => `${c} = ?`)
        .join(', ')} WHERE id = ?`,
    );
    this.update.run([...values.slice(1), values[0]]);
    return true;
  }
}

/** The row writers of one import, one per table, and the deletes of replaced records' children. */
export class RowWriter {
  private readonly writers = new Map<ImportTable, TableWriter<ImportTable>>();
  private readonly deletes = new Map<ChildTable, SqliteStatement>();

  constructor(private readonly sqlite: Store['sqlite']) {}

  /**
   * Inserts `row` into `table`, or replaces the row with its id.
   * @returns true when a row with this id existed and was replaced.
   */
  write<T extends ImportTable>(table: T, row: Row<T>): boolean {
    let writer = this.writers.get(table) as TableWriter<T> | undefined;
    if (!writer)
      this.writers.set(
        table,
        (writer = new TableWriter(this.sqlite, table, row)) as unknown as TableWriter<ImportTable>,
      );
    return writer.write(row);
  }

  /** Deletes the child rows of a replaced parent, which is about to be given the document's. */
  clearChildren(table: ChildTable, parentId: string): void {
    let stmt = this.deletes.get(table);
    if (!stmt)
      this.deletes.set(table, (stmt = this.sqlite.prepare(`DELETE FROM ${table} WHERE ${CHILDREN[table]} = ?`)));
    stmt.run(parentId);
  }
}
