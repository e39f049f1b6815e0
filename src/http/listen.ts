/**
 * Serving the app with the runtime's own HTTP server: `Deno.serve` under Deno (no Node
 * compatibility layer between the socket and `app.fetch`), @hono/node-server under Node. Both
 * call the same `fetch(request, env)`; under Node `env.outgoing` is the `ServerResponse` (see
 * ./response-headers.ts).
 */
import { getRequestListener, type ServerType } from '@hono/node-server';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.js';
import { adapterErrorHandler, onClientError } from './refusals.js';

/** What `Deno.serve` returns (the part used here). */
interface DenoHttpServer {
  addr: { port: number };
  finished: Promise<void>;
  shutdown(): Promise<void>;
}
interface DenoNamespace {
  serve(
    options: { hostname: string; port: number; onListen?: (addr: { port: number }) => void },
    /** `info.remoteAddr.hostname` is the client's address (the fixture admin API's access rule reads it). */
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): DenoHttpServer;
}

export interface Listener {
  /** The port actually bound (config port 0: a free one). */
  port: number;
  /** Which server answers: `deno` (Deno.serve) or `node` (@hono/node-server). */
  runtime: 'deno' | 'node';
  /** The Node server (undefined under Deno), for connection-level settings and shutdown. */
  node?: ServerType;
  /**
   * Stops accepting connections at once and closes the idle keep-alive ones; resolves once every
   * connection is closed (one in use closes after its answer, which says `Connection: close`
   * while the app drains, see ./shutdown.ts). Under Deno: `Deno.serve`'s `shutdown()`, which
   * does the same.
   */
  close(): Promise<void>;
  /** Closes the connections idle now (Node; under Deno `shutdown()` does it by itself). */
  closeIdle(): void;
  /**
   * Closes every connection still open, answered or not (Node). Under Deno there is no such
   * call: what is left ends with the process.
   */
  closeAll(): void;
}

const deno = (globalThis as { Deno?: DenoNamespace }).Deno;

/** Limits on how slowly a client may send a request (Node; `Deno.serve` has no such settings). */
export interface ClientTimeouts {
  /** Time to receive a request's headers, ms: `server.headersTimeoutMs`. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, ms: `server.requestTimeoutMs`. */
  requestTimeoutMs: number;
}

/**
 * How often Node looks for connections over those limits, ms. Its default, 30 s, would let a
 * request run up to 30 s past them.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1000;

/**
 * Listens on `hostname:port` and serves `fetch`. Under Node a client that takes longer than
 * `timeouts` to send its headers, or its whole request, is answered 400 `BAD_REQUEST` ("not
 * received in time", ./refusals.ts) and its connection closed, within `TIMEOUT_CHECK_INTERVAL_MS`.
 * @throws (rejects) when the address cannot be bound, e.g. EADDRINUSE.
 */
export async function listen(
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
  hostname: string,
  port: number,
  logger: Logger,
  timeouts: ClientTimeouts,
): Promise<Listener> {
  if (deno) {
    let server!: DenoHttpServer;
    await new Promise<void>((resolve, reject) => {
      try {
        server = deno.serve({ hostname, port, onListen: () => resolve() }, (request, info) => fetch(request, info));
      } catch (error) {
        reject(error);
      }
    });
    return {
      port: server.addr.port,
      runtime: 'deno',
      async close() {
        await server.shutdown();
      },
      closeIdle() {},
      closeAll() {},
    };
  }
  // The adapter's request listener with its error handler, and the server's clientError event:
  // what HTTP parsing refuses is answered with the envelope too (decisions.md §4, ./refusals.ts).
  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    getRequestListener(fetch, { hostname, errorHandler: adapterErrorHandler(logger) }),
  );
  server.on('clientError', onClientError(logger));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    runtime: 'node',
    node: server,
    close: () =>
      new Promise<void>((resolve) => {
        // Node's close() leaves a connection in use open after its answer unless that answer
        // says Connection: close; idle ones it closes (again below, for clarity).
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
    closeIdle: () => server.closeIdleConnections(),
    closeAll: () => server.closeAllConnections(),
  };
}
