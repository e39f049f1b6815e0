/** The background worker driver: serial passes, no pile-up behind a slow pass, drain, stop. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { silentLogger } from '../../src/logger.js';
import { createWorker } from '../../src/workers/worker.js';
import { gate } from './helpers.js';

it('runs passes one at a time, folds wakes during a slow pass into one more, drains and stops', async () => {
  let calls = 0;
  let running = 0;
  let hold: ReturnType<typeof gate> | undefined = gate();
  let due = 3;
  const worker = createWorker('test', 3_600_000, async () => {
    calls++;
    running++;
    assert.equal(running, 1, 'passes never overlap');
    if (hold) await hold.promise;
    running--;
    return due > 0 ? due-- : 0;
  }, silentLogger);
  worker.start(); // first pass starts at once and hangs
  for (let i = 0; i < 5; i++) worker.wake();
  await new Promise((r) => setImmediate(r));
  assert.equal(calls, 1);
  hold.open();
  hold = undefined;
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(calls, 2, 'five wakes during the slow pass gave one more pass');
  await worker.drain();
  assert.equal(due, 0);
  await worker.stop();
  const before = calls;
  worker.wake();
  assert.equal(await worker.runOnce(), 0);
  assert.equal(calls, before, 'a stopped worker does nothing');
});
