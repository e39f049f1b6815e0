/**
 * The list shape three resources share: the rows of one scope (a project's blocked domains, a
 * site's keywords, a site's discovery jobs), newest `created_at` first, ties by `id` descending
 * (each table's `*_order` index walks it in that order), with the exact number of rows in the
 * scope from its row counter (sql/sqlite/0003_row_counts.sql).
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { countedTotal } from './row-counts.js';

/** Each table listed this way: the column that holds its scope, and the counter of a scope's rows. */
const SCOPE_OF = {
  blocked_domains: { column: 'project_id', counter: 'project' },
  keywords: { column: 'site_id', counter: 'site' },
  discovery_jobs: { column: 'site_id', counter: 'site' },
} as const;

type NewestFirstTable = keyof typeof SCOPE_OF;

/**
 * One page (`limit` rows from `offset`) of `table`'s rows in scope `scopeId` (a project id for
 * blocked domains, else a site id; already checked to be the caller's), newest first, and how
 * many rows the scope holds.
 */
export async function newestFirstPage<T extends NewestFirstTable>(
  db: Kysely<Database>,
  table: T,
  scopeId: string,
  limit: number,
  offset: number,
): Promise<{ rows: Selectable<Database[T]>[]; total: number }> {
  const { column, counter } = SCOPE_OF[table];
  // One statement for the three tables: the query builder cannot type a column of a table chosen
  // at run time, so the text is written here, with the table and column names from SCOPE_OF.
  const [{ rows }, total] = await Promise.all([
    sql<Selectable<Database[T]>>`SELECT * FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${scopeId}
      ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`.execute(db),
    countedTotal(db, table, scopeId, [counter]),
  ]);
  return { rows, total };
}
