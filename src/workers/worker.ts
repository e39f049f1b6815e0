/**
 * A background worker of the server process: a `step` that does a batch of due work and says how
 * much it did, run on an interval timer in production and driven by hand in tests.
 *
 * Runs never overlap: `runOnce` queues behind a run in progress. Timers are unref'd, so a worker
 * never keeps the process alive, and `stop()` waits for the run in progress.
 */
import type { Logger } from '../logger.js';

export interface Worker {
  readonly name: string;
  /** One pass over due work; resolves with the number of items handled. */
  runOnce(): Promise<number>;
  /** Passes until one finds nothing due (work scheduled for later, by the clock, is left). */
  drain(): Promise<void>;
  /** Starts the interval timer (idempotent). */
  start(): void;
  /** Asks for a pass now, without waiting for it (e.g. right after work was queued). */
  wake(): void;
  /**
   * Stops the timer and waits for the pass in progress, which its `stopping` signal tells to end
   * after the item in hand (decisions.md §15).
   */
  stop(): Promise<void>;
  /**
   * Runs every later pass inside `wrap`: the fixture's request gate, so that a reset never
   * overlaps a pass (decisions.md §14).
   */
  runInside(wrap: (pass: () => Promise<number>) => Promise<number>): void;
}

/**
 * @param intervalMs between timer passes, ms.
 * @param step one pass; resolves with the number of items handled. Its `stopping` signal aborts
 * when `stop()` is called: a pass over several items returns after the item in hand.
 */
export function createWorker(
  name: string,
  intervalMs: number,
  step: (stopping: AbortSignal) => Promise<number>,
  logger: Logger,
): Worker {
  const stopping = new AbortController();
  let tail: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let busy = false;
  let again = false;
  let wrap = (pass: () => Promise<number>) => pass();

  const runOnce = (): Promise<number> => {
    const run = tail.then(() => (stopped ? 0 : wrap(() => step(stopping.signal))));
    tail = run.catch(() => undefined);
    return run;
  };
  // Timer ticks and wakes never pile up behind a slow pass (a hanging SMTP server): while one
  // runs they only ask for one more pass after it.
  const background = () => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    runOnce()
      .catch((error: unknown) =>
        logger.log('error', 'background worker failed', {
          worker: name,
          error: error instanceof Error ? error.message : String(error),
        }),
      )
      .finally(() => {
        busy = false;
        if (again && !stopped) {
          again = false;
          background();
        }
      });
  };

  return {
    name,
    runOnce,
    async drain() {
      while ((await runOnce()) > 0);
    },
    start() {
      if (timer || stopped) return;
      timer = setInterval(background, intervalMs);
      timer.unref();
      background();
    },
    wake() {
      if (!stopped) background();
    },
    runInside(wrapper) {
      wrap = wrapper;
    },
    async stop() {
      stopped = true;
      stopping.abort();
      if (timer) clearInterval(timer);
      timer = undefined;
      await tail;
    },
  };
}
