/**
 * The limiter shared by every instance (`limits.store: redis`, decisions.md §9 and §16): the same
 * sliding window as ./memory.ts, kept in one Redis that every instance asks, so a token's limit
 * holds exactly whichever instances its requests reach.
 *
 * One atomic step per request: a Lua script over a sorted set per token (the "sliding log"; the
 * approach of @upstash/ratelimit's scripts and rate-limiter-flexible's RateLimiterRedis). The set
 * `<keyPrefix>ratelimit:<tokenId>` holds one member per accepted request, scored by its time in
 * ms. The script drops the members that left the window (score ≤ now − window, as the memory
 * limiter does), counts the rest, and either adds the request (allowed) or adds nothing (refused:
 * a 429 is not counted). Redis runs a script alone, so concurrent checks from any number of
 * instances see each other's counts: exactly `limit` of a burst are allowed. After each accepted
 * request the key's expiry is set to the window (PEXPIRE), so a token idle for a window leaves
 * nothing in Redis.
 *
 * Time comes from the service's clock, passed into the script as `now`, not from Redis `TIME`:
 * the headers (`X-RateLimit-Reset`, `Retry-After`) are computed from the same `now` as the window,
 * the fallback window below goes on in the same timeline, and tests drive the limiter with a fake
 * clock. The instances' clocks must therefore agree (NTP): an instance whose clock is d ms ahead
 * sees the window's edge d ms early. The expiry is a duration, so Redis's own clock does not matter.
 *
 * While Redis cannot be reached or answers slower than `timeoutMs` (ioredis' `commandTimeout`; no
 * offline queue, so a call made while disconnected fails at once), this instance counts in its own
 * in-process window (rate-limiter-flexible's "insurance" limiter): `events.fallback` once, then
 * `events.fallbackCheck` on each check so counted. Every `probeIntervalMs`, and whenever ioredis
 * reconnects, the script is run once on a probe key (refusing, so nothing is written); when it
 * answers, checks go back to Redis (`events.recovered`, once). No check fails or waits longer than
 * `timeoutMs` because of Redis. While falling back, limits are per instance, and the requests
 * served meanwhile are not in Redis's window afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis, type Result } from 'ioredis';
import type { Clock } from '../domain/clock.js';
import { MemoryLimiter } from './memory.js';
import type { RateDecision, RateLimiter } from './rate-limiter.js';

/**
 * KEYS[1]: the token's log. ARGV: now (ms), window (ms), limit, the member to add. Returns
 * `{ allowed (1|0), count after this check, oldest score }`; the score is returned as Redis's
 * string (a Lua number would be truncated to an integer on the way out).
 */
const SLIDING_LOG = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, count, oldest[2]}
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {1, count + 1, oldest[2]}
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** The sliding-log script above (EVALSHA, loaded by ioredis on first use). */
    outreachSlidingLog(
      key: string,
      nowMs: string,
      windowMs: string,
      limit: string,
      member: string,
    ): Result<[number, number, string?], Context>;
  }
}

/** Why this instance stopped asking Redis: no connection, no answer in time, or an error reply. */
export type FallbackReason = 'unreachable' | 'timeout' | 'error';

/** Callbacks for the log and the metrics (the limiter layer imports neither). */
export interface RedisLimiterEvents {
  /** Redis stopped answering: this instance counts in its own window from now. Once per outage. */
  fallback?(reason: FallbackReason): void;
  /** Redis answers again: checks are shared again. Once per outage. */
  recovered?(): void;
  /** A check was answered by this instance's own window. */
  fallbackCheck?(): void;
}

export interface RedisLimiterOptions {
  /** Requests allowed per window (≥ 1). */
  limit: number;
  /** The sliding window, ms. */
  windowMs: number;
  clock: Clock;
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`; never logged (it may hold a password). */
  url: string;
  /** Put before every key (`<keyPrefix>ratelimit:<tokenId>`), so several installs can share one Redis. */
  keyPrefix: string;
  /** Longest wait for one Redis call, ms; a slower answer counts as Redis being down. */
  timeoutMs: number;
  /** While falling back, how often Redis is asked again, ms (default 1000). */
  probeIntervalMs?: number;
  /** Longest wait for the first connection in `open`, ms (default 2000); later, checks fall back. */
  connectWaitMs?: number;
  events?: RedisLimiterEvents;
}

/** Longest pause between two reconnection attempts, ms (ioredis' own default grows to 5 s). */
const MAX_RECONNECT_DELAY_MS = 1000;

export class RedisLimiter implements RateLimiter {
  readonly store = 'redis';
  readonly limit: number;
  readonly windowMs: number;
  private readonly client: Redis;
  private readonly clock: Clock;
  private readonly fallbackWindow: MemoryLimiter;
  private readonly prefix: string;
  /** The key the probe runs the script on (refusing: it writes nothing there). */
  private readonly probeKey: string;
  private readonly events: RedisLimiterEvents;
  private readonly probeIntervalMs: number;
  /** Members are `<instance>:<sequence>`, unique across instances and requests of one ms. */
  private readonly instance = randomBytes(6).toString('base64url');
  private sequence = 0;
  private onRedis = true;
  private probing = false;
  private probeTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * Connects to Redis (waiting at most `connectWaitMs`) and answers the limiter: sharing the
   * windows when Redis answered, else falling back from the start (`events.fallback` is called)
   * and trying again in the background. Never rejects because of Redis.
   * @throws RangeError when `limit` is not a positive integer.
   */
  static async open(options: RedisLimiterOptions): Promise<RedisLimiter> {
    const limiter = new RedisLimiter(options);
    await limiter.connected(options.connectWaitMs ?? 2000);
    return limiter;
  }

  private constructor(options: RedisLimiterOptions) {
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.clock = options.clock;
    this.fallbackWindow = new MemoryLimiter(options.limit, options.windowMs, options.clock);
    this.prefix = `${options.keyPrefix}ratelimit:`;
    // Stryker disable next-line StringLiteral: the probe writes nothing, so its key's name is never seen
    this.probeKey = `${this.prefix}probe`;
    this.events = options.events ?? {};
    this.probeIntervalMs = options.probeIntervalMs ?? 1000;
    this.client = new Redis(options.url, {
      // A call made while disconnected fails at once instead of waiting in a queue; one in
      // flight when the connection drops fails at once, and is never sent again (it may have run).
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: options.timeoutMs,
      connectTimeout: Math.max(options.timeoutMs, options.connectWaitMs ?? 2000),
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
      scripts: { outreachSlidingLog: { lua: SLIDING_LOG, numberOfKeys: 1 } },
    });
    // Failures reach the checks as rejections; without a listener ioredis prints each one.
    this.client.on('error', () => {});
    this.client.on('ready', () => this.probe());
  }

  /** Resolves when the client is ready, or after `waitMs` or its first error (then falling back). */
  private connected(waitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        // Stryker disable next-line StringLiteral: a `once` listener left on 'ready' only resolves the settled promise again
        this.client.off('ready', done);
        this.client.off('error', failed);
        resolve();
      };
      const failed = () => {
        this.fallBack('unreachable');
        done();
      };
      const timer = setTimeout(failed, waitMs);
      // Stryker disable next-line ConditionalExpression,StringLiteral: never ready yet when called from open, right after the constructor
      if (this.client.status === 'ready') return done();
      this.client.once('ready', done);
      this.client.once('error', failed);
    });
  }

  /** Whether checks go to Redis now (false while this instance counts in its fallback window). */
  get shared(): boolean {
    return this.onRedis;
  }

  check(key: string): RateDecision | Promise<RateDecision> {
    if (!this.onRedis) return this.checkAlone(key);
    const now = this.clock.now();
    // Stryker disable next-line UpdateOperator: counting down makes members as unique as counting up
    const member = `${this.instance}:${(this.sequence++).toString(36)}`;
    return this.client
      .outreachSlidingLog(this.prefix + key, String(now), String(this.windowMs), String(this.limit), member)
      .then(
        ([allowed, count, oldest]) => this.decision(allowed === 1, count, Number(oldest), now),
        (error: unknown) => {
          this.fallBack(reasonOf(error));
          return this.checkAlone(key);
        },
      );
  }

  /** The same figures as MemoryLimiter.check for the same log. */
  private decision(allowed: boolean, count: number, oldestMs: number, now: number): RateDecision {
    const resetAtMs = oldestMs + this.windowMs;
    if (!allowed)
      return { allowed, limit: this.limit, remaining: 0, resetAtMs, retryAfterMs: resetAtMs - now, nowMs: now };
    return { allowed, limit: this.limit, remaining: this.limit - count, resetAtMs, retryAfterMs: 0, nowMs: now };
  }

  private checkAlone(key: string): RateDecision {
    if (!this.closed) this.events.fallbackCheck?.();
    return this.fallbackWindow.check(key);
  }

  private fallBack(reason: FallbackReason): void {
    if (!this.onRedis || this.closed) return;
    this.onRedis = false;
    this.events.fallback?.(reason);
    this.probeTimer = setInterval(() => this.probe(), this.probeIntervalMs);
    this.probeTimer.unref();
  }

  /** While falling back: one refusing run of the script (nothing written); back to Redis if it answers. */
  private probe(): void {
    if (this.onRedis || this.probing || this.closed) return;
    this.probing = true;
    this.client
      .outreachSlidingLog(this.probeKey, String(this.clock.now()), String(this.windowMs), '0', '')
      .then(
        () => {
          // Stryker disable next-line ConditionalExpression,LogicalOperator: unreachable while probes run one at a time and only while falling back, and close() fails a probe in flight
          if (this.onRedis || this.closed) return;
          this.onRedis = true;
          clearInterval(this.probeTimer);
          this.events.recovered?.();
        },
        () => {},
      )
      .finally(() => {
        this.probing = false;
      });
  }

  /** Forgets this instance's fallback windows; the shared ones stay (see RateLimiter.clear). */
  clear(): void {
    this.fallbackWindow.clear();
  }

  /** Closes the connection at once; checks still in flight fall back silently. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.probeTimer);
    this.client.disconnect();
  }
}

/** The kind of a failed Redis call, from ioredis' errors (bounded, for the log line). */
function reasonOf(error: unknown): FallbackReason {
  // Stryker disable next-line ConditionalExpression,StringLiteral: ioredis rejects with Error instances only
  if (!(error instanceof Error)) return 'error';
  if (error.message === 'Command timed out') return 'timeout';
  if (error.name === 'ReplyError') return 'error';
  return 'unreachable';
}
