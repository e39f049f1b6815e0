/**
 * SQL functions the store registers on every connection it opens (better-sqlite3 and the
 * `node:sqlite` adapter alike). SQLite-only, like FTS5 and the triggers: a second dialect would
 * replace this module and nothing above it.
 */
import type { SqliteHandle } from './sqlite-handle.js';

/**
 * The case folding of substring search (decisions.md §5): every character mapped to its Unicode
 * lower case on its own (no context rules), so `É`, `é` and `e`'s cousins fold as the trigram
 * tokenizer folds them for 3+ character terms. SQLite's own `lower()` folds ASCII only.
 */
export function foldCase(text: string): string {
  let out = '';
  for (const char of text) out += char.toLowerCase();
  return out;
}

/** Registers `fold(text)` (`foldCase`; NULL stays NULL) on `sqlite`. */
export function registerSqlFunctions(sqlite: SqliteHandle): void {
  sqlite.function('fold', { deterministic: true }, (value: unknown) =>
    value === null || value === undefined ? null : foldCase(String(value)),
  );
}
