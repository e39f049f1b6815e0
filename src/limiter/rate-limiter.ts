/**
 * What the rate-limit middleware sees of a limiter (decisions.md §9), whichever store counts the
 * windows: `memory` (./memory.ts, this process only).
 */

/** The §9 window: 60 s. */
export const RATE_WINDOW_MS = 60_000;

/** Where the windows are counted: this process. */
export type LimiterStore = 'memory';

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
   * Counts a request for `key` (a token id) if its window has room; a refused request is not
   * counted. The memory store answers with a plain value, so the middleware awaits nothing on
   * its hot path; a store over the network answers with a promise that never rejects.
   */
  check(key: string): RateDecision | Promise<RateDecision>;
  /** Forgets this process's windows (the fixture's reset, decisions.md §14). */
  clear(): void;
  /** Releases the connection, if any. */
  close(): Promise<void>;
}
