/**
 * The NUL character (U+0000) in input, refused on every surface and every store (issue #28 item
 * 5). PostgreSQL cannot hold it in text (a statement given one fails), so a NUL that reached the
 * database answered 500 there and 200 on SQLite; no field of the contract has a use for it. The
 * API refuses it in its validation step (`validationHook`, src/http/validation.ts: 422
 * `VALIDATION_ERROR`, one detail per field, decisions.md §3 step 4 and §4); the settings area in
 * its pipeline (path and query) and its form reader (400 pages, src/web/).
 */

/** The message of each field refused for a NUL. */
export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * The dotted paths (`query.search`, `body.items.0.name`) of every string in `value` that holds
 * U+0000, object keys included, each under `base`. `value` is validated input: plain JSON-like
 * data (strings, numbers, booleans, null, arrays and objects), walked to any depth.
 */
export function nulPaths(value: unknown, base: string): string[] {
  if (typeof value === 'string') return value.includes('\u0000') ? [base] : [];
  if (typeof value !== 'object' || value === null) return [];
  const found: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    const path = `${base}.${key}`;
    if (key.includes('\u0000')) found.push(path);
    else found.push(...nulPaths(item, path));
  }
  return found;
}
