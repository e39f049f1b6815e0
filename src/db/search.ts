/**
 * Case-insensitive substring search (decisions.md §5, §16), as each store says it: the one piece
 * of a search condition that differs between the dialects. Every script folds case the same way
 * on both (`foldCase`, SQLite's `fold()`, PostgreSQL's `fold()` of sql/postgres/0001_init.sql),
 * for terms of any length.
 *
 * - SQLite: a term of 3+ characters is a rowid set from the table's FTS5 trigram index (which
 *   holds only the searchable text); a 1–2 character one, too short for trigrams, tests each
 *   column with `instr(fold(column), folded term)`.
 * - PostgreSQL: every column test is `fold(column) LIKE '%' || fold(term) || '%'` (the term's
 *   `\`, `%` and `_` escaped), which the `pg_trgm` GIN index over those `fold()` expressions
 *   serves for 3+ character terms.
 */
import { type Expression, type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Database } from './schema.js';
import { foldCase } from './sql-functions.js';
import { dialectOf } from './store.js';

/** Shortest term a trigram index can answer; shorter terms test every row of the scope. */
const TRIGRAM_MIN_CHARS = 3;

/** `term` as one FTS5 phrase: in double quotes, inner quotes doubled, so nothing in it is syntax. */
const ftsPhrase = (term: string) => `"${term.replaceAll('"', '""')}"`;

/** `term` as a LIKE pattern's literal part: `\`, `%` and `_` escaped by a backslash (LIKE's default escape). */
const escapeLike = (term: string) => term.replace(/[\\%_]/g, '\\$&');

/** A test of one column for the term: whether the folded column contains the folded term. */
export type Contains = (column: string) => RawBuilder<SqlBool>;

/** A searchable table and its SQLite FTS5 index (a rowid set of the rows whose searchable text holds a trigram phrase). */
export interface SearchIndex {
  table: 'prospects' | 'leads';
  fts: 'prospects_fts' | 'leads_fts';
}

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
  if (dialectOf(db) === 'postgres') {
    const literal = escapeLike(term);
    return condition((column) => sql<SqlBool>`fold(${sql.ref(column)}) LIKE ('%' || fold(${literal}::text) || '%')`);
  }
  if ([...term].length >= TRIGRAM_MIN_CHARS)
    return sql<SqlBool>`${sql.ref(`${index.table}.rowid`)} IN (SELECT rowid FROM ${sql.table(index.fts)} WHERE ${sql.table(index.fts)} MATCH ${ftsPhrase(term)})`;
  const folded = foldCase(term);
  return condition((column) => sql<SqlBool>`instr(fold(${sql.ref(column)}), ${folded}) > 0`);
}
