/**
 * The SQLite store's TEMP triggers (src/db/sqlite/change-tracking.ts) are put in place in a turn
 * of their own after the first change stamp a cache asks for. A store closed before that turn
 * (a command that read one stamp and ended) must not fail in it: under Deno, `node:sqlite`
 * throws when a closed connection is asked whether a transaction is open, and a throw in that
 * turn ended the process.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { ROOT } from '../../build/bundle.js';

const DENO = join(ROOT, 'node_modules/deno/deno');

it('lets a store close before its triggers are put in place, under Deno', (t) => {
  if (!existsSync(DENO)) return t.skip('the deno devDependency is not installed');
  const run = spawnSync(DENO, ['run', '--allow-all', 'test/fixtures/deno-store-closed-after-stamp.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /closed after a stamp/);
});
