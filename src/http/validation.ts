/**
 * The validation step of the request pipeline (decisions.md §3 step 4), the `defaultHook` of every
 * OpenAPIHono app that validates a request against its route's schemas: the public API's
 * (./app.ts) and the fixture's admin API (src/fixture/).
 */
import type { Hook } from '@hono/zod-openapi';
import { validationError } from '../domain/errors.js';
import type { AppEnv } from './context.js';
import { NUL_MESSAGE, nulPaths } from './nul.js';

/** The envelope's name of each part of a request zod-openapi validates. */
const TARGET_NAMES: Record<string, string> = { json: 'body', param: 'path', query: 'query', header: 'header' };

/**
 * decisions.md §4: a request that fails its route's schemas is 422 VALIDATION_ERROR with one
 * `{ path, message }` per problem; so is one whose validated path, query, headers or body hold a
 * NUL character anywhere (`nulPaths`: no store may be given one, issue #28).
 * @throws DomainError `VALIDATION_ERROR` with the details.
 */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  const target = TARGET_NAMES[result.target] ?? result.target;
  if (result.success) {
    const found = nulPaths(result.data, target);
    if (found.length > 0) throw validationError(found.map((path) => ({ path, message: NUL_MESSAGE })));
    return;
  }
  throw validationError(
    result.error.issues.map((issue) => ({
      path: [target, ...issue.path.map(String)].join('.'),
      message: issue.message,
    })),
  );
};
