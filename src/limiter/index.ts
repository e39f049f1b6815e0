/**
 * The per-token rate limiter (contract §8, decisions.md §9), built for the store that counts its
 * windows: `memory` counts in this process (./memory.ts).
 */
import type { Clock } from '../domain/clock.js';
import { MemoryLimiter } from './memory.js';
import { RATE_WINDOW_MS, type RateLimiter } from './rate-limiter.js';

export type { RateLimiter } from './rate-limiter.js';

export interface LimiterOptions {
  /** `limits.requestsPerMinute`: requests per 60 s window per token; 0 means no limiter. */
  requestsPerMinute: number;
  clock: Clock;
}

/** The limiter the options choose, or undefined when `requestsPerMinute` is 0. */
export async function openLimiter(options: LimiterOptions): Promise<RateLimiter | undefined> {
  const limit = options.requestsPerMinute;
  if (limit === 0) return undefined;
  return new MemoryLimiter(limit, RATE_WINDOW_MS, options.clock);
}
