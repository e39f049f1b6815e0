/**
 * Case-insensitive substring search (decisions.md §5, §16), as each store says it: the one piece
 * of a search condition that differs between the dialects, and how a search's statements run.
 * Every script folds case the same way on both (`foldCase`, SQLite's `fold()`, PostgreSQL's
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
import { type Compilable, type Expression, type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Database } from './schema.js';
import { foldCase } from './sqlite/functions.js';
import { dialectOf, longReaderOf } from './store.js';

/** Shortest term a trigram index can answer; shorter terms test every row of the scope. */
const TRIGRAM_MIN_CHARS = 3;

/** `term` as one FTS5 phrase: in double quotes, inner quotes doubled, so nothing in it is syntax. */
const ftsPhrase = (term: string) => `"${term.replaceAll('"', '""')}"`;

/** `term` as a LIKE pattern's literal part: `\`, `%` and `_` escaped by a backslash (LIKE's default escape). */
const escapeLike = (term: string) => term.replace(/[\\%_]/g, '\\$&');

/** A searched column of a table (its folded copy is `<column>_folded`). */
type SearchedColumn = 'title' | 'domain' | 'url' | 'description' | 'body' | 'author_handle' | 'evidence_quote';

/** A test of one column for the term: whether the folded column contains the folded term. */
export type Contains = (column: SearchedColumn) => RawBuilder<SqlBool>;

/** A searchable table and its SQLite FTS5 index (a rowid set of the rows whose searchable text holds a trigram phrase). */
export interface SearchIndex {
  table: 'prospects' | 'leads';
  fts: 'prospects_fts' | 'leads_fts';
}

/** The folded copy of `column`. */
const folded = (column: SearchedColumn) => sql.ref(`${column}_folded`);

/**
 * The WHERE condition of a search for `term` (non-empty) over `index.table` on `db`'s store.
 * `condition(contains)` spells out which columns match, and when (a lead's hidden text only when
 * it is not redacted); on SQLite a 3+ character term uses the FTS5 table instead, which holds
 * exactly that text.
 */
export function textSearch(
  db: Kysely<Database>,
  term: string,
  index: SearchIndex,
  condition: (contains: Contains) => Expression<SqlBool>,
): Expression<SqlBool> {
  const short = [...term].length < TRIGRAM_MIN_CHARS;
  if (dialectOf(db) === 'postgres') {
    if (short) return condition((column) => sql<SqlBool>`strpos(${folded(column)}, fold(${term}::text)) > 0`);
    const literal = escapeLike(term);
    return condition((column) => sql<SqlBool>`${folded(column)} LIKE ('%' || fold(${literal}::text) || '%')`);
  }
  if (!short)
    return sql<SqlBool>`${sql.ref(`${index.table}.rowid`)} IN (SELECT rowid FROM ${sql.table(index.fts)} WHERE ${sql.table(index.fts)} MATCH ${ftsPhrase(term)})`;
  const needle = foldCase(term);
  return condition((column) => sql<SqlBool>`instr(${folded(column)}, ${needle}) > 0`);
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
