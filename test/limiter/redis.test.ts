/**
 * The shared limiter (limits.store: redis, decisions.md §9 and §16) against a real Redis
 * (OUTREACH_TEST_REDIS_URL), with a fake clock: exact across instances (separate clients), the
 * same decisions as the memory limiter, a 429 not counted, keys that expire, and the fallback to
 * the instance's own window while Redis cannot be reached or is slow, with its recovery. Each
 * test uses a key prefix of its own, so suites running at once never share a key. Outages are
 * made on a throwaway `redis-server` child on a free port (never the shared one at 6379).
 */
import assert from 'node:assert/strict';
import { type AddressInfo, createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { FakeClock } from '../../src/domain/clock.js';
import type { FallbackReason, RateDecision } from '../../src/limiter/index.js';
import { MemoryLimiter } from '../../src/limiter/memory.js';
import { RedisLimiter, type RedisLimiterOptions } from '../../src/limiter/redis.js';
import { freePort, sleep } from '../helpers/ports.js';
import {
  REDIS_URL,
  redisKeyPrefix,
  serviceSkip,
  startThrowawayRedis,
  type ThrowawayRedis,
} from '../helpers/services.js';

const skip = await serviceSkip('redis');

/** What a limiter reported through its events. */
function recorder() {
  const seen = { fallbacks: [] as FallbackReason[], recoveries: 0, fallbackChecks: 0 };
  const events = {
    fallback: (reason: FallbackReason) => seen.fallbacks.push(reason),
    recovered: () => seen.recoveries++,
    fallbackCheck: () => seen.fallbackChecks++,
  };
  return { seen, events };
}

/** Polls `condition` every 20 ms until it holds, failing after `ms` (real time: child processes). */
async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('RedisLimiter on a real Redis', { skip }, () => {
  let admin: Redis;
  const opened: RedisLimiter[] = [];
  const open = async (options: Partial<RedisLimiterOptions> & Pick<RedisLimiterOptions, 'clock' | 'keyPrefix'>) => {
    const limiter = await RedisLimiter.open({
      limit: 100,
      windowMs: 60_000,
      url: REDIS_URL,
      timeoutMs: 2000,
      ...options,
    });
    opened.push(limiter);
    return limiter;
  };
  before(() => {
    admin = new Redis(REDIS_URL);
  });
  after(async () => {
    for (const limiter of opened) await limiter.close();
    admin.disconnect();
  });

  it('allows exactly 100 of 150 concurrent checks of one token spread over three instances', async () => {
    const clock = new FakeClock();
    const keyPrefix = redisKeyPrefix('limiter');
    const { seen, events } = recorder();
    const instances = [
      await open({ clock, keyPrefix, events }),
      await open({ clock, keyPrefix, events }),
      await open({ clock, keyPrefix, events }),
    ];
    const decisions = await Promise.all(Array.from({ length: 150 }, (_, i) => instances[i % 3]!.check('tok_burst')));
    assert.deepEqual(seen, { fallbacks: [], recoveries: 0, fallbackChecks: 0 }, 'every check went to Redis');
    assert.deepEqual(
      instances.map((limiter) => [limiter.store, limiter.shared]),
      [
        ['redis', true],
        ['redis', true],
        ['redis', true],
      ],
    );
    const allowed = decisions.filter((d) => d.allowed);
    assert.equal(allowed.length, 100);
    // Each allowed check saw its own place in the window: remaining 99 down to 0, once each.
    assert.deepEqual(
      allowed.map((d) => d.remaining).sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i),
    );
    assert.ok(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0 && d.retryAfterMs === 60_000));
    assert.equal(await admin.zcard(`${keyPrefix}ratelimit:tok_burst`), 100, 'the refused 50 are not in the log');
  });

  it('decides exactly as the memory limiter for the same sequence: sliding edge, 429 not counted, Retry-After', async () => {
    const memoryClock = new FakeClock();
    const redisClock = new FakeClock();
    const memory = new MemoryLimiter(3, 1000, memoryClock);
    const redis = await open({ clock: redisClock, keyPrefix: redisKeyPrefix('limiter'), limit: 3, windowMs: 1000 });
    const both = async (key = 'k'): Promise<RateDecision> => {
      const expected = memory.check(key);
      assert.deepEqual(await redis.check(key), expected);
      return expected;
    };
    const advance = (ms: number) => {
      memoryClock.advance(ms);
      redisClock.advance(ms);
    };
    assert.equal((await both()).remaining, 2);
    advance(400);
    await both();
    await both();
    for (let i = 0; i < 5; i++) {
      const refused = await both(); // refused, and not counted: the window stays as it was
      assert.equal(refused.allowed, false);
      assert.equal(refused.retryAfterMs, 600);
    }
    advance(599);
    assert.equal((await both()).allowed, false);
    advance(1); // exactly when the oldest leaves: the client that waited Retry-After is served
    const allowed = await both();
    assert.equal(allowed.allowed, true);
    assert.equal(allowed.resetAtMs, allowed.nowMs + 400);
    advance(2000); // the whole window passed
    assert.equal((await both()).remaining, 2);
    assert.equal((await both('other')).remaining, 2);
  });

  it('sets each log to expire one window after its newest request, so idle tokens leave nothing', async () => {
    const keyPrefix = redisKeyPrefix('limiter');
    const clock = new FakeClock();
    const limiter = await open({ clock, keyPrefix, limit: 1, windowMs: 60_000 });
    await limiter.check('tok_idle');
    const ttl = await admin.pttl(`${keyPrefix}ratelimit:tok_idle`);
    assert.ok(ttl > 0 && ttl <= 60_000, `PTTL ${ttl}`);
    await limiter.check('tok_idle'); // refused: writes nothing
    const short = await open({ clock, keyPrefix, limit: 5, windowMs: 100 });
    await short.check('tok_brief');
    await until(async () => (await admin.exists(`${keyPrefix}ratelimit:tok_brief`)) === 0, 'the key to expire');
  });

  it('falls back to its own window at once when Redis cannot be reached: one fallback event, every check answered', async () => {
    const closedPort = await freePort();
    const { seen, events } = recorder();
    const clock = new FakeClock();
    const limiter = await open({
      clock,
      keyPrefix: redisKeyPrefix('limiter'),
      url: `redis://127.0.0.1:${closedPort}`,
      limit: 3,
      events,
    });
    assert.equal(limiter.shared, false);
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await limiter.check('tok_a'));
    assert.deepEqual(
      decisions.map((d) => d.allowed),
      [true, true, true, false, false],
      'the limit still holds, counted in this instance',
    );
    assert.deepEqual(seen, { fallbacks: ['unreachable'], recoveries: 0, fallbackChecks: 5 });
  });

  it('opens at its first connection error, not after connectWaitMs; without events; clear and close act on its own window', async () => {
    const closedPort = await freePort();
    const started = performance.now();
    // No events given: none is called. A 10-minute connect wait: the first error ends it.
    const limiter = await open({
      clock: new FakeClock(),
      keyPrefix: redisKeyPrefix('limiter'),
      url: `redis://127.0.0.1:${closedPort}`,
      limit: 2,
      connectWaitMs: 600_000,
    });
    assert.ok(performance.now() - started < 10_000, 'open did not wait for connectWaitMs');
    assert.equal(limiter.shared, false);
    const allowed = async () => (await limiter.check('tok_a')).allowed;
    assert.deepEqual([await allowed(), await allowed(), await allowed()], [true, true, false]);
    limiter.clear();
    assert.equal(await allowed(), true, 'clear forgot the fallback window');
    const { seen, events } = recorder();
    const closing = await open({
      clock: new FakeClock(),
      keyPrefix: redisKeyPrefix('limiter'),
      url: REDIS_URL,
      limit: 2,
      events,
    });
    await closing.close();
    // A check after close is answered by the instance's own window, silently.
    assert.equal((await closing.check('tok_a')).allowed, true);
    assert.deepEqual(seen, { fallbacks: [], recoveries: 0, fallbackChecks: 0 });
  });

  it('falls back on an error reply, and probes once a second by default until Redis answers', async () => {
    const keyPrefix = redisKeyPrefix('limiter');
    const { seen, events } = recorder();
    const limiter = await open({ clock: new FakeClock(), keyPrefix, limit: 2, events });
    // A key of another type under the token's name: the script's ZREMRANGEBYSCORE answers WRONGTYPE.
    await admin.set(`${keyPrefix}ratelimit:tok_string`, 'not a sorted set');
    assert.equal((await limiter.check('tok_string')).allowed, true);
    assert.deepEqual(seen, { fallbacks: ['error'], recoveries: 0, fallbackChecks: 1 });
    // The probe (its own key, which answers) runs a second later, not at once.
    await sleep(200);
    assert.equal(limiter.shared, false, 'no probe within 200 ms');
    await until(() => limiter.shared, 'the probe a second later');
    assert.equal(seen.recoveries, 1);
  });

  it('asks Redis nothing but its checks while Redis answers (no probe), one script call per check', async () => {
    const own = await startThrowawayRedis();
    const stats = new Redis(own.url);
    try {
      const limiter = await open({ clock: new FakeClock(), keyPrefix: redisKeyPrefix('limiter'), url: own.url });
      /** Script runs Redis counted (EVALSHA, and EVAL when the script was not loaded yet). */
      const scriptCalls = async () => {
        const info = await stats.info('commandstats');
        return [...info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)].reduce((n, m) => n + Number(m[2]), 0);
      };
      assert.equal(await scriptCalls(), 0, 'connecting ran no probe');
      await limiter.check('tok_a');
      await limiter.check('tok_a');
      assert.ok((await scriptCalls()) <= 3, 'two checks: two EVALSHA, and one EVAL to load the script');
    } finally {
      stats.disconnect();
      await own.stop();
    }
  });

  it('prints nothing of its own while it cannot connect: the failures reach the checks only', async (t) => {
    const printed = t.mock.method(console, 'error', () => {});
    // A "Redis" that resets every connection: each reconnection attempt fails with ECONNRESET.
    let connections = 0;
    const resetting = createServer((socket) => {
      connections++;
      socket.resetAndDestroy();
    });
    await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = resetting.address() as AddressInfo;
      const limiter = await open({
        clock: new FakeClock(),
        keyPrefix: redisKeyPrefix('limiter'),
        url: `redis://127.0.0.1:${port}`,
      });
      assert.equal((await limiter.check('tok_a')).allowed, true);
      await until(() => connections >= 4, 'three reconnection attempts after open');
      assert.equal(printed.mock.callCount(), 0, printed.mock.calls.map((call) => call.arguments.join(' ')).join('\n'));
      await limiter.close();
    } finally {
      await new Promise((resolve) => resetting.close(resolve));
    }
  });

  describe('on a Redis that goes away and comes back (a throwaway redis-server)', () => {
    let redis: ThrowawayRedis;
    before(async () => {
      redis = await startThrowawayRedis();
    });
    after(() => redis.stop());
    /** A limiter of 3 on the throwaway Redis, probing every 50 ms while it falls back. */
    const openOnThrowaway = (options: Partial<RedisLimiterOptions>) =>
      open({
        clock: new FakeClock(),
        keyPrefix: redisKeyPrefix('limiter'),
        url: redis.url,
        limit: 3,
        probeIntervalMs: 50,
        ...options,
      });

    it('falls back when it stops, warns once, and shares windows again by itself when it is back', async () => {
      const { seen, events } = recorder();
      const limiter = await openOnThrowaway({ events });
      assert.equal(limiter.shared, true);
      assert.equal((await limiter.check('tok_a')).remaining, 2);
      await redis.stop();
      const during = [];
      for (let i = 0; i < 4; i++) during.push(await limiter.check('tok_a'));
      // The fallback window starts empty: this instance alone counts 3, then refuses.
      assert.deepEqual(
        during.map((d) => d.allowed),
        [true, true, true, false],
      );
      assert.equal(limiter.shared, false);
      assert.deepEqual(seen, { fallbacks: ['unreachable'], recoveries: 0, fallbackChecks: 4 });
      await redis.start(); // an empty Redis on the same port
      await until(() => limiter.shared, 'the limiter to use Redis again');
      assert.equal(seen.recoveries, 1);
      assert.equal((await limiter.check('tok_a')).remaining, 2, 'counted in the new Redis');
      assert.deepEqual(seen.fallbacks, ['unreachable']);
      assert.equal(seen.fallbackChecks, 4);
    });

    it('goes back to Redis as soon as it reconnects, without waiting for a probe (and without events)', async () => {
      const limiter = await openOnThrowaway({ probeIntervalMs: 600_000 });
      assert.equal((await limiter.check('tok_ready')).remaining, 2);
      await redis.stop();
      assert.equal((await limiter.check('tok_ready')).allowed, true);
      assert.equal(limiter.shared, false);
      await redis.start();
      await until(() => limiter.shared, 'the reconnection to bring the limiter back');
      assert.equal((await limiter.check('tok_ready')).remaining, 2, 'counted in the new Redis');
    });

    it('falls back within its timeout while Redis hangs, and comes back when it answers', async () => {
      const { seen, events } = recorder();
      const limiter = await openOnThrowaway({ events, timeoutMs: 200 });
      assert.equal((await limiter.check('tok_a')).allowed, true);
      redis.pause();
      try {
        // Three checks in flight at once, each timing out: one fallback, each answered by it.
        const started = performance.now();
        const decisions = await Promise.all([limiter.check('tok_a'), limiter.check('tok_a'), limiter.check('tok_a')]);
        const waited = performance.now() - started;
        assert.deepEqual(
          decisions.map((d) => d.allowed),
          [true, true, true],
        );
        assert.deepEqual(seen.fallbacks, ['timeout']);
        assert.equal(seen.fallbackChecks, 3);
        // Bounded by timeoutMs (200 ms); the slack is for a loaded machine.
        assert.ok(waited < 5000, `waited ${waited} ms`);
        // From now on no check waits for Redis: each is answered by the fallback window at once.
        assert.ok(!(limiter.check('tok_a') instanceof Promise));
      } finally {
        redis.resume();
      }
      await until(() => limiter.shared, 'the limiter to use Redis again');
      assert.equal(seen.recoveries, 1);
      assert.deepEqual(seen.fallbacks, ['timeout']);
    });
  });
});
