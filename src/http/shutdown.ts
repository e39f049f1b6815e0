/**
 * Graceful shutdown of the HTTP side (decisions.md §15), independent of the listener (Node's http
 * server or `Deno.serve`); `RunningServer.shutdown()` (`src/server.ts`) composes it with the
 * listener, the workers and the store.
 *
 * - `middleware()` (right after the request id) runs every request through a `RequestGate`, the
 *   in-flight counter the fixture's resets use too.
 * - `drain(graceMs)` starts draining: from then on a request that starts is answered 503
 *   `SERVICE_UNAVAILABLE` at once (it arrived on a kept-alive connection after the signal; it did
 *   nothing, so retrying it elsewhere is safe), and every answer says `Connection: close`.
 *   Requests in flight run on; `drain` resolves once none is left, or when `graceMs` ends: then
 *   `signal` aborts, each request still running is answered 503 `SERVICE_UNAVAILABLE` in the
 *   envelope with `Connection: close`, and an idempotent write waiting on a provider releases its
 *   key (`IdempotencyKeys`, `src/http/middleware/idempotency.ts`), so a retry with the same key
 *   runs it again.
 */
import type { MiddlewareHandler } from 'hono';
import { ApiError } from './errors.js';
import { RequestGate } from './request-gate.js';
import { setResponseHeader } from './response-headers.js';

const CLOSE = { Connection: 'close' } as const;

/** The 503 of a request refused or cut by the shutdown (decisions.md §15). */
const shuttingDown = (message: string) => new ApiError('SERVICE_UNAVAILABLE', message, undefined, CLOSE);

/** One app's graceful-shutdown state: the requests in flight, whether it drains, the end of the grace. */
export class Shutdown {
  /** Every request in flight (of any path: API, operator, docs, fixture admin). */
  readonly requests = new RequestGate();
  private readonly graceEnd = new AbortController();
  private started = false;

  /** True once `drain` was called. */
  get draining(): boolean {
    return this.started;
  }

  /** Aborted when the shutdown grace ends: whatever still waits (on a provider) gives up now. */
  get signal(): AbortSignal {
    return this.graceEnd.signal;
  }

  /**
   * Hono middleware, after the request id: counts the request in flight; while draining, refuses
   * new requests with 503 and makes every answer close its connection; at the end of the grace,
   * answers a request still running 503 (the handler's own answer, if it ever comes, is dropped).
   * @throws ApiError SERVICE_UNAVAILABLE (with `Connection: close`), as described above.
   */
  middleware(): MiddlewareHandler {
    return async (c, next) => {
      if (this.started)
        throw shuttingDown('The server is shutting down and takes no new requests; retry on a new connection');
      await this.requests.run(() => untilAborted(next(), this.graceEnd.signal));
      if (this.started) setResponseHeader(c, 'Connection', 'close');
    };
  }

  /**
   * Starts draining (see the module comment) and resolves with the number of requests cut at the
   * end of the grace (0 when all finished in time), once every request is answered and the key
   * releases of the cut ones have run.
   * @param graceMs how long the requests in flight may take, ms (`server.shutdownGraceMs`).
   */
  async drain(graceMs: number): Promise<number> {
    this.started = true;
    if (await settlesWithin(this.requests.drain(), graceMs)) return 0;
    const cut = this.requests.size;
    this.graceEnd.abort();
    // Each cut request's middleware throws on the abort (a microtask), so this resolves at once.
    await this.requests.drain();
    // The key releases of the cut idempotent writes run as microtasks of the same abort: they have
    // all run by the next turn of the event loop, before anyone closes the store.
    await new Promise((resolve) => setImmediate(resolve));
    return cut;
  }
}

/**
 * `work`, unless `signal` aborts first: then rejects with 503 `SERVICE_UNAVAILABLE` (with
 * `Connection: close`), so the caller releases what it holds (an idempotency key). Without a
 * signal, `work` itself.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  const stopped = () =>
    shuttingDown('The server is shutting down and this request did not finish within the shutdown grace; retry it');
  if (signal.aborted) return Promise.reject(stopped());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stopped());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Resolves true once `promise` settles, false if `ms` pass first. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(done, done);
  });
}
