/**
 * One limiter for every instance (decisions.md §16 "Rate limit across instances"), with real
 * `serve` processes: three of them on one Redis (the shared one at OUTREACH_TEST_REDIS_URL, under
 * a key prefix of this test's own), and 150 requests at once with one token spread over the
 * three: exactly 100 are served, whichever instance each reached.
 *
 * Each process serves its own in-memory copy of the demo data (`--db :memory: --demo`): the demo
 * token has the same id in every copy, and the limiter counts by token id, so the three count one
 * window. (Instances on one PostgreSQL database behind nginx are the multi-instance test of #20.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEMO_TOKEN } from '../../src/seed/demo.js';
import { serveProcess, type ServeProcess } from '../helpers/cli.js';
import { REDIS_URL, redisKeyPrefix, serviceSkip } from '../helpers/services.js';

const skip = await serviceSkip('redis');

describe('three serve processes with limits.store: redis', { skip }, () => {
  const instances: ServeProcess[] = [];
  before(async () => {
    const env = {
      OUTREACH_API_LIMITS_STORE: 'redis',
      OUTREACH_API_REDIS_URL: REDIS_URL,
      OUTREACH_API_REDIS_KEY_PREFIX: redisKeyPrefix('instances'),
      // A loaded machine must not turn a slow answer into a fallback here.
      OUTREACH_API_REDIS_TIMEOUT_MS: '5000',
      OUTREACH_API_LOG_LEVEL: 'warn',
    };
    const args = ['serve', '--db', ':memory:', '--demo', '--port', '0'];
    instances.push(...(await Promise.all([1, 2, 3].map(() => serveProcess(args, env)))));
  });
  after(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
  });

  it('serves exactly 100 of 150 concurrent requests of one token spread over the three', async () => {
    const responses = await Promise.all(
      Array.from({ length: 150 }, async (_, i) => {
        const res = await fetch(`${instances[i % 3]!.origin}/api/public/v1/me`, {
          headers: { authorization: `Bearer ${DEMO_TOKEN}` },
        });
        await res.arrayBuffer();
        return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining') };
      }),
    );
    const served = responses.filter((r) => r.status === 200);
    assert.equal(served.length, 100);
    assert.equal(responses.filter((r) => r.status === 429).length, 50);
    assert.deepEqual(
      served.map((r) => Number(r.remaining)).sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i),
      'each served request saw its own place in the one window',
    );
    for (const instance of instances)
      assert.doesNotMatch(instance.stdout(), /rate limiter:/, 'no instance fell back to its own window');
  });
});
