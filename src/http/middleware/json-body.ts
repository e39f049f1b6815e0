/**
 * Body rules of write operations (decisions.md §4), run after the scope check and before the
 * request is validated: a body that is not `application/json` is 415 `UNSUPPORTED_MEDIA_TYPE`,
 * one over `limits.maxBodyBytes` is 413 `PAYLOAD_TOO_LARGE` (checked on Content-Length and,
 * when chunked, while reading). Malformed JSON is the validator's: 422 with path `body`.
 *
 * After a 413 the connection stays usable (decisions.md §4): the rest of the oversized body, up
 * to `DISCARD_LIMIT_BYTES`, is read and thrown away before the answer, so a client still
 * sending it reads the 413 instead of a reset, and its next request on the same connection
 * works. A body larger than that is not read: the 413 then says `Connection: close`.
 * (Hono's `bodyLimit` stops reading at the limit, which is why this is written out here.)
 */
import type { MiddlewareHandler } from 'hono';
import type { Scope } from '../../domain/scopes.js';
import type { AppEnv } from '../context.js';
import { ApiError } from '../errors.js';
import { readRequestBody } from '../request-body.js';
import { requireScope } from './scope.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

const tooLargeError = (maxBytes: number, ended: boolean) =>
  new ApiError(
    'PAYLOAD_TOO_LARGE',
    `The request body is larger than ${maxBytes} bytes`,
    undefined,
    ended ? undefined : { Connection: 'close' },
  );

export function jsonBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const contentType = c.req.header('content-type');
    if (contentType !== undefined && !JSON_MEDIA_TYPE.test(contentType.split(';')[0]!.trim())) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json');
    }
    // Read already (the fixture reads a body before the request enters its gate): its outcome.
    const early = c.get('bufferedBody');
    if (early) {
      if (early.kind === 'tooLarge') throw tooLargeError(maxBytes, early.ended);
      return next();
    }
    if (!c.req.raw.body) return next();
    const declared = c.req.raw.headers.has('transfer-encoding') ? null : c.req.header('content-length');
    // Within the limit by its Content-Length: the validator reads it.
    if (declared != null && Number(declared) <= maxBytes) return next();
    // Over it, or of unknown length (chunked): read it here, up to the limit, and hand it on.
    const read = await readRequestBody(c.req.raw, maxBytes);
    if (read?.kind === 'tooLarge') throw tooLargeError(maxBytes, read.ended);
    if (read) c.req.raw = new Request(c.req.raw, { body: read.bytes });
    return next();
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
