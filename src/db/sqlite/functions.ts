/**
 * SQL functions the store registers on every connection it opens (better-sqlite3 and the
 * `node:sqlite` adapter alike). SQLite-only, like FTS5 and the triggers: a second dialect would
 * replace this module and nothing above it.
 */
import type { SqliteHandle } from './handle.js';

/**
 * The case folding of substring search (decisions.md §5): every character mapped to its Unicode
 * lower case on its own (no context rules), so `É`, `é` and `e`'s cousins fold as the trigram
 * tokenizer folds them for 3+ character terms. SQLite's own `lower()` folds ASCII only.
 *
 * The one context rule of the default lower-casing, the final sigma (Σ at a word's end → ς), is
 * taken out by mapping Σ to σ first; the whole string is then lower-cased at once, which is the
 * same as character by character for every other code point (test/store/search-folded.test.ts
 * checks each one) and about 20 times faster. PostgreSQL's `fold()` is written the same way.
 */
export function foldCase(text: string): string {
  return text.replaceAll('Σ', 'σ').toLowerCase();
}

/** Registers `fold(text)` (`foldCase`; NULL stays NULL) on `sqlite`. */
export function registerSqlFunctions(sqlite: SqliteHandle): void {
  sqlite.function('fold', { deterministic: true }, (value: unknown) =>
    value === null || value === undefined ? null : foldCase(String(value)),
  );
}
