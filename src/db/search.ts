/**
 * Case-insensitive substring search (decisions.md §5, §16), as each store says it: the one piece
 * of a search condition that differs between the dialects, and how a search's statements run.
 * Every script folds case the same way on both (`foldCase` of ./sqlite/functions.ts, SQLite's `fold()`, PostgreSQL's
 * `fold()` of sql/postgres/0001_init.sql), for terms of any length, and every searched column has
 * a folded copy the store keeps (`<column>_folded`, sql/sqlite/0008_search_folded.sql and its
 * PostgreSQL twin), so no search folds a row: a search costs native string comparisons, never
 * JavaScript per row.
 *
 * - SQLite: a term of 3+ characters is a rowid set from the table's FTS5 trigram index (which
 *   holds only the searchable text); a 1–2 character one, too short for trigrams, tests each
 *   folded column with `instr(column_folded, folded term)`.
 * - PostgreSQL: a 3+ character term tests `column_folded LIKE '%' || fold(term) || '%'` (the
 *   term's `\`, `%` and `_` escaped), which the `pg_trgm` GIN index over the folded columns
 *   serves; a shorter one `strpos(column_folded, fold(term)) > 0`.
 *
 * A search's statements (its page and its count) go through `searchPage`: in one turn of the
 * store's share for searches (`./share.ts`), on SQLite on a reader thread, off the event loop
 * (`./sqlite/readers.ts`).
 */
import { type Compilable, type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { Contains, SearchedColumn, SearchIndex } from './dialect.js';
import type { Database } from './schema.js';
import { longReaderOf, piecesOf } from './store.js';

/** Shortest term a trigram index can answer; shorter terms test every row of the scope. */
export const TRIGRAM_MIN_CHARS = 3;

/** The folded copy of `column`. */
export const folded = (column: SearchedColumn) => sql.ref(`${column}_folded`);

/**
 * The WHERE condition of a search for `term` (non-empty) over `index.table` on `db`'s store, as
 * its dialect says it (`./sqlite/pieces.ts`, `./postgres/pieces.ts`).
 * `condition(contains)` spells out which columns match, and when (a lead's hidden text only when
 * it is not redacted); on SQLite a 3+ character term uses the FTS5 table instead, which holds
 * exactly that text.
 * @throws Error when `db` belongs to no open store.
 */
export function textSearch(
  db: Kysely<Database>,
  term: string,
  index: SearchIndex,
  condition: (contains: Contains) => Expression<SqlBool>,
): Expression<SqlBool> {
  return piecesOf(db).textSearch(term, index, condition);
}

/** Counts with a search's `SELECT count(*) AS n` query, in the search's turn. */
export type SearchCount = (query: Compilable<{ n: number }>) => Promise<number>;

/**
 * The rows of `page` and the total `total` gives (counting with the `SearchCount` it is handed,
 * or from a cache), for a search, whose statements may read every row of a project: run where
 * they hold up nothing else, in one turn of the store's share for searches (PostgreSQL: a few
 * connections of the pool; SQLite: a reader thread, off the event loop), the page first, then the
 * count. Inside a transaction they run on its connection, as any statement; on a SQLite store
 * without reader threads (`:memory:`), on its connection.
 * @throws ShareFullError (src/db/share.ts) when the turn did not come within `db.searchWaitMs`.
 */
export async function searchPage<R>(
  db: Kysely<Database>,
  page: Compilable<R>,
  total: (count: SearchCount) => Promise<number>,
): Promise<[R[], number]> {
  const nOf = (rows: unknown[]) => Number((rows[0] as { n?: unknown } | undefined)?.n ?? 0);
  const turn = longReaderOf(db);
  if (!turn) {
    const read = async (query: Compilable<unknown>) => (await db.executeQuery(query.compile())).rows;
    return Promise.all([read(page) as Promise<R[]>, total(async (query) => nOf(await read(query)))]);
  }
  return turn(async (read) => {
    const rows = (await read(page.compile())) as R[];
    return [rows, await total(async (query) => nOf(await read(query.compile())))];
  });
}
