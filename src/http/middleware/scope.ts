/**
 * Per-route scope requirement (contract §5.7, decisions.md §2 and §3 step 3). Runs before the
 * request is validated, so a token without the scope learns nothing about the input rules.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import type { Scope } from '../../domain/scopes.js';
import { ApiError } from '../errors.js';

export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!c.get('caller').scopes.has(scope))
      throw new ApiError('SCOPE_REQUIRED', `This operation requires the scope ${scope}`);
    await next();
  };
}

/**
 * The scope part of a read route's definition: the middleware, and the `x-required-scope`
 * extension that documents it in the OpenAPI document (and drives the shared access tests).
 * Spread into `createRoute({ ...withScope('sites:read'), ... })`.
 */
export const withScope = (scope: Scope) => ({ middleware: requireScope(scope), 'x-required-scope': scope });
