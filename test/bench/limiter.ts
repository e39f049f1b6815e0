/**
 * Micro-benchmark of the per-token limiter (src/limiter/memory.ts): the cost of one
 * `check` and the memory it holds per token. Run in its own process with `--expose-gc` (run.ts
 * does this), printing one JSON object:
 *
 *   node --expose-gc --import tsx test/bench/limiter.ts
 *
 * Cases, each with the limiter's default limit (100 per 60 s) and a clock that moves a fixed
 * step per check (so the result does not depend on Date.now()'s own cost):
 * - one token, steady state: every check lets one old request leave and one in (allowed);
 * - one token, full window: every check is refused;
 * - 10,000 tokens in turn, steady state (allowed);
 * Memory: heap held with 1,000 / 10,000 / 100,000 tokens each with a full window, and after
 * the window has passed (the next check sweeps idle tokens away).
 *
 * `redis` (`limits.store: redis`, src/limiter/redis.ts), when a Redis answers at
 * `OUTREACH_TEST_REDIS_URL` (default redis://127.0.0.1:6379; else `redis: null`), under a key
 * prefix of its own that expires by itself: µs per check one after another (a round trip each,
 * best of 5 × 2,000) and with 16 checks in flight at a time (10,000 in all, best of 5); Redis's
 * own `MEMORY USAGE` of one token's log with a full window (100 members).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Clock } from '../../src/domain/clock.js';
import { MemoryLimiter } from '../../src/limiter/memory.js';
import { RedisLimiter } from '../../src/limiter/redis.js';

const LIMIT = 100;
const WINDOW_MS = 60_000;

class StepClock implements Clock {
  ms = 1_700_000_000_000;
  step = 0;
  now(): number {
    return (this.ms += this.step);
  }
}

/** ns per check over `checks` calls, best of `rounds`. */
function timeChecks(
  limiter: MemoryLimiter,
  keys: string[],
  checks: number,
  rounds = 5,
): { nsPerCheck: number; allowedShare: number } {
  let best = Infinity;
  let allowed = 0;
  for (let r = 0; r < rounds; r++) {
    allowed = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < checks; i++) if (limiter.check(keys[i % keys.length]!).allowed) allowed++;
    const ns = Number(process.hrtime.bigint() - t0) / checks;
    best = Math.min(best, ns);
  }
  return { nsPerCheck: best, allowedShare: allowed / checks };
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
};

/** The Redis store's cost per check and per token, or null when no Redis answers. */
async function redisCase() {
  const url = process.env.OUTREACH_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const keyPrefix = `outreach-bench:${randomBytes(4).toString('hex')}:`;
  const clock = new StepClock();
  clock.step = WINDOW_MS / LIMIT; // steady state: every check allowed
  const limiter = await RedisLimiter.open({
    limit: LIMIT,
    windowMs: WINDOW_MS,
    clock,
    url,
    keyPrefix,
    timeoutMs: 5000,
  });
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    if (!limiter.shared) return null;
    let sequentialUs = Infinity;
    for (let round = 0; round < 5; round++) {
      const t0 = performance.now();
      for (let i = 0; i < 2000; i++) await limiter.check('tok_a');
      sequentialUs = Math.min(sequentialUs, ((performance.now() - t0) * 1000) / 2000);
    }
    let concurrentUs = Infinity;
    for (let round = 0; round < 5; round++) {
      let next = 0;
      const worker = async () => {
        while (next < 10_000) {
          next++;
          await limiter.check(`tok_${next % 1000}`);
        }
      };
      const t0 = performance.now();
      await Promise.all(Array.from({ length: 16 }, worker));
      concurrentUs = Math.min(concurrentUs, ((performance.now() - t0) * 1000) / 10_000);
    }
    if (!limiter.shared) return null;
    await admin.connect();
    const bytesPerFullToken = Number(await admin.memory('USAGE', `${keyPrefix}ratelimit:tok_a`));
    return { usPerCheckSequential: sequentialUs, usPerCheck16InFlight: concurrentUs, bytesPerFullToken };
  } finally {
    await limiter.close();
    admin.disconnect();
  }
}

async function main() {
  const memory: { tokens: number; bytesPerToken: number; heldAfterWindow: number; keysAfterWindow: number }[] = [];
  for (const tokens of [1_000, 10_000, 100_000]) {
    const clock = new StepClock();
    const keys = Array.from({ length: tokens }, (_, i) => `tok_${i}`);
    const before = heap();
    let limiter: MemoryLimiter | undefined = new MemoryLimiter(LIMIT, WINDOW_MS, clock);
    for (let i = 0; i < LIMIT; i++) for (const k of keys) limiter.check(k);
    const full = heap();
    clock.ms += WINDOW_MS + 1;
    limiter.check('tok_after'); // sweeps every token idle for a whole window
    const after = heap();
    memory.push({
      tokens,
      bytesPerToken: Math.round((full - before) / tokens),
      heldAfterWindow: Math.max(0, after - before),
      keysAfterWindow: limiter.size,
    });
    limiter = undefined;
  }

  const checks = 2_000_000;
  const cases: Record<string, { nsPerCheck: number; allowedShare: number }> = {};

  {
    const clock = new StepClock();
    const limiter = new MemoryLimiter(LIMIT, WINDOW_MS, clock);
    clock.step = WINDOW_MS / LIMIT; // one request leaves as one arrives
    cases.oneTokenAllowed = timeChecks(limiter, ['tok_a'], checks);
  }
  {
    const clock = new StepClock();
    const limiter = new MemoryLimiter(LIMIT, WINDOW_MS, clock);
    for (let i = 0; i < LIMIT; i++) limiter.check('tok_a');
    clock.step = 0.00001; // the window stays full
    cases.oneTokenRefused = timeChecks(limiter, ['tok_a'], checks);
  }
  {
    const clock = new StepClock();
    const limiter = new MemoryLimiter(LIMIT, WINDOW_MS, clock);
    const keys = Array.from({ length: 10_000 }, (_, i) => `tok_${i}`);
    clock.step = WINDOW_MS / LIMIT / keys.length;
    for (const k of keys) limiter.check(k);
    cases.tenThousandTokensAllowed = timeChecks(limiter, keys, checks);
  }

  const worst = Math.max(...Object.values(cases).map((c) => c.nsPerCheck));
  const redis = await redisCase();
  process.stdout.write(
    `${JSON.stringify({ limit: LIMIT, windowMs: WINDOW_MS, checks, cases, worstNsPerCheck: worst, memory, redis })}\n`,
  );
}

await main();
