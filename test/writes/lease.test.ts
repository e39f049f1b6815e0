/**
 * The lease-and-retry pass of the outbox and contact discovery (src/workers/lease.ts) on its own:
 * a queue in memory records what the pass asks of it, and a fake clock moves during attempts.
 * Which items are taken and in what order, a lease lost to another pass, which failures are
 * retried and when, when an item is given up, what is logged, the stop signal, and a failure to
 * record a success.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/domain/clock.js';
import { ProviderError } from '../../src/providers/types.js';
import { type AttemptFailure, type LeasedQueue, leasedPass, retryDelayMs } from '../../src/workers/lease.js';

interface Item {
  id: string;
  /** Attempts made before this pass. */
  attempts: number;
}

const BACKOFF = 1000;
const START = Date.UTC(2026, 10, 1, 12, 0, 0);

/**
 * A queue over `items`: `due` answers them all (the pass takes at most its batch), `lease` gives
 * the next attempt number unless the id is in `taken`, and `attempt` runs `attempts[id]` (which
 * may throw) after moving the clock by 10 ms. Everything the pass calls is recorded in `calls`.
 */
function memoryQueue(
  clock: FakeClock,
  items: Item[],
  options: {
    taken?: string[];
    attempt?: (item: Item, attempt: number) => Promise<string>;
    succeeded?: (item: Item, result: string) => Promise<void>;
    maxAttempts?: number;
  } = {},
) {
  const calls: unknown[][] = [];
  const queue: LeasedQueue<Item, string> = {
    due: async (now, limit) => {
      calls.push(['due', now, limit]);
      return items.slice(0, limit);
    },
    lease: async (item, now) => {
      calls.push(['lease', item.id, now]);
      return options.taken?.includes(item.id) ? null : item.attempts + 1;
    },
    attempt: async (item, attempt) => {
      calls.push(['attempt', item.id, attempt]);
      clock.advance(10);
      return options.attempt ? options.attempt(item, attempt) : `sent ${item.id}`;
    },
    succeeded: async (item, result) => {
      calls.push(['succeeded', item.id, result]);
      await options.succeeded?.(item, result);
    },
    failed: async (item, failure: AttemptFailure) => {
      calls.push(['failed', item.id, failure]);
    },
    maxAttempts: () => options.maxAttempts ?? 3,
    failureLog: { message: 'test attempt failed', fields: (item) => ({ itemId: item.id }) },
  };
  return { queue, calls };
}

function recordingLogger() {
  const lines: unknown[][] = [];
  return { lines, logger: { log: (...line: unknown[]) => lines.push(line) } };
}

describe('leasedPass', () => {
  it('takes up to a batch of due items, leases and attempts each in order, and records each success', async () => {
    const clock = new FakeClock(START);
    const items = ['a', 'b', 'c'].map((id) => ({ id, attempts: 0 }));
    const { queue, calls } = memoryQueue(clock, items);
    const { logger, lines } = recordingLogger();
    const taken = await leasedPass(queue, { clock, logger, batch: 2, backoffMs: BACKOFF })();
    assert.equal(taken, 2);
    assert.deepEqual(calls, [
      ['due', START, 2],
      ['lease', 'a', START],
      ['attempt', 'a', 1],
      ['succeeded', 'a', 'sent a'],
      ['lease', 'b', START + 10],
      ['attempt', 'b', 1],
      ['succeeded', 'b', 'sent b'],
    ]);
    assert.deepEqual(lines, []);
  });

  it('skips an item whose lease another pass took, and still counts it', async () => {
    const clock = new FakeClock(START);
    const items = ['a', 'b'].map((id) => ({ id, attempts: 0 }));
    const { queue, calls } = memoryQueue(clock, items, { taken: ['a'] });
    const taken = await leasedPass(queue, { clock, logger: recordingLogger().logger, batch: 20, backoffMs: BACKOFF })();
    assert.equal(taken, 2);
    assert.deepEqual(
      calls.filter(([call]) => call !== 'due' && call !== 'lease'),
      [
        ['attempt', 'b', 1],
        ['succeeded', 'b', 'sent b'],
      ],
    );
  });

  it('retries a failed attempt after backoffMs × 2^(attempt − 1) from when the failure was seen, and logs it', async () => {
    const clock = new FakeClock(START);
    const items = [
      { id: 'first', attempts: 0 },
      { id: 'second', attempts: 1 },
    ];
    const { queue, calls } = memoryQueue(clock, items, {
      attempt: async () => {
        throw new Error('connection reset');
      },
    });
    const { logger, lines } = recordingLogger();
    assert.equal(await leasedPass(queue, { clock, logger, batch: 20, backoffMs: BACKOFF })(), 2);
    const failures = calls.filter(([call]) => call === 'failed');
    assert.deepEqual(failures, [
      [
        'failed',
        'first',
        {
          attempt: 1,
          error: 'connection reset',
          retryable: true,
          givenUp: false,
          now: START + 10,
          retryAt: START + 1010,
        },
      ],
      [
        'failed',
        'second',
        {
          attempt: 2,
          error: 'connection reset',
          retryable: true,
          givenUp: false,
          now: START + 20,
          retryAt: START + 2020,
        },
      ],
    ]);
    assert.ok(!calls.some(([call]) => call === 'succeeded'), 'a failed attempt is not a success');
    assert.deepEqual(lines, [
      ['warn', 'test attempt failed', { itemId: 'first', attempt: 1, retryable: true, error: 'connection reset' }],
      ['warn', 'test attempt failed', { itemId: 'second', attempt: 2, retryable: true, error: 'connection reset' }],
    ]);
  });

  it('gives an item up on its last allowed attempt, or at once when the provider says it is not retryable', async () => {
    const clock = new FakeClock(START);
    const items = [
      { id: 'before-last', attempts: 1 },
      { id: 'last', attempts: 2 },
      { id: 'permanent', attempts: 0 },
      { id: 'transient', attempts: 0 },
      { id: 'thrown-text', attempts: 0 },
    ];
    const { queue, calls } = memoryQueue(clock, items, {
      maxAttempts: 3,
      attempt: async (item) => {
        if (item.id === 'permanent') throw new ProviderError('550 mailbox unavailable', false);
        if (item.id === 'transient') throw new ProviderError('451 try again later', true);
        if (item.id === 'thrown-text') throw 'not an Error';
        throw new Error('timed out');
      },
    });
    await leasedPass(queue, { clock, logger: recordingLogger().logger, batch: 20, backoffMs: BACKOFF })();
    const outcome = Object.fromEntries(
      calls
        .filter(([call]) => call === 'failed')
        .map(([, id, f]) => {
          const { attempt, error, retryable, givenUp } = f as AttemptFailure;
          return [id, { attempt, error, retryable, givenUp }];
        }),
    );
    assert.deepEqual(outcome, {
      'before-last': { attempt: 2, error: 'timed out', retryable: true, givenUp: false },
      last: { attempt: 3, error: 'timed out', retryable: true, givenUp: true },
      permanent: { attempt: 1, error: '550 mailbox unavailable', retryable: false, givenUp: true },
      transient: { attempt: 1, error: '451 try again later', retryable: true, givenUp: false },
      'thrown-text': { attempt: 1, error: 'not an Error', retryable: true, givenUp: false },
    });
  });

  it('stops before the next item once stopping aborts; the item in hand is finished and recorded', async () => {
    const clock = new FakeClock(START);
    const stop = new AbortController();
    const items = ['a', 'b', 'c'].map((id) => ({ id, attempts: 0 }));
    const { queue, calls } = memoryQueue(clock, items, {
      attempt: async (item) => {
        stop.abort();
        return `sent ${item.id}`;
      },
    });
    const pass = leasedPass(queue, { clock, logger: recordingLogger().logger, batch: 20, backoffMs: BACKOFF });
    await pass(stop.signal);
    assert.deepEqual(
      calls.filter(([call]) => call !== 'due'),
      [
        ['lease', 'a', START],
        ['attempt', 'a', 1],
        ['succeeded', 'a', 'sent a'],
      ],
    );
    calls.length = 0;
    await pass(stop.signal);
    assert.deepEqual(calls, [['due', START + 10, 20]], 'a pass started after the stop takes nothing on');
  });

  it('fails the pass when recording a success fails, without taking it for a failed attempt', async () => {
    const clock = new FakeClock(START);
    const items = ['a', 'b'].map((id) => ({ id, attempts: 0 }));
    const { queue, calls } = memoryQueue(clock, items, {
      succeeded: async () => {
        throw new Error('database is locked');
      },
    });
    const pass = leasedPass(queue, { clock, logger: recordingLogger().logger, batch: 20, backoffMs: BACKOFF });
    await assert.rejects(pass(), /database is locked/);
    assert.ok(!calls.some(([call]) => call === 'failed'));
    assert.ok(!calls.some(([call, id]) => call === 'lease' && id === 'b'), 'the pass ended there');
  });

  it('works without a succeeded step', async () => {
    const clock = new FakeClock(START);
    const { queue, calls } = memoryQueue(clock, [{ id: 'a', attempts: 0 }]);
    delete queue.succeeded;
    assert.equal(await leasedPass(queue, { clock, logger: recordingLogger().logger, batch: 1, backoffMs: 5 })(), 1);
    assert.deepEqual(calls.at(-1), ['attempt', 'a', 1]);
  });
});

it('retryDelayMs doubles from backoffMs: 1, 2, 4, 8 × backoffMs', () => {
  assert.deepEqual(
    [1, 2, 3, 4].map((attempt) => retryDelayMs(BACKOFF, attempt)),
    [1000, 2000, 4000, 8000],
  );
  assert.equal(retryDelayMs(250, 1), 250);
});
