/**
 * Observes every request (decisions.md §15): one access-log line and, when metrics are on, the
 * request counters and duration histogram. Runs first, so it sees every answer, errors included.
 *
 * The access-log line: `{ time, level: "info", msg: "request", requestId, method, route, path,
 * status, errorCode, durationMs, bytes, tokenId, accountId, remoteAddr, userAgent }`.
 * - `route` is the matched route template (`/api/public/v1/projects/:projectId`), or null when
 *   no route matched; `path` is the request path without its query string.
 * - `bytes`: on Node, bytes written to the connection for the response (status line, headers
 *   and body), counted when the response is done; elsewhere the `Content-Length` sent, if any.
 * - `durationMs`: milliseconds from the request reaching the app to the response being written
 *   (on Node) or returned (elsewhere), to 0.01 ms.
 * - `remoteAddr`: the client's address, `X-Forwarded-For` believed from `server.trustProxy` only.
 * - Never the `Authorization` header nor the query string; a token-shaped string in the path or
 *   the user agent is masked (`maskTokens`, percent-encoded too), so a token pasted in the wrong
 *   place never reaches the log. Metric labels hold route templates and fixed values only.
 */
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../logger.js';
import { methodLabel, type Metrics } from '../../metrics.js';
import { maskTokens } from '../../domain/tokens.js';
import type { ClientReader } from '../client.js';
import { routeTemplate } from '../route.js';
import type { AppEnv, AppContext } from '../context.js';

/** The Node response @hono/node-server passes in `c.env`. */
interface NodeBindings {
  outgoing?: {
    writableFinished: boolean;
    once(event: 'close', listener: () => void): unknown;
    socket?: { bytesWritten: number } | null;
  };
}

/** The error code of an error answer: as `onError` set it, else the not-found answer's. */
function errorCodeOf(c: AppContext, status: number): string | null {
  if (status < 400) return null;
  return c.get('errorCode') ?? (status === 404 ? 'NOT_FOUND' : null);
}

export interface ObserveOptions {
  logger: Logger;
  metrics?: Metrics;
  /** The client of a request, `server.trustProxy` believed (../client.ts). */
  clientOf: ClientReader;
}

export function observe({ logger, metrics, clientOf }: ObserveOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const env = c.env as NodeBindings | undefined;
    const socket = env?.outgoing?.socket;
    const bytesBefore = socket?.bytesWritten ?? 0;
    await next();
    const status = c.res.status;
    const route = routeTemplate(c);
    const method = c.req.method;
    if (metrics) {
      const labels = { method: methodLabel(method), route: route ?? 'unmatched' };
      metrics.httpRequests.inc({ ...labels, status: String(status) });
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
      if (status === 429) metrics.rateLimitRejections.inc();
      // Not from the response's headers: reading them makes @hono/node-server build a Web `Headers`.
      if (c.get('replayed')) metrics.idempotentReplays.inc();
    }
    const caller = c.get('caller') as AppEnv['Variables']['caller'] | undefined;
    const userAgent = c.req.header('user-agent');
    const fields: Record<string, unknown> = {
      requestId: c.get('requestId'),
      method,
      route,
      path: maskTokens(c.req.path),
      status,
      errorCode: errorCodeOf(c, status),
      durationMs: 0,
      bytes: null,
      tokenId: caller?.tokenId ?? null,
      accountId: caller?.account.id ?? null,
      remoteAddr: clientOf.address(c),
      userAgent: userAgent === undefined ? null : maskTokens(userAgent),
    };
    const emit = (bytes: number | null) => {
      fields.durationMs = Math.round((performance.now() - started) * 100) / 100;
      fields.bytes = bytes;
      logger.log('info', 'request', fields);
    };
    const outgoing = env?.outgoing;
    if (outgoing && socket && !outgoing.writableFinished)
      outgoing.once('close', () => emit(socket.bytesWritten - bytesBefore));
    else {
      const length = c.res.headers.get('content-length');
      emit(length === null ? null : Number(length));
    }
  };
}
