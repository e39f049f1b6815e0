/**
 * Response headers set by middleware on every request (request id, rate limit), without building
 * a Web `Headers` object per request.
 *
 * Hono's `c.header()` before the handler makes the response carry a `Headers` object, which
 * @hono/node-server then copies back into a plain object for Node: a few microseconds per
 * request, for every request. Under @hono/node-server the header goes straight onto Node's
 * `ServerResponse` (the adapter's `c.env.outgoing` binding), whose `writeHead` merges it with the
 * returned response's own headers (those win on a clash); anywhere else (`Deno.serve`,
 * `app.request` in tests) it goes through `c.header()`.
 */
import type { Context } from 'hono';
import type { ServerResponse } from 'node:http';

/** Sets `name: value` on the response `c` will send, errors and 404/405 answers included. */
export function setResponseHeader(c: Context, name: string, value: string): void {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (outgoing !== undefined && typeof outgoing.setHeader === 'function' && !outgoing.headersSent)
    outgoing.setHeader(name, value);
  else c.header(name, value);
}
