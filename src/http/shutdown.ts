/**
 * Graceful shutdown of the HTTP side (decisions.md §15), independent of the listener (Node's http
 * server or `Deno.serve`); `RunningServer.shutdown()` (`src/server.ts`) composes it with the
 * listener, the workers and the store.
 *
 * - `middleware()` (right after the request id) runs every request through a `RequestGate` (the
 *   in-flight counter the fixture's resets use; its own instance, since the fixture's admin
 *   requests must not count in the wait of a reset they run).
 * - `drain(graceMs)` starts draining: from then on a request that starts is answered 503
 *   `SERVICE_UNAVAILABLE` at once (it arrived on a kept-alive connection after the signal; it did
 *   nothing, so retrying it elsewhere is safe), and every answer says `Connection: close`.
 *   Requests in flight run on; `drain` resolves once none is left, or when `graceMs` ends: then
 *   `signal` aborts, and whatever a request waits on gives up through `untilAborted`: a write
 *   waiting on a provider answers 503 `SERVICE_UNAVAILABLE` (envelope, `Connection: close`) and
 *   releases its idempotency key (`IdempotencyKeys`, ./middleware/idempotency.ts); a fixture
 *   fault's delay answers 503 too.
 *
 * The waits listen to the signal, rather than the middleware racing every request against it:
 * that race costs a promise and an abort listener on every request (measured on the busy 2-core
 * machine: 5–7 µs per request, against 0.3–0.6 µs for the gate alone).
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

  /** Aborted when the shutdown grace ends: whatever a request still waits on gives up now. */
  get signal(): AbortSignal {
    return this.graceEnd.signal;
  }

  /**
   * Hono middleware, after the request id: counts the request in flight; while draining, refuses
   * new requests and makes every answer close its connection.
   * @throws ApiError SERVICE_UNAVAILABLE (with `Connection: close`) for a request that starts
   * while draining.
   */
  middleware(): MiddlewareHandler {
    return async (c, next) => {
      if (this.started)
        throw shuttingDown('The server is shutting down and takes no new requests; retry on a new connection');
      await this.requests.run(next);
      if (this.started) setResponseHeader(c, 'Connection', 'close');
    };
  }

  /**
   * Starts draining (see the module comment); resolves with the number of requests still running
   * at the end of the grace (0 when all finished in time), once they are answered or `settleMs`
   * more have passed (a request that waits on nothing listening to `signal`, such as a client
   * still sending its body, is left to the caller, which closes its connection).
   * @param graceMs how long the requests in flight may take, ms (`server.shutdownGraceMs`).
   * @param settleMs how long the cut requests may take to answer after the grace, ms.
   */
  async drain(graceMs: number, settleMs: number): Promise<number> {
    this.started = true;
    if (await settlesWithin(this.requests.drain(), graceMs)) return 0;
    const cut = this.requests.size;
    this.graceEnd.abort();
    await settlesWithin(this.requests.drain(), settleMs);
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
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stopped());
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    // `work` is always followed, so its own later failure is never an unhandled rejection.
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
