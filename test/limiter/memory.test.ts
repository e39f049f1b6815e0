/** The in-process limiter (limits.store: memory) on its own, with a fake clock (decisions.md §9). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/domain/clock.js';
import { MemoryLimiter } from '../../src/limiter/memory.js';

describe('MemoryLimiter', () => {
  it('slides: a request is allowed again exactly when the oldest counted one leaves the window', () => {
    const clock = new FakeClock(0);
    const limiter = new MemoryLimiter(3, 1000, clock);
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
    const limiter = new MemoryLimiter(5, 1000, clock);
    for (let i = 0; i < 1000; i++) limiter.check(`token-${i}`);
    assert.equal(limiter.size, 1000);
    clock.advance(1001);
    limiter.check('token-new');
    assert.equal(limiter.size, 1);
  });

  it('a sweep started by another key keeps a key with a request still in the window, and it stays limited', () => {
    const clock = new FakeClock(0);
    const limiter = new MemoryLimiter(3, 1000, clock);
    // 'a' fills its window with requests at 0, 10 and 950: the first two leave it before the last.
    for (const at of [0, 10, 950]) {
      clock.set(at);
      limiter.check('a');
    }
    clock.set(1010); // more than one window since the last sweep (at 0)
    limiter.check('b'); // sweeps: 'a' still has its request of 950 in the window
    assert.equal(limiter.size, 2);
    const a = limiter.check('a');
    assert.deepEqual([a.allowed, a.remaining, a.resetAtMs], [true, 1, 1950]);
    assert.equal(limiter.check('a').remaining, 0);
    const refused = limiter.check('a');
    assert.deepEqual([refused.allowed, refused.retryAfterMs], [false, 940]);
  });

  it("answers and sweeps exactly as a log of each key's accepted requests would (2000 seeded checks)", () => {
    const windowMs = 1000;
    const limit = 3;
    const clock = new FakeClock(0);
    const limiter = new MemoryLimiter(limit, windowMs, clock);
    // The model: every accepted request's time per key; the keys held; the time of the last sweep.
    const log = new Map<string, number[]>();
    const held = new Set<string>();
    let lastSweep = 0;
    let seed = 20261125;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 2000; step++) {
      clock.advance(random(4) === 0 ? random(1500) : random(120));
      const now = clock.now();
      const key = `k${random(5)}`;
      if (now - lastSweep > windowMs) {
        for (const k of held) if (Math.max(...log.get(k)!) <= now - windowMs) held.delete(k);
        lastSweep = now;
      }
      const inWindow = (log.get(key) ?? []).filter((at) => at > now - windowMs);
      const decision = limiter.check(key);
      held.add(key);
      const context = `step ${step}, ${key} at ${now}`;
      if (inWindow.length >= limit) {
        assert.equal(decision.allowed, false, context);
        assert.equal(decision.retryAfterMs, inWindow[0]! + windowMs - now, context);
      } else {
        assert.equal(decision.allowed, true, context);
        inWindow.push(now);
        log.set(key, [...(log.get(key) ?? []), now]);
        assert.equal(decision.remaining, limit - inWindow.length, context);
      }
      assert.equal(decision.resetAtMs, inWindow[0]! + windowMs, context);
      assert.equal(limiter.size, held.size, context);
    }
  });

  it('a sweep forgets a key whose newest request left the window, also after its ring buffer wrapped', () => {
    const clock = new FakeClock(0);
    const limiter = new MemoryLimiter(3, 1000, clock);
    for (const at of [0, 100, 200, 1150, 1160]) {
      clock.set(at);
      limiter.check('wrapped'); // at 1150 the request of 0 left and its slot was reused
    }
    clock.set(1200);
    limiter.check('other');
    assert.equal(limiter.size, 2, 'one window since the sweep at 1150: no sweep yet');
    clock.set(2160);
    limiter.check('other'); // sweeps (1010 ms since the last); 'wrapped' was last used at 1160
    assert.equal(limiter.size, 1);
    assert.equal(limiter.check('wrapped').remaining, 2, 'a forgotten key starts a new window');
  });

  it('sweeps at most once per window: an idle key is kept until the first check one window after the last sweep', () => {
    const clock = new FakeClock(0);
    const limiter = new MemoryLimiter(2, 1000, clock);
    limiter.check('a');
    clock.set(1001);
    limiter.check('b'); // sweep at 1001: 'a' (last used at 0) is forgotten
    assert.equal(limiter.size, 1);
    clock.set(1500);
    limiter.check('c');
    clock.set(2001); // 'b' went idle (1001 left the window at 2001), but the last sweep was only 1000 ms ago
    limiter.check('c');
    assert.equal(limiter.size, 2, 'no sweep within one window of the last one');
    clock.set(2002);
    limiter.check('c');
    assert.equal(limiter.size, 1, "the next sweep forgets 'b' and keeps 'c' (used at 1500 and since)");
    clock.set(2500);
    limiter.sweep();
    assert.equal(limiter.size, 1, "'c' still has its requests of 2001 and 2002 in the window");
    limiter.clear();
    assert.equal(limiter.size, 0);
  });

  it('says it counts in this process only: store memory, never shared across instances', () => {
    const limiter = new MemoryLimiter(3, 1000, new FakeClock());
    assert.equal(limiter.store, 'memory');
    assert.equal(limiter.shared, false);
  });

  it('refuses a limit that is not a positive integer', () => {
    for (const limit of [0, -1, 1.5, Number.NaN])
      assert.throws(() => new MemoryLimiter(limit, 1000, new FakeClock()), {
        name: 'RangeError',
        message: 'limit must be a positive integer',
      });
    const one = new MemoryLimiter(1, 1000, new FakeClock());
    assert.deepEqual([one.check('k').allowed, one.check('k').allowed], [true, false], 'a limit of 1 is one request');
  });
});
