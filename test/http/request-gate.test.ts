/** The request gate: an exclusive section waits for the requests in flight and holds new ones. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestGate } from '../../src/http/request-gate.js';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

test('exclusive runs after the requests in flight and before the ones that arrive meanwhile', async () => {
  const gate = new RequestGate();
  const events: string[] = [];
  const first = deferred();
  const inFlight = gate.run(async () => {
    events.push('request 1 starts');
    await first.promise;
    events.push('request 1 ends');
  });
  const section = gate.exclusive(() => {
    events.push('exclusive');
  });
  const later = gate.run(async () => {
    events.push('request 2 starts');
  });
  await Promise.resolve();
  assert.equal(gate.size, 1);
  first.resolve();
  await Promise.all([inFlight, section, later]);
  assert.deepEqual(events, ['request 1 starts', 'request 1 ends', 'exclusive', 'request 2 starts']);
  assert.equal(gate.size, 0);
  await gate.drain();
});

test('a failing exclusive section still lets requests go on', async () => {
  const gate = new RequestGate();
  await assert.rejects(
    gate.exclusive(() => {
      throw new Error('boom');
    }),
  );
  assert.equal(await gate.run(async () => 'served'), 'served');
});
