/** The sliding-window limiter on its own, with a fake clock (decisions.md §9). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../src/domain/clock.js';
import { SlidingWindowLimiter } from '../src/limiter/sliding-window.js';

describe('SlidingWindowLimiter', () => {
  it('slides: a request is allowed again exactly when the oldest counted one leaves the window', () => {
    const clock = new FakeClock(0);
    const limiter = new SlidingWindowLimiter(3, 1000, clock);
    assert.equal(limiter.check('k').remaining, 2);
    clock.advance(400);
    limiter.check('k');
    limiter.check('k');
    const refused = limiter.check('k');
    assert.equal(refused.allowed, false);
    assert.equal(refused.retryAfterMs, 600);
    assert.equal(refused.resetAtMs, 1000);
    clock.advance(599);
    assert.equal(limiter.check('k').allowed, false);
    clock.advance(1);
    const allowed = limiter.check('k');
    assert.equal(allowed.allowed, true);
    assert.equal(allowed.remaining, 0);
    assert.equal(allowed.resetAtMs, 1400);
  });

  it('forgets idle keys, so memory is bounded by the keys in use', () => {
    const clock = new FakeClock(0);
    const limiter = new SlidingWindowLimiter(5, 1000, clock);
    for (let i = 0; i < 1000; i++) limiter.check(`token-${i}`);
    assert.equal(limiter.size, 1000);
    clock.advance(1001);
    limiter.check('token-new');
    assert.equal(limiter.size, 1);
  });

  it('refuses a limit that is not a positive integer', () => {
    assert.throws(() => new SlidingWindowLimiter(0, 1000, new FakeClock()), RangeError);
  });
});
