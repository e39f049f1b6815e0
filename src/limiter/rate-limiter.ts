/**
 * What the rate-limit middleware sees of a limiter (decisions.md §9), whichever store counts the
 * windows (`limits.store`, decisions.md §16): `memory` (./memory.ts, this process only) or
 * `redis` (./redis.ts, shared by every instance on one Redis).
 */

/** The §9 window: 60 s. */
export const RATE_WINDOW_MS = 60_000;

/** Where the windows are counted (`limits.store`): this process, or one Redis shared by every instance. */
export type LimiterStore = 'memory' | 'redis';

/** One check's answer: whether the request is served, and the figures of its rate-limit headers. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in the window after this one. */
  remaining: number;
  /** Unix time in ms at which the oldest counted request leaves the window (now when none). */
  resetAtMs: number;
  /** When refused: ms until a request would be accepted (> 0). */
  retryAfterMs: number;
  /** The clock's time of this check, ms. */
  nowMs: number;
}

export interface RateLimiter {
  readonly store: LimiterStore;
  /** Requests allowed per window. */
  readonly limit: number;
  /** The sliding window, ms. */
  readonly windowMs: number;
  /**
   * Whether the windows are shared by every instance right now: never for `memory`; for `redis`
   * except while it falls back to this instance's own window.
   */
  readonly shared: boolean;
  /**
   * Counts a request for `key` (a token id) if its window has room; a refused request is not
   * counted. The memory store answers with a plain value, so the middleware awaits nothing on
   * its hot path; the Redis store with a promise that never rejects (it falls back instead).
   */
  check(key: string): RateDecision | Promise<RateDecision>;
  /**
   * Forgets this process's windows (the fixture's reset, decisions.md §14). The fixture refuses
   * `limits.store: redis` (src/config.ts), so no shared window is ever cleared by it.
   */
  clear(): void;
  /** Releases the connection, if any. */
  close(): Promise<void>;
}
