/**
 * How the import writes rows: named rows typed from the table interfaces of `src/db/schema.ts`,
 * inserted or replaced by id through statements compiled once per table.
 *
 * A row names every column of its table (`Row<T>`: kysely's `Insertable`, with the nullable
 * columns required too), so the compiler refuses a row that misses a column or names one the
 * table lacks; the statements' column lists are the rows' own keys, so nothing is kept in step
 * by hand. `ImportContext` is one import's state over them: the parents seen, the writer, the
 * child rows counted.
 */
import type { Insertable, Kysely } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import { UpsertById } from '../db/bulk-load.js';
import { Parents } from './rules.js';
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
export type ImportTable = Exclude<
  keyof Database,
  'api_tokens' | 'idempotency_keys' | 'prospects_fts' | 'leads_fts' | 'row_counts'
>;

/** One row of `T`, every column named (null for an empty nullable one). */
export type Row<T extends ImportTable> = Required<Insertable<Database[T]>>;

export const bool = (value: boolean): SqlBool => (value ? 1 : 0);
/** A JSON column's text. */
export const json = (value: unknown): string => JSON.stringify(value);

const deleteChildren = precompiledQuery<'parentId', unknown, ChildTable>((db, param, table) =>
  db.deleteFrom(table).where(CHILDREN[table], '=', param('parentId')),
);

/** The row writers of one import (in its transaction), one per table, and the deletes of replaced records' children. */
export class RowWriter {
  private readonly writers = new Map<ImportTable, UpsertById>();

  constructor(private readonly trx: Kysely<Database>) {}

  /**
   * Inserts `row` into `table`, or replaces the row with its id.
   * @returns true when a row with this id existed and was replaced.
   */
  write<T extends ImportTable>(table: T, row: Row<T>): Promise<boolean> {
    let writer = this.writers.get(table);
    if (!writer) this.writers.set(table, (writer = new UpsertById(this.trx, table, row)));
    return writer.write(row);
  }

  /** Deletes the child rows of a replaced parent, which is about to be given the document's. */
  async clearChildren(table: ChildTable, parentId: string): Promise<void> {
    await deleteChildren.run(this.trx, { parentId }, table);
  }
}

/**
 * State of one import: the parents seen so far (`parents`), the row writers with their prepared
 * statements (made once, reused for every row) and the child rows written.
 */
export class ImportContext {
  readonly parents: Parents;
  private readonly rows: RowWriter;
  /** Child rows written, by child collection (`backlinkChecks`, …). */
  readonly childCounts: Record<string, number> = {};

  constructor(
    /** The import's transaction. */
    readonly trx: Kysely<Database>,
    /** The import time (ISO, UTC): default `createdAt`, token activity. */
    readonly nowIso: string,
  ) {
    this.parents = new Parents(trx);
    this.rows = new RowWriter(trx);
  }

  /** @returns true when a row with this id existed and was replaced. */
  write<T extends ImportTable>(table: T, row: Row<T>): Promise<boolean> {
    return this.rows.write(table, row);
  }

  /**
   * Writes the child rows of a record written as `replaced` (see `write`): a replaced record's
   * old children go first. Counts them under `name` in the summary.
   */
  async writeChildren<T extends ChildTable>(
    name: string,
    table: T,
    parentId: string,
    replaced: boolean,
    rows: readonly Row<T>[],
  ): Promise<void> {
    if (replaced) await this.rows.clearChildren(table, parentId);
    for (const row of rows) await this.rows.write(table, row);
    if (rows.length > 0) this.childCounts[name] = (this.childCounts[name] ?? 0) + rows.length;
  }
}
