/**
 * `server.maxSemiSpaceMb` (`capSemiSpace`, src/cli/memory.ts) in a real Node process: a child
 * keeps a quarter of what it allocates alive for a while (the survivals that make V8 grow its
 * young generation), yielding to the event loop between small rounds as a server does between
 * requests, and reports the largest semi-space it saw. With V8's own growth the semi-space
 * doubles up to 16 MiB; with a cap of 2 MiB it must stay at 2 MiB or below (one doubling past the
 * cap is allowed by the setting's contract, when several collections run in one task, but these
 * small rounds leave no room for it), and with a cap of 4 MiB it must grow to 4 MiB and stop.
 * Starting a worker thread resets V8's growth factor (measured: without the check setting it again
 * at every collection, the semi-space grew to 16 MiB), so a child that starts one after the cap
 * must still stay within one doubling of it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MEMORY_MODULE = pathToFileURL(fileURLToPath(new URL('../../src/cli/memory.ts', import.meta.url))).href;
const dir = mkdtempSync(join(tmpdir(), 'outreach-memory-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const script = join(dir, 'young.mts');
writeFileSync(
  script,
  `import { getHeapSpaceStatistics } from 'node:v8';
import { setImmediate as tick } from 'node:timers/promises';
import { capSemiSpace } from ${JSON.stringify(MEMORY_MODULE)};
const semiMb = () => {
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  return Math.round((young.space_used_size + young.space_available_size) / 2 ** 20);
};
const atStart = semiMb();
const stop = capSemiSpace(Number(process.argv[2]));
if (process.argv[3] === 'worker') {
  // A thread started after the cap puts V8's growth factor back to 2 (as serve's checkpointer
  // and search readers do).
  const { Worker } = await import('node:worker_threads');
  const thread = new Worker('setTimeout(() => {}, 10)', { eval: true });
  await new Promise((done) => thread.once('exit', done));
}
const kept = [];
let largest = 0;
for (let round = 0; round < 1500; round++) {
  for (let i = 0; i < 2000; i++) {
    const o = { i, text: 'row ' + i, list: [i, round] };
    if (i % 4 === 0) kept.push(o);
  }
  if (kept.length > 100000) kept.splice(0, 50000);
  await tick();
  largest = Math.max(largest, semiMb());
}
stop();
console.log(JSON.stringify({ atStart, largest }));
`,
);

/** Runs the child with `maxMb` and returns the semi-space it started with and the largest it saw, MiB. */
function youngGeneration(maxMb: number, thread = false): { atStart: number; largest: number } {
  const out = execFileSync(process.execPath, ['--import', 'tsx', script, String(maxMb), thread ? 'worker' : ''], {
    encoding: 'utf8',
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
  });
  return JSON.parse(out.trim().split('\n').pop()!) as { atStart: number; largest: number };
}

describe('server.maxSemiSpaceMb', () => {
  it('lets V8 grow the young generation with 0, and stops it at the cap otherwise', () => {
    const own = youngGeneration(0);
    assert.equal(own.largest, 16, `V8's own growth reaches 16 MiB: ${JSON.stringify(own)}`);
    const two = youngGeneration(2);
    assert.ok(two.atStart <= 2, `the child starts below the cap: ${JSON.stringify(two)}`);
    assert.ok(two.largest <= 2, `capped at 2 MiB: ${JSON.stringify(two)}`);
    const four = youngGeneration(4);
    assert.equal(four.largest, 4, `grows up to the cap and no further: ${JSON.stringify(four)}`);
    const threaded = youngGeneration(2, true);
    assert.ok(threaded.largest <= 4, `still capped after a worker thread started: ${JSON.stringify(threaded)}`);
  });
});
