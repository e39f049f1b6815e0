/** Opening the limiter (decisions.md §9). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/domain/clock.js';
import { openLimiter } from '../../src/limiter/index.js';

describe('openLimiter', () => {
  it('opens the in-process window, 100 per 60 s by default, and none when the limit is 0', async () => {
    const clock = new FakeClock();
    const limiter = await openLimiter({ requestsPerMinute: 100, clock });
    assert.equal(limiter?.store, 'memory');
    assert.equal(limiter?.windowMs, 60_000);
    const decision = limiter?.check('tok_a');
    assert.ok(decision && !(decision instanceof Promise), 'the memory store answers without a promise');
    assert.equal(decision.remaining, 99);
    assert.equal(await openLimiter({ requestsPerMinute: 0, clock }), undefined);
  });
});
