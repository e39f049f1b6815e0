/**
 * Body rules of write operations (decisions.md §4), run after the scope check and before the
 * request is validated: a body that is not `application/json` is 415 `UNSUPPORTED_MEDIA_TYPE`,
 * one over `limits.maxBodyBytes` is 413 `PAYLOAD_TOO_LARGE` (checked on Content-Length and,
 * when chunked, while reading). Malformed JSON is the validator's: 422 with path `body`.
 */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Scope } from '../../domain/scopes.js';
import type { AppEnv } from '../context.js';
import { ApiError } from '../errors.js';
import { requireScope } from './scope.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

export function jsonBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${maxBytes} bytes`);
    },
  });
  return async (c, next) => {
    const contentType = c.req.header('content-type');
    if (contentType !== undefined && !JSON_MEDIA_TYPE.test(contentType.split(';')[0]!.trim())) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json');
    }
    return limit(c, next);
  };
}

/**
 * The access part of a write route's definition: scope, then body rules, and the
 * `x-required-scope` extension the shared access tests read.
 * Spread into `createRoute({ ...writeAccess('outreach:write', config.limits.maxBodyBytes), ... })`.
 */
export const writeAccess = (scope: Scope, maxBodyBytes: number) => ({
  middleware: [requireScope(scope), jsonBody(maxBodyBytes)],
  'x-required-scope': scope,
});
