/**
 * Rows as JSON text, written by the store itself (issue #32): a list page's items are the JSON
 * objects of its rows, made by the statement that reads them (`jsonRows`), so no row becomes a
 * JavaScript object on the way out: no JavaScript value for every column of every row
 * (better-sqlite3's and `pg`'s), no mapping, no second serialization (docs/performance.md "Rows as
 * JSON text"). The objects are the bytes `JSON.stringify` gives for the same members in the same
 * order (test/store/json-rows.test.ts).
 */
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { JsonMembers } from './dialect.js';
import type { Database } from './schema.js';
import { piecesOf } from './store.js';

export type { JsonMembers } from './dialect.js';

/**
 * A query's rows as JSON texts, one `{ item }` per row, in `rows`'s order: `rows` selects the
 * page (its filter, order, LIMIT and OFFSET) and `members` (each a name and the column whose value
 * it holds, in order) name the objects' members. Made compact, strings escaped as
 * `JSON.stringify` escapes them, SQL NULL as `null`. The JSON is made in an outer query over the
 * page, so only the page's rows are written, never the OFFSET's (PostgreSQL computes a row's
 * select list before LIMIT drops it). `orderBy` repeats the page's order by member names (the
 * stores read it off the inner query: no second sort). For text columns (a 0/1 flag would stay a
 * number, not become a boolean: map such a record in JavaScript).
 * @throws Error when `db` belongs to no open store.
 */
export function jsonRows<C extends string>(
  db: Kysely<Database>,
  rows: SelectQueryBuilder<Database, never, object>,
  members: JsonMembers<C>,
  orderBy: readonly (readonly [name: string, direction: 'asc' | 'desc'])[],
) {
  const names = members.map(([name]) => name);
  const page = rows.select(members.map(([name, column]) => sql.ref(column).as(name)));
  return db
    .selectFrom(page.as('page'))
    .select(piecesOf(db).jsonObject({ alias: 'page', names }).as('item'))
    .orderBy(orderBy.map(([name, direction]) => sql`${sql.ref(`page.${name}`)} ${sql.raw(direction)}`));
}
