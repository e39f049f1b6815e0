/**
 * `serve --ready-file` and `outreach-api wait` (issue #29 item 2), on real processes (the CLI's
 * bundle under node, test/helpers/cli.ts):
 * - the ready file appears whole or not at all (a reader spinning on it from the moment the
 *   server starts never reads a partial file), names the port `--port 0` took, the server's pid,
 *   the admin API with `--fixture` (null without), and the demo token only where it works; it is
 *   removed when the server stops;
 * - a ready file in a directory that takes no file stops `serve` before it serves, in one line;
 * - `wait --ready-file` started before the server exits 0 once the server answers and prints its
 *   URL; `wait` at its timeout exits 1 with the last error (refused, 503, no file).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DEMO_TOKEN } from '../../src/seed/demo.js';
import { VERSION } from '../../src/version.js';
import { cli, cliBundle } from '../helpers/cli.js';
import { freePort, until } from '../helpers/ports.js';
import { type Watched, watch } from '../helpers/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'outreach-ready-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the CLI's bundle with `args` (stdout and stderr kept), in `dir`. */
async function start(args: string[], env: Record<string, string> = {}): Promise<Watched> {
  return watch(
    spawn(process.execPath, [await cliBundle(), ...args], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    }),
  );
}

/** SIGTERM, then the exit code. */
const stop = async (started: Watched) => {
  started.child.kill('SIGTERM');
  return (await started.exit).code;
};

/**
 * Reads `path` in a tight synchronous loop until it exists, and returns what it held: every read
 * of the file must be whole JSON (the loop blocks this process, not the server, which writes).
 */
function spinUntilWhole(path: string, timeoutMs: number): { text: string; reads: number } {
  const deadline = Date.now() + timeoutMs;
  let reads = 0;
  while (Date.now() < deadline) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    reads++;
    JSON.parse(text); // a partial file throws here
    return { text, reads };
  }
  throw new Error(`no ready file at ${path} within ${timeoutMs} ms`);
}

describe('serve --ready-file', () => {
  it('appears whole once the server answers, names the port taken and the demo token, and goes at the stop', async () => {
    const path = join(dir, 'whole.json');
    const server = await start([
      'serve',
      '--demo',
      '--fixture',
      '--db',
      ':memory:',
      '--port',
      '0',
      '--ready-file',
      path,
    ]);
    try {
      const { text } = spinUntilWhole(path, 30_000);
      const ready = JSON.parse(text) as Record<string, unknown>;
      const origin = ready.url as string;
      assert.match(origin, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.notEqual(new URL(origin).port, '0');
      assert.deepEqual(ready, {
        url: origin,
        apiUrl: `${origin}/api/public/v1`,
        adminUrl: `${origin}/__admin`,
        pid: server.child.pid,
        version: VERSION,
        token: DEMO_TOKEN,
      });
      // It answers already, and the banner names the same port.
      const me = await fetch(`${ready.apiUrl}/me`, { headers: { authorization: `Bearer ${DEMO_TOKEN}` } });
      assert.equal(me.status, 200);
      assert.equal((await fetch(`${ready.adminUrl}/requests`)).status, 200);
      await until(() => server.output().includes(`listening on ${origin}\n`), 'the banner');
      // Only the file: its temporary is renamed, not left.
      assert.deepEqual(
        readdirSync(dir).filter((name) => name.includes('whole')),
        ['whole.json'],
      );
      assert.equal(await stop(server), 0);
      assert.equal(existsSync(path), false, 'removed at the stop');
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('from OUTREACH_API_READY_FILE: adminUrl is null without --fixture, and a stale file is replaced', async () => {
    const path = join(dir, 'env.json');
    // A file an earlier run left behind (killed: nothing removed it), naming a server long gone.
    const stale = await start(['serve', '--demo', '--db', ':memory:', '--port', '0', '--ready-file', path]);
    spinUntilWhole(path, 30_000);
    stale.child.kill('SIGKILL');
    await stale.exit;
    const server = await start(['serve', '--demo', '--db', ':memory:', '--port', '0'], {
      OUTREACH_API_READY_FILE: path,
    });
    try {
      await until(
        () => existsSync(path) && JSON.parse(readFileSync(path, 'utf8')).pid === server.child.pid,
        'the new ready file',
      );
      const ready = JSON.parse(readFileSync(path, 'utf8'));
      assert.equal(ready.adminUrl, null);
      assert.equal(ready.token, DEMO_TOKEN);
    } finally {
      await stop(server);
    }
  });

  it('has no token where the demo token is not an active token', async () => {
    const db = join(dir, 'own.db');
    assert.equal((await cli(['--db', db, 'migrate'])).code, 0);
    const created = await cli(['--db', db, 'accounts', 'create', '--email', 'a@example.com', '--name', 'A']);
    assert.equal(created.code, 0, created.stderr);
    const path = join(dir, 'own.json');
    const server = await start(['serve', '--demo', '--db', db, '--port', '0', '--ready-file', path]);
    try {
      const ready = JSON.parse(spinUntilWhole(path, 30_000).text);
      assert.equal('token' in ready, false);
      await until(() => /not the demo's/.test(server.output()), 'the banner');
    } finally {
      await stop(server);
    }
  });

  it('in a directory that takes no file: one line, exit 1, before serving', async () => {
    writeFileSync(join(dir, 'a-file'), '');
    for (const [path, reason] of [
      [join(dir, 'missing/ready.json'), /the directory \S+missing does not exist$/],
      [join(dir, 'a-file/ready.json'), /a-file is not a directory$/],
      [dir, /it is a directory$/],
    ] as const) {
      const result = await cli(['serve', '--demo', '--db', ':memory:', '--port', '0', '--ready-file', path]);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '', 'nothing served, no database loaded');
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0]!, /^outreach-api: cannot write the ready file /);
      assert.match(lines[0]!, reason);
    }
  });
});

/** Runs `outreach-api ARGS` as a process; resolves with its code, output and how long it ran, ms. */
async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const bin = await cliBundle();
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: dir }, (error, stdout, stderr) =>
      resolve({
        code: error ? ((error as { code?: number }).code ?? 1) : 0,
        stdout,
        stderr,
        ms: performance.now() - started,
      }),
    );
  });
}

describe('wait', () => {
  it('started before the server, exits 0 once it answers /readyz, and prints its URL', async () => {
    const path = join(dir, 'waited.json');
    const waiting = run(['wait', '--ready-file', path, '--timeout', '60s']);
    const server = await start(['serve', '--demo', '--db', ':memory:', '--port', '0', '--ready-file', path]);
    try {
      const result = await waiting;
      assert.equal(result.code, 0, result.stderr);
      const ready = JSON.parse(readFileSync(path, 'utf8'));
      assert.equal(result.stdout, `${ready.url}\n`);
      // As a HEALTHCHECK would: --url on the running server.
      const again = await run(['wait', '--url', ready.url, '--timeout', '5s']);
      assert.equal(again.code, 0, again.stderr);
    } finally {
      await stop(server);
    }
  });

  it('exits 1 at the timeout with the last error: refused, not 200, no file', async () => {
    const refused = await run(['wait', '--url', `http://127.0.0.1:${await freePort()}`, '--timeout', '300ms']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^outreach-api: not ready after 300 ms: connect ECONNREFUSED 127\.0\.0\.1:\d+\n$/);
    assert.ok(refused.ms >= 300, `gave up after ${refused.ms} ms`);

    const unready = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((resolve) => unready.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(unready.address() as AddressInfo).port}`;
      const answered = await cli(['wait', '--url', url, '--timeout', '200ms']);
      assert.equal(answered.code, 1);
      assert.equal(answered.stderr, `outreach-api: not ready after 200 ms: GET ${url}/readyz answered 503\n`);
    } finally {
      unready.close();
    }

    const missing = await cli(['wait', '--ready-file', join(dir, 'never.json'), '--timeout', '100ms']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /not ready after 100 ms: no ready file at \S+never\.json yet\n$/);
  });

  it('needs one of --url and --ready-file (exit 2)', async () => {
    assert.equal((await cli(['wait'])).code, 2);
    assert.equal((await cli(['wait', '--url', 'http://127.0.0.1:1', '--ready-file', 'x'])).code, 2);
    assert.equal((await cli(['wait', '--url', 'not a url'])).code, 2);
  });
});
