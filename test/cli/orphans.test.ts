/**
 * No server left behind (issue #29 item 2), on real processes (the CLI's bundle under node):
 * - `serve --exit-with-parent` stops gracefully when its standard input (a pipe) closes, and when
 *   its parent is killed with SIGKILL (standard input /dev/null: only the parent's death tells),
 *   where a server without the flag keeps running (it is opt-in);
 * - a server whose stdout and stderr pipes have lost their reader (what a killed test runner
 *   leaves) keeps serving, and stops promptly on SIGTERM with exit code 0: before the fix its
 *   first banner line ended it with an uncaught EPIPE; and the logger, exiting with a line still
 *   in flight to a closed stdout, ends at once: before the fix its exit flush retried the failed
 *   write every 100 ms for ever (sonic-boom 4's `flushSync`), so a server stopped by SIGTERM ran
 *   on whenever its shutdown was quicker than the failed write's report (2 of 8 tries).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT } from '../../build/bundle.js';
import { cliBundle } from '../helpers/cli.js';
import { sleep, until } from '../helpers/ports.js';
import { readyFileOf, running, watch } from '../helpers/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'outreach-orphans-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `serve` on the demo data in memory, on a free port, writing its ready file to `readyFile`. */
const serveArgs = (readyFile: string, ...more: string[]) => [
  'serve',
  '--demo',
  '--db',
  ':memory:',
  '--port',
  '0',
  '--ready-file',
  readyFile,
  ...more,
];

const killQuietly = (pid: number | undefined) => {
  try {
    if (pid) process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
};

describe('serve --exit-with-parent', () => {
  it('stops gracefully when its standard input closes', async () => {
    const path = join(dir, 'stdin.json');
    const server = watch(
      spawn(process.execPath, [await cliBundle(), ...serveArgs(path, '--exit-with-parent')], {
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    const { child } = server;
    try {
      await readyFileOf(path, server);
      await sleep(200); // still running with its standard input open
      assert.equal(child.exitCode, null);
      const closed = performance.now();
      child.stdin!.end();
      assert.deepEqual(await server.exit, { code: 0, signal: null });
      assert.ok(performance.now() - closed < 2000, `stopped ${performance.now() - closed} ms after stdin closed`);
      assert.match(server.output(), /"reason":"standard input closed".*"msg":"stopped"/);
      assert.equal(existsSync(path), false, 'the ready file is removed as at a SIGTERM');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('stops when its parent is killed with SIGKILL; a server without the flag keeps running', async () => {
    const bundle = await cliBundle();
    const serve = (name: string, flag: string[]) => JSON.stringify([bundle, ...serveArgs(join(dir, name), ...flag)]);
    // The parent: a node process that starts both servers with /dev/null as their standard input.
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `const { spawn } = require('node:child_process');
         for (const args of [${serve('with.json', ['--exit-with-parent'])}, ${serve('without.json', [])}])
           spawn(process.execPath, args, { stdio: 'ignore' });
         setInterval(() => {}, 1000);`,
      ],
      { stdio: 'ignore' },
    );
    let withFlag: number | undefined;
    let withoutFlag: number | undefined;
    try {
      withFlag = (await readyFileOf(join(dir, 'with.json'))).pid;
      withoutFlag = (await readyFileOf(join(dir, 'without.json'))).pid;
      parent.kill('SIGKILL');
      await until(() => !running(withFlag!), 'the server with --exit-with-parent to stop', 2000);
      assert.equal(running(withoutFlag), true, 'opt-in: the other one runs on');
    } finally {
      parent.kill('SIGKILL');
      killQuietly(withFlag);
      killQuietly(withoutFlag);
    }
  });
});

describe('output pipes that lost their reader', () => {
  it('a server keeps running without its output, and stops promptly on SIGTERM', async () => {
    const path = join(dir, 'pipes.json');
    const server = watch(
      spawn(process.execPath, [await cliBundle(), ...serveArgs(path)], { stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const { child } = server;
    try {
      // The reader of both pipes goes away before the server writes a line, as when a test
      // runner is killed: every banner line and log line meets a closed pipe.
      child.stdout!.destroy();
      child.stderr!.destroy();
      const ready = await readyFileOf(path, server);
      assert.equal((await fetch(`${ready.url}/readyz`)).status, 200);
      await sleep(200); // the banner's last line, after the demo password check
      assert.equal(child.exitCode, null, 'still running');
      const signalled = performance.now();
      child.kill('SIGTERM');
      const ended = await Promise.race([server.ended, sleep(3000).then(() => 'still running 3 s after SIGTERM')]);
      assert.deepEqual(ended, { code: 0, signal: null });
      assert.ok(performance.now() - signalled < 3000);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('the logger exits at once with a line still in flight', async () => {
    // Two lines, the first one's write under way when the process exits: the exit's flush meets
    // the closed pipe. It waits for a byte on stdin, so both pipes are closed before it logs.
    const script = `import { createLogger } from ${JSON.stringify(join(ROOT, 'src/logger.ts'))};
      process.stdin.once('data', () => {
        const logger = createLogger();
        logger.log('info', 'first');
        logger.log('info', 'second');
        process.exit(0);
      });`;
    const logging = watch(
      spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: ROOT,
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    const { child } = logging;
    try {
      child.stdout!.destroy();
      child.stderr!.destroy();
      child.stdin!.write('go');
      const ended = await Promise.race([logging.ended, sleep(10_000).then(() => 'still running 10 s later')]);
      assert.deepEqual(ended, { code: 0, signal: null });
    } finally {
      child.kill('SIGKILL');
    }
  });
});
