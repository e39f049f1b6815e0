/**
 * The lease-and-retry pass shared by the workers that deliver queued work through a provider:
 * the outbox (decisions.md §7) and contact discovery (decisions.md §10). A queue supplies only
 * its specifics (which items are due, how one is leased, the attempt itself, how a failure is
 * recorded); the pass owns the order and the retry rule:
 *
 * - it takes up to `batch` due items and, one at a time, leases each (an item another pass took
 *   meanwhile is skipped) and runs its attempt;
 * - an attempt that throws failed: it is retryable unless it threw a `ProviderError` that says it
 *   is not, and it is given up when not retryable or when it was the item's last allowed attempt;
 *   otherwise it is due again `backoffMs` × 2^(attempt − 1) after the failure (`retryDelayMs`);
 * - `succeeded` runs outside that handling, so a failure to record a success (the outbox's `sent`)
 *   is never mistaken for a failed attempt: it fails the pass, and the lease decides what follows;
 * - `stopping` (the worker's stop signal) ends the pass before the next item: the one in hand is
 *   finished and recorded.
 */
import type { Clock } from '../domain/clock.js';
import type { Logger } from '../logger.js';
import { ProviderError } from '../providers/index.js';

/** A failed attempt, as the pass hands it to `LeasedQueue.failed`. Times are ms since the epoch. */
export interface AttemptFailure {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** The error's message, for `last_error`. */
  error: string;
  retryable: boolean;
  /** Not retryable, or the item's last allowed attempt: record it as failed for good. */
  givenUp: boolean;
  /** When the failure was seen. */
  now: number;
  /** When a retry is due: `now` + `retryDelayMs(backoffMs, attempt)`. */
  retryAt: number;
}

/** What one kind of queued work supplies to the pass. */
export interface LeasedQueue<T, R = void> {
  /** Up to `limit` items due at `now` (ms since the epoch), in the order to attempt them. */
  due(now: number, limit: number): Promise<T[]>;
  /** Leases `item` for its next attempt at `now`; resolves with that attempt's number (1 for the first), or null when another pass took it. */
  lease(item: T, now: number): Promise<number | null>;
  /** The attempt itself; a throw is a failed attempt. */
  attempt(item: T, attempt: number): Promise<R>;
  /** Records a successful attempt; a throw fails the pass (it is not a failed attempt). */
  succeeded?(item: T, result: R): Promise<void>;
  /** Records a failed attempt: due again at `failure.retryAt`, or failed for good when `failure.givenUp`. */
  failed(item: T, failure: AttemptFailure): Promise<void>;
  /** Attempts `item` is allowed in all. */
  maxAttempts(item: T): number;
  /** The warning logged for a failed attempt, and the fields that name the item in it. */
  failureLog: { message: string; fields(item: T): Record<string, unknown> };
}

export interface LeasedPassOptions {
  clock: Clock;
  logger: Logger;
  /** Items taken per pass. */
  batch: number;
  /** The first retry's delay in ms (`outbox.backoffMs`); each later one doubles it. */
  backoffMs: number;
}

/** Delay in ms before the retry that follows failed attempt `attempt` (1-based): `backoffMs` × 2^(attempt − 1). */
export const retryDelayMs = (backoffMs: number, attempt: number): number => backoffMs * 2 ** (attempt - 1);

/**
 * The step of a worker (`createWorker`) over `queue`: one pass as described in the module comment.
 * Resolves with the number of due items it took (skipped ones included).
 * @throws what `due`, `lease`, `succeeded` or `failed` throw (the store failed): the pass ends there.
 */
export function leasedPass<T, R>(
  queue: LeasedQueue<T, R>,
  { clock, logger, batch, backoffMs }: LeasedPassOptions,
): (stopping?: AbortSignal) => Promise<number> {
  return async (stopping) => {
    const items = await queue.due(clock.now(), batch);
    for (const item of items) {
      if (stopping?.aborted) break;
      const attempt = await queue.lease(item, clock.now());
      if (attempt === null) continue;
      let result: R;
      try {
        result = await queue.attempt(item, attempt);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const retryable = !(error instanceof ProviderError) || error.retryable;
        const now = clock.now();
        const givenUp = !retryable || attempt >= queue.maxAttempts(item);
        await queue.failed(item, {
          attempt,
          error: message,
          retryable,
          givenUp,
          now,
          retryAt: now + retryDelayMs(backoffMs, attempt),
        });
        logger.log('warn', queue.failureLog.message, {
          ...queue.failureLog.fields(item),
          attempt,
          retryable,
          error: message,
        });
        continue;
      }
      await queue.succeeded?.(item, result);
    }
    return items.length;
  };
}
