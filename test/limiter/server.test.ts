/**
 * The shared limiter in a running server (decisions.md §16 "Rate limit across instances"): while
 * its Redis (a throwaway redis-server of this test's own) cannot be reached, every request is
 * still answered and limited by the instance's own window; the outage is logged once at `warn`,
 * its end once at `info`, and both show in /metrics; the server goes back to Redis by itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LogLevel, Logger } from '../../src/logger.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { freePort, sleep } from '../helpers/ports.js';
import { redisKeyPrefix, serviceSkip, startThrowawayRedis, type ThrowawayRedis } from '../helpers/services.js';

const skip = await serviceSkip('redis');
const METRICS_TOKEN = 'limiter-metrics-token';

/** A logger that keeps every line. */
function capture(): {
  logger: Logger;
  lines: { level: LogLevel; message: string; fields?: Record<string, unknown> }[];
} {
  const lines: { level: LogLevel; message: string; fields?: Record<string, unknown> }[] = [];
  return { lines, logger: { log: (level, message, fields) => lines.push({ level, message, fields }) } };
}
const limiterLines = (lines: { level: LogLevel; message: string }[]) =>
  lines.filter((line) => line.message.startsWith('rate limiter:')).map((line) => line.level);

/** The value of an unlabelled sample in /metrics. */
async function sample(t: TestServer, name: string): Promise<number> {
  const res = await fetch(`${t.origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `${name} in /metrics`);
  return Number(line.slice(name.length + 1));
}

const redisConfig = (url: string) => ({
  'limits.store': 'redis',
  'limits.requestsPerMinute': 3,
  'redis.url': url,
  'redis.keyPrefix': redisKeyPrefix('server'),
  'metrics.enabled': true,
  'metrics.token': METRICS_TOKEN,
});

describe('limits.store: redis in a running server', { skip }, () => {
  let redis: ThrowawayRedis;
  before(async () => {
    redis = await startThrowawayRedis();
  });
  after(() => redis.stop());

  it('serves every request while Redis is down, warns once, counts it, and goes back to Redis by itself', async () => {
    const { logger, lines } = capture();
    const t = await startTestServer({ fixture: 'small', logger, config: redisConfig(redis.url) });
    try {
      const token = await t.mintToken('acct_a', []);
      assert.equal(await sample(t, 'outreach_rate_limit_redis_up'), 1);
      assert.equal((await t.get('/me', token)).headers.get('x-ratelimit-remaining'), '2');

      await redis.stop();
      // Five at once, each finding Redis gone. This instance's own window starts empty: 3 served,
      // then refused; never a 5xx.
      const during = await Promise.all(Array.from({ length: 5 }, async () => (await t.get('/me', token)).status));
      assert.deepEqual(
        during.sort((a, b) => a - b),
        [200, 200, 200, 429, 429],
      );
      assert.deepEqual(limiterLines(lines), ['warn'], 'one warn line for the whole outage');
      assert.equal(lines.find((l) => l.level === 'warn')?.fields?.reason, 'unreachable');
      assert.equal(await sample(t, 'outreach_rate_limit_fallback_checks_total'), 5);
      assert.equal(await sample(t, 'outreach_rate_limit_redis_up'), 0);

      await redis.start(); // an empty Redis on the same port
      const deadline = Date.now() + 15_000;
      while (limiterLines(lines).length < 2) {
        assert.ok(Date.now() < deadline, 'the server went back to Redis');
        await sleep(20);
      }
      assert.deepEqual(limiterLines(lines), ['warn', 'info']);
      assert.equal(await sample(t, 'outreach_rate_limit_redis_up'), 1);
      assert.equal((await t.get('/me', token)).headers.get('x-ratelimit-remaining'), '2', 'counted in Redis again');
      assert.equal(await sample(t, 'outreach_rate_limit_fallback_checks_total'), 5);
    } finally {
      await t.close();
    }
  });

  it('starts and serves when Redis is unreachable from the start, with one warn line', async () => {
    const { logger, lines } = capture();
    const t = await startTestServer({
      fixture: 'small',
      logger,
      config: redisConfig(`redis://127.0.0.1:${await freePort()}`),
    });
    try {
      const token = await t.mintToken('acct_a', []);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await t.get('/me', token)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      assert.deepEqual(limiterLines(lines), ['warn']);
      assert.equal(await sample(t, 'outreach_rate_limit_redis_up'), 0);
    } finally {
      await t.close();
    }
  });
});
