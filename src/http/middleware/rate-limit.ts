/**
 * The per-token limiter at the edge (contract §8, decisions.md §9): runs after auth, sets the
 * `X-RateLimit-*` and IETF `RateLimit`/`RateLimit-Policy` headers on every authenticated response
 * (errors included, since they are set before the handler runs), and answers 429 with
 * `Retry-After` (whole seconds, at least 1) when the window is full. The headers come from the
 * limiter's decision alone, whichever store counts the windows (src/limiter/).
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import { ApiError } from '../errors.js';
import { setResponseHeader } from '../response-headers.js';
import type { RateLimiter } from '../../limiter/index.js';

export function rateLimit(limiter: RateLimiter): MiddlewareHandler<AppEnv> {
  const windowSeconds = Math.round(limiter.windowMs / 1000);
  const policy = `"default";q=${limiter.limit};w=${windowSeconds}`;
  return async (c, next) => {
    const checked = limiter.check(c.get('caller').tokenId);
    // The memory store answers a plain value: no await (no extra turn of the microtask queue).
    const decision = checked instanceof Promise ? await checked : checked;
    const secondsToReset = Math.max(0, Math.ceil((decision.resetAtMs - decision.nowMs) / 1000));
    setResponseHeader(c, 'X-RateLimit-Limit', String(decision.limit));
    setResponseHeader(c, 'X-RateLimit-Remaining', String(decision.remaining));
    setResponseHeader(c, 'X-RateLimit-Reset', String(Math.ceil(decision.resetAtMs / 1000)));
    setResponseHeader(c, 'RateLimit-Policy', policy);
    setResponseHeader(c, 'RateLimit', `"default";r=${decision.remaining};t=${secondsToReset}`);
    if (!decision.allowed) {
      const retryAfter = String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
      throw new ApiError(
        'RATE_LIMIT_EXCEEDED',
        `Rate limit of ${decision.limit} requests per ${windowSeconds} s exceeded; retry after ${retryAfter} s`,
        undefined,
        {
          'Retry-After': retryAfter,
        },
      );
    }
    await next();
  };
}
