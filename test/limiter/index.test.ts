/** Choosing the limiter's store (limits.store, decisions.md §16), without Redis. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/domain/clock.js';
import { openLimiter, perInstanceLimitNotice } from '../../src/limiter/index.js';

const redis = { url: 'redis://127.0.0.1:1', keyPrefix: 'outreach:', timeoutMs: 500 };

describe('openLimiter', () => {
  it('opens the in-process window for memory, 100 per 60 s by default, and none when the limit is 0', async () => {
    const clock = new FakeClock();
    const limiter = await openLimiter({ store: 'memory', requestsPerMinute: 100, clock, redis });
    assert.equal(limiter?.store, 'memory');
    assert.equal(limiter?.shared, false);
    assert.equal(limiter?.windowMs, 60_000);
    const decision = limiter?.check('tok_a');
    assert.ok(decision && !(decision instanceof Promise), 'the memory store answers without a promise');
    assert.equal(decision.remaining, 99);
    assert.equal(await openLimiter({ store: 'memory', requestsPerMinute: 0, clock, redis }), undefined);
    assert.equal(await openLimiter({ store: 'redis', requestsPerMinute: 0, clock, redis }), undefined);
  });

  it('says at start that limits are per instance only for a shared database with the memory store', () => {
    assert.match(perInstanceLimitNotice('memory', true) ?? '', /counted per instance.*limits\.store to redis/);
    assert.equal(perInstanceLimitNotice('memory', false), undefined);
    assert.equal(perInstanceLimitNotice('redis', true), undefined);
  });
});
