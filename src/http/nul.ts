/**
 * The NUL character (U+0000) in a request, refused on every surface and every store (issue #28
 * item 5; why: `NUL_MESSAGE` in src/domain/text.ts). The API refuses it in its validation step
 * (`validationHook`, src/http/validation.ts: 422 `VALIDATION_ERROR`, one detail per field,
 * decisions.md §3 step 4 and §4); the settings area in its pipeline (path and query) and its
 * form reader (400 pages, src/web/).
 */
import { nulPaths as nulPathsOf } from '../domain/text.js';

export { NUL_MESSAGE } from '../domain/text.js';

/**
 * The dotted paths (`query.search`, `body.items.0.name`) of every string in `value` that holds
 * U+0000, object keys included, each under `base`. `value` is validated input: plain JSON-like
 * data, walked to any depth.
 */
export const nulPaths = (value: unknown, base: string): string[] =>
  nulPathsOf(value).map((path) => [base, ...path].join('.'));
