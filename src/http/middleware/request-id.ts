/**
 * Request ids (decisions.md §3): the caller's `X-Request-Id` when it is a short token of word
 * characters, `-` and `=`, else a new UUID; set as the `requestId` variable and sent back in
 * `X-Request-Id` on every response. Hono's `requestId` middleware does the same through
 * `c.header()`, which costs a `Headers` object per request (see ../response-headers.ts).
 */
import type { MiddlewareHandler } from 'hono';
import { randomUUID } from 'node:crypto';
import type { AppEnv } from '../context.js';
import { setResponseHeader } from '../response-headers.js';

const MAX_LENGTH = 255;
const UNSAFE = /[^\w\-=]/;

export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let id = c.req.header('x-request-id');
    if (!id || id.length > MAX_LENGTH || UNSAFE.test(id)) id = randomUUID();
    c.set('requestId', id);
    setResponseHeader(c, 'X-Request-Id', id);
    await next();
  };
}
