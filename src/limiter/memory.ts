/**
 * The in-process limiter (`limits.store: memory`, the default; decisions.md §9): at most `limit`
 * requests in any sliding window of `windowMs` per key, counted exactly with a ring buffer of the
 * accepted requests' times. Its windows belong to this process only: several instances each
 * count their own (decisions.md §16). A rejected request is not recorded. Memory: one
 * `Float64Array(limit)` per key that has a request inside the window; `sweep()` drops the others,
 * so it is bounded by the number of tokens in use. A check is O(1) and synchronous.
 *
 * Also the Redis limiter's fallback window while Redis cannot be reached (./redis.ts).
 */
import type { Clock } from '../domain/clock.js';
import type { RateDecision, RateLimiter } from './rate-limiter.js';

interface Bucket {
  times: Float64Array;
  /** Index of the oldest stored time. */
  head: number;
  count: number;
}

export class MemoryLimiter implements RateLimiter {
  readonly store = 'memory';
  readonly shared = false;
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly clock: Clock,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
  }

  /** Counts a request for `key` if the window has room; answers at once (never a promise). */
  check(key: string): RateDecision {
    const now = this.clock.now();
    if (now - this.lastSweep > this.windowMs) this.sweep(now);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { times: new Float64Array(this.limit), head: 0, count: 0 };
      this.buckets.set(key, bucket);
    }
    const cutoff = now - this.windowMs;
    while (bucket.count > 0 && bucket.times[bucket.head]! <= cutoff) {
      bucket.head = (bucket.head + 1) % this.limit;
      bucket.count--;
    }
    if (bucket.count >= this.limit) {
      const resetAtMs = bucket.times[bucket.head]! + this.windowMs;
      return { allowed: false, limit: this.limit, remaining: 0, resetAtMs, retryAfterMs: resetAtMs - now, nowMs: now };
    }
    bucket.times[(bucket.head + bucket.count) % this.limit] = now;
    bucket.count++;
    return {
      allowed: true,
      limit: this.limit,
      remaining: this.limit - bucket.count,
      resetAtMs: bucket.times[bucket.head]! + this.windowMs,
      retryAfterMs: 0,
      nowMs: now,
    };
  }

  /** Forgets keys whose every request has left the window. */
  sweep(now = this.clock.now()): void {
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) {
      const newest = bucket.times[(bucket.head + bucket.count - 1 + this.limit) % this.limit]!;
      // Stryker disable next-line ConditionalExpression: no key is held with an empty window (every check that keeps a key records its request, or was refused on a full window)
      if (bucket.count === 0 || newest <= now - this.windowMs) this.buckets.delete(key);
    }
  }

  /** Forgets every window (the fixture's reset). */
  clear(): void {
    this.buckets.clear();
  }

  /** Nothing to release. */
  async close(): Promise<void> {}

  /** Number of keys currently held. */
  get size(): number {
    return this.buckets.size;
  }
}
