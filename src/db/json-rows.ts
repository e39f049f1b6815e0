/**
 * Rows as JSON text, written by the store itself (issue #32): a list page's items are the JSON
 * objects of its rows, each made by the statement that reads the row (`jsonObject`), so no row
 * becomes a JavaScript object on the way out: no JavaScript value for every column of every row
 * (better-sqlite3's and `pg`'s), no mapping, no second serialization. On SQLite a backlinks page
 * of 25 costs the server 0.52–0.72 of the CPU it did (docs/performance.md "Rows as JSON text").
 * The objects are the bytes `JSON.stringify` gives for the same members in the same order
 * (test/store/json-rows.test.ts).
 */
import type { Kysely, RawBuilder } from 'kysely';
import type { JsonMembers } from './dialect.js';
import type { Database } from './schema.js';
import { piecesOf } from './store.js';

export type { JsonMembers } from './dialect.js';

/**
 * The JSON text of an object of `members` (each a name and the column whose value it holds, in
 * order) over the current row of a query on `db`'s store: compact, strings escaped as
 * `JSON.stringify` escapes them, SQL NULL as `null`. For text columns (a 0/1 flag would stay a
 * number, not become a boolean: map such a record in JavaScript).
 * @throws Error when `db` belongs to no open store.
 */
export const jsonObject = (db: Kysely<Database>, members: JsonMembers): RawBuilder<string> =>
  piecesOf(db).jsonObject(members);
