/**
 * The background worker driver: passes never overlap whatever starts them (timer, wake, runOnce,
 * drain), wakes during a slow pass fold into one more pass, drain, stop. The step only records
 * what happened (the worker swallows a background pass's errors, so nothing is asserted inside
 * it); passes are held and released by gates and observed through promises, never by sleeping.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { silentLogger } from '../../src/logger.js';
import { createWorker } from '../../src/workers/worker.js';
import { gate } from './helpers.js';

it('runs passes one at a time, folds wakes during a slow pass into one more, drains and stops', async () => {
  let calls = 0;
  let running = 0;
  let maxRunning = 0;
  let due = 3;
  /** Gates the next passes wait on, in order; a pass with none runs straight through. */
  const holds: ReturnType<typeof gate>[] = [];
  const startWaiters: (() => void)[] = [];
  const nextStart = () => new Promise<void>((resolve) => startWaiters.push(resolve));
  const hold = () => {
    const g = gate();
    holds.push(g);
    return g;
  };

  const worker = createWorker(
    'test',
    3_600_000,
    async () => {
      calls++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      const held = holds.shift();
      startWaiters.shift()?.();
      if (held) await held.promise;
      running--;
      return due > 0 ? due-- : 0;
    },
    silentLogger,
  );

  // A slow first pass (started by the timer) and five wakes while it runs: one more pass.
  const first = hold();
  let started = nextStart();
  worker.start();
  await started;
  for (let i = 0; i < 5; i++) worker.wake();
  const second = hold();
  started = nextStart();
  first.open();
  await started;
  assert.equal(calls, 2);
  second.open();
  assert.equal(await worker.runOnce(), 1, 'a pass asked for after the folded one');
  assert.equal(calls, 3, 'five wakes during the slow pass gave exactly one more pass');

  // While a pass is held, every other way of starting one queues behind it.
  due = 4;
  const third = hold();
  started = nextStart();
  worker.wake();
  await started;
  const others = [worker.runOnce(), worker.runOnce(), worker.drain(), worker.runOnce()];
  worker.wake();
  worker.wake();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(calls, 4, 'nothing starts while a pass runs');
  third.open();
  await Promise.all(others);
  assert.equal(due, 0, 'drained');
  assert.equal(maxRunning, 1, 'passes never overlap');

  await worker.stop();
  const before = calls;
  worker.wake();
  assert.equal(await worker.runOnce(), 0);
  assert.equal(calls, before, 'a stopped worker does nothing');
  assert.equal(running, 0);
});
