/**
 * The per-token rate limiter (contract §8, decisions.md §9), built for the store that counts its
 * windows (`limits.store`, decisions.md §16): `memory` counts in this process (./memory.ts),
 * `redis` in one Redis shared by every instance (./redis.ts).
 */
import type { Clock } from '../domain/clock.js';
import { MemoryLimiter } from './memory.js';
import type { RedisLimiterEvents } from './redis.js';
import { RATE_WINDOW_MS, type LimiterStore, type RateLimiter } from './rate-limiter.js';

export type { FallbackReason, RedisLimiterEvents } from './redis.js';
export type { LimiterStore, RateDecision, RateLimiter } from './rate-limiter.js';

export interface LimiterOptions {
  /** `limits.store`. */
  store: LimiterStore;
  /** `limits.requestsPerMinute`: requests per 60 s window per token; 0 means no limiter. */
  requestsPerMinute: number;
  clock: Clock;
  /** For `store: redis`: `redis.url`, `redis.keyPrefix`, `redis.timeoutMs` (see RedisLimiterOptions). */
  redis: { url: string; keyPrefix: string; timeoutMs: number };
  /** For `store: redis`: the fallback's log lines and metrics. */
  events?: RedisLimiterEvents;
}

/**
 * The limiter the options choose, or undefined when `requestsPerMinute` is 0. With `redis`,
 * waits for the first connection (at most 2 s) and never rejects because Redis is down: the
 * limiter then starts on its fallback window (RedisLimiter.open).
 *
 * ./redis.ts, and ioredis with it, is loaded only for `redis`: with ioredis loaded, a memory-store
 * server spent more CPU per GET /me (medians 4 to 7 µs more over 5 to 6 alternating in-process
 * runs, on about 55 µs), although it never used it.
 */
export async function openLimiter(options: LimiterOptions): Promise<RateLimiter | undefined> {
  const limit = options.requestsPerMinute;
  if (limit === 0) return undefined;
  if (options.store === 'memory') return new MemoryLimiter(limit, RATE_WINDOW_MS, options.clock);
  const { RedisLimiter } = await import('./redis.js');
  return RedisLimiter.open({
    limit,
    windowMs: RATE_WINDOW_MS,
    clock: options.clock,
    ...options.redis,
    events: options.events,
  });
}

/**
 * The start-up line for an install whose database is shared by several instances (PostgreSQL)
 * while its limiter counts per instance (decisions.md §16), or undefined when there is nothing
 * to say.
 */
export function perInstanceLimitNotice(store: LimiterStore, databaseShared: boolean): string | undefined {
  if (store !== 'memory' || !databaseShared) return undefined;
  return 'rate limits are counted per instance (limits.store: memory): with several instances a token gets the limit on each; set limits.store to redis to share one window';
}
