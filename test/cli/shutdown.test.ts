/**
 * Graceful shutdown of a real server process (decisions.md §15), with a slow provider: a local
 * HTTP server standing in for the `openai` generator, which holds each completion until the test
 * lets it answer (or never). The signal is sent while a regenerate request waits on it:
 * - the request in flight finishes with its normal answer when the provider answers within
 *   `server.shutdownGraceMs`, the listener refuses new connections at once, an idle keep-alive
 *   connection is closed at once, a request that arrives on a kept-alive connection after the
 *   signal is answered 503 with `Connection: close`, and the process exits 0 without waiting for
 *   the rest of the grace;
 * - with a short grace and a provider that never answers, the client gets the 503 envelope at the
 *   end of the grace, the idempotency key is released before the process exits 0, and after a
 *   restart the same key runs the request (neither 409 nor a replay);
 * - each under Deno too, and through `npm start`, whose npm process receives the signal first
 *   (SIGTERM to npm; SIGINT to the whole process group, as a terminal's Ctrl-C sends it). The
 *   SIGTERM case also guards the `exec` in the start script: without it the signal reached only
 *   `sh`, which died and left the server running, orphaned, so the 503 at the end of the grace
 *   never came.
 * Sequenced by events only: the provider seeing the request, the server's log lines, the exit.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { DEMO_PROJECT_ID, DEMO_SITE_ID, DEMO_TOKEN } from '../../src/seed/demo.js';
import { startServer } from '../../src/server.js';
import { cliBundle } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DRAFTS = `/api/public/v1/projects/${DEMO_PROJECT_ID}/sites/${DEMO_SITE_ID}/drafts`;
const SUBJECT = 'Slow subject';

const dir = mkdtempSync(join(tmpdir(), 'outreach-shutdown-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A promise and the function that resolves it. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * The `openai` stand-in. `seen` resolves when a completion request has arrived whole; the answer
 * waits for `answer` (`hold()` arms a new one; `never` keeps it from ever coming).
 */
class SlowProvider {
  readonly server: Server;
  seen = deferred();
  answer = deferred();
  constructor() {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        this.seen.resolve();
        void this.answer.promise.then(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              model: 'local-model',
              choices: [
                {
                  message: {
                    role: 'assistant',
                    content: JSON.stringify({
                      subject: SUBJECT,
                      body: 'A message that took its time to write, and was worth the wait.',
                    }),
                  },
                },
              ],
            }),
          );
        });
      });
    });
  }
  hold(): void {
    this.seen = deferred();
    this.answer = deferred();
  }
  answerAtOnce(): void {
    this.seen = deferred();
    this.answer = deferred();
    this.answer.resolve();
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }
}

/** Runs `fn` with a listening `SlowProvider` of its own (the cases run side by side), closed after. */
async function withProvider(fn: (provider: SlowProvider) => Promise<void>): Promise<void> {
  const provider = new SlowProvider();
  await new Promise<void>((resolve) => provider.server.listen(0, '127.0.0.1', resolve));
  try {
    await fn(provider);
  } finally {
    provider.answer.resolve();
    provider.server.closeAllConnections();
    provider.server.close();
  }
}

interface Served {
  child: ChildProcess;
  origin: string;
  port: number;
  output: () => string;
  /** Resolves once the output matches `pattern`; rejects if the process exits first. */
  printed(pattern: RegExp): Promise<void>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `command` and resolves once the server it runs prints where it listens. */
async function launch(command: string, args: string[], env: Record<string, string>): Promise<Served> {
  const child = spawn(command, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? dir, ...env },
    // Its own process group: a Ctrl-C reaches the whole group, and cleanup can end it all.
    detached: true,
  });
  let output = '';
  const watchers: { pattern: RegExp; done: () => void }[] = [];
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const w of watchers.filter((w) => w.pattern.test(output))) {
      watchers.splice(watchers.indexOf(w), 1);
      w.done();
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const printed = (pattern: RegExp) =>
    pattern.test(output)
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          watchers.push({ pattern, done: resolve });
          void exit.then(() => reject(new Error(`exited before printing ${pattern}:\n${output}`)));
        });
  await printed(/listening on http:\/\/\S+/);
  const origin = /listening on (http:\/\/\S+)/.exec(output)![1]!;
  return { child, origin, port: Number(new URL(origin).port), output: () => output, printed, exit };
}

/** Every process of the group, in case a test failed half-way. */
const cleanup = (served: Served) => {
  try {
    process.kill(-served.child.pid!, 'SIGKILL');
  } catch {
    // Gone already.
  }
};

/** A raw keep-alive connection (so the test sees exactly what the server does with it). */
async function rawConnection(port: number) {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  /** Resolves once `count` complete answers (headers and the Content-Length body) have arrived. */
  const answers = (count: number) =>
    new Promise<string[]>((resolve, reject) => {
      const parse = () => {
        const found: string[] = [];
        let rest = received;
        while (found.length < count) {
          const end = rest.indexOf('\r\n\r\n');
          if (end < 0) return false;
          const length = Number(/content-length: *(\d+)/i.exec(rest.slice(0, end))?.[1] ?? 0);
          if (rest.length < end + 4 + length) return false;
          found.push(rest.slice(0, end + 4 + length));
          rest = rest.slice(end + 4 + length);
        }
        resolve(found);
        return true;
      };
      if (parse()) return;
      const onData = () => {
        if (parse()) socket.off('data', onData);
      };
      socket.on('data', onData);
      void closed.then(() => parse() || reject(new Error(`closed after: ${JSON.stringify(received)}`)));
    });
  return { socket: socket as Socket, answers, closed, received: () => received };
}

/**
 * What a new connection to `port` gets for a GET /healthz: `ECONNREFUSED` (or another connection
 * error code), `closed` (accepted, then closed without an answer) or the answer's status line.
 */
const newConnection = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.once('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    socket.once('close', () => resolve(received ? received.split('\r\n')[0]! : 'closed'));
  });

const keyRow = (db: string, key: string) => {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite.prepare('SELECT state FROM idempotency_keys WHERE key = ?').get(key) as { state: string } | undefined;
  } finally {
    sqlite.close();
  }
};

/** Resolves once `provider` has the request; fails at once if the request is answered first. */
function reachesProvider(provider: SlowProvider, pending: Promise<Response>): Promise<void> {
  let seen = false;
  return Promise.race([
    provider.seen.promise.then(() => {
      seen = true;
    }),
    pending.then(async (res) => {
      if (!seen) assert.fail(`answered before reaching the provider: ${res.status} ${await res.clone().text()}`);
    }),
  ]);
}

/**
 * The suite fails if its cases have not all ended after this long: a server that never got the
 * signal would keep its request waiting for ever. The six take about 10 s on the 2-core machine.
 */
const SUITE_TIMEOUT_MS = 90_000;

// The cases are independent (each its own server, database file and provider): run side by side.
describe('graceful shutdown (SIGTERM, SIGINT)', { concurrency: true, timeout: SUITE_TIMEOUT_MS }, () => {
  const env = (name: string, graceMs: number, provider: SlowProvider) => ({
    OUTREACH_API_DB: join(dir, `${name}.db`),
    OUTREACH_API_SERVER_PORT: '0',
    OUTREACH_API_LIMITS_REQUESTS_PER_MINUTE: '0',
    OUTREACH_API_SERVER_SHUTDOWN_GRACE_MS: String(graceMs),
    OUTREACH_API_PROVIDERS_GENERATOR: 'openai',
    OUTREACH_API_OPENAI_BASE_URL: provider.url,
    OUTREACH_API_OPENAI_MODEL: 'local-model',
    OUTREACH_API_OPENAI_API_KEY_ENV: 'SHUTDOWN_TEST_OPENAI_KEY',
    OUTREACH_API_OPENAI_TIMEOUT_MS: '120000',
    // At least twice the longest provider timeout (decisions.md §16).
    OUTREACH_API_WORKERS_LEASE_MS: '240000',
    SHUTDOWN_TEST_OPENAI_KEY: 'test-key',
  });
  /** `serve --demo` directly, or through `npm start` (whose script is `serve --demo`). */
  const launchers = {
    node: async (e: Record<string, string>) => launch(process.execPath, [await cliBundle(), 'serve', '--demo'], e),
    npm: (e: Record<string, string>) => launch('npm', ['start', '--silent'], e),
    deno: (e: Record<string, string>) =>
      launch(join(ROOT, 'node_modules/.bin/deno'), ['run', '--allow-all', 'src/main.ts', 'serve', '--demo'], e),
  };

  const regenerate = async ({ origin }: { origin: string }, key: string) => {
    const list = (await (
      await fetch(`${origin}${DRAFTS}?limit=1`, { headers: { authorization: `Bearer ${DEMO_TOKEN}` } })
    ).json()) as { data: { data: { id: string }[] } };
    const draftId = list.data.data[0]!.id;
    return fetch(`${origin}${DRAFTS}/${draftId}/regenerate`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEMO_TOKEN}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body: JSON.stringify({ instruction: 'Take your time.' }),
    });
  };

  const sigterm = (s: Served) => s.child.kill('SIGTERM');
  const finishing = [
    { name: 'deno, SIGTERM', launcher: 'deno', signal: sigterm },
    { name: 'node, SIGTERM', launcher: 'node', signal: sigterm },
    {
      name: 'npm start, SIGINT to the process group (Ctrl-C)',
      launcher: 'npm',
      signal: (s: Served) => process.kill(-s.child.pid!, 'SIGINT'),
    },
  ] as const;
  const cut = [
    { name: 'deno, SIGTERM', launcher: 'deno', signal: sigterm },
    { name: 'node, SIGTERM', launcher: 'node', signal: sigterm },
    { name: 'npm start, SIGTERM to npm', launcher: 'npm', signal: sigterm },
  ] as const;

  for (const { name, launcher, signal } of finishing) {
    it(`${name}: the request in flight gets its answer, new connections are refused, exit 0`, () =>
      withProvider(async (provider) => {
        const served = await launchers[launcher](env(`finish-${launcher}`, 60_000, provider));
        try {
          provider.hold();
          // An idle keep-alive connection, and one that has begun its next request.
          const idle = await rawConnection(served.port);
          const busy = await rawConnection(served.port);
          for (const c of [idle, busy]) c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
          await Promise.all([idle.answers(1), busy.answers(1)]);
          busy.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
          const pending = regenerate(served, `shutdown-finish-${launcher}`);
          await reachesProvider(provider, pending);
          signal(served);
          await served.printed(/"msg":"shutting down"/);
          if (launcher === 'node') {
            // A second signal changes nothing (under npm start, a Ctrl-C may reach the server twice).
            served.child.kill('SIGINT');
            await served.printed(/"signal":"SIGINT","msg":"shutdown already under way"/);
          }
          // The request is still waiting on the provider, so the process runs: only the closed
          // listener can refuse this. Deno.serve's shutdown() closes its listener asynchronously: a
          // connection made meanwhile is closed or reset unanswered, or its request refused with 503.
          const fresh = await newConnection(served.port);
          if (launcher === 'deno') assert.match(fresh, /^(ECONNREFUSED|ECONNRESET|closed|HTTP\/1\.1 503 .*)$/);
          else assert.equal(fresh, 'ECONNREFUSED');
          await idle.closed;
          assert.equal(idle.received().split('HTTP/1.1').length - 1, 1, 'nothing more was sent on the idle connection');
          if (launcher === 'deno') {
            // Deno.serve's shutdown closes a connection whose next request is not read whole yet.
            await busy.closed;
            assert.equal(busy.received().split('HTTP/1.1').length - 1, 1, 'the unfinished request got no answer');
          } else {
            // Node reads it; the app refuses it, since it arrived after the signal.
            busy.socket.write('\r\n');
            const [, late] = await busy.answers(2);
            assert.match(late!, /^HTTP\/1\.1 503 /);
            assert.match(late!, /\r\nconnection: close\r\n/i);
            assert.match(late!, /\r\nx-request-id: \S+/i);
            assert.match(late!, /"code":"SERVICE_UNAVAILABLE"/);
            await busy.closed;
          }
          assert.equal(served.child.exitCode, null, 'still running while the request waits on the provider');

          const answered = performance.now();
          provider.answer.resolve();
          const res = await pending;
          const body = (await res.json()) as { ok: boolean; data: { message: { subject: string } } };
          assert.equal(res.status, 200, JSON.stringify(body) + served.output());
          assert.equal(res.headers.get('connection'), 'close');
          assert.equal(body.data.message.subject, SUBJECT);
          const { code } = await served.exit;
          assert.equal(code, 0, served.output());
          // It exits once the work is done, not at the end of the 60 s grace.
          assert.ok(performance.now() - answered < 30_000);
          assert.match(served.output(), /"msg":"stopped"/);
        } finally {
          cleanup(served);
        }
      }));
  }

  for (const { name, launcher, signal } of cut) {
    it(`${name}: at the end of a short grace a request still waiting gets the 503 envelope, its key is released, exit 0`, () =>
      withProvider(async (provider) => {
        const graceMs = 500;
        const e = env(`cut-${launcher}`, graceMs, provider);
        const key = `shutdown-cut-${launcher}`;
        const served = await launchers[launcher](e);
        try {
          provider.hold(); // and never answer
          const pending = regenerate(served, key);
          await reachesProvider(provider, pending);
          assert.equal(keyRow(e.OUTREACH_API_DB, key)?.state, 'in_flight');
          const signalled = performance.now();
          signal(served);
          const res = await pending;
          const waited = performance.now() - signalled;
          assert.equal(res.status, 503);
          assert.equal(res.headers.get('connection'), 'close');
          assert.ok(res.headers.get('x-request-id'));
          assert.equal(res.headers.get('content-type'), 'application/json');
          const body = (await res.json()) as { ok: boolean; error: { code: string; message: string } };
          assert.equal(body.ok, false);
          assert.equal(body.error.code, 'SERVICE_UNAVAILABLE');
          assert.ok(waited >= graceMs - 5, `answered ${waited} ms after the signal, before the grace of ${graceMs} ms`);
          const { code } = await served.exit;
          assert.equal(code, 0, served.output());
          assert.match(served.output(), /requests still running at the end of the shutdown grace were answered 503/);
          // Released by the cut itself, not by the next start's recovery.
          assert.equal(keyRow(e.OUTREACH_API_DB, key), undefined, 'the idempotency key was released');

          if (launcher !== 'node') return; // the restart below is the same whatever started the server
          // The same key after a restart (in this process, on the same file and settings) runs the
          // request: neither 409 nor a stored answer.
          process.env.SHUTDOWN_TEST_OPENAI_KEY = e.SHUTDOWN_TEST_OPENAI_KEY; // the start checks that it is set
          const again = await startServer({
            config: loadConfig(undefined, e, { 'server.port': 0 }),
            logger: silentLogger,
          }).finally(() => delete process.env.SHUTDOWN_TEST_OPENAI_KEY);
          try {
            provider.answerAtOnce();
            const retried = await regenerate(again, key);
            assert.equal(retried.status, 200, await retried.clone().text());
            assert.equal(retried.headers.get('idempotent-replayed'), null);
            assert.equal(
              ((await retried.json()) as { data: { message: { subject: string } } }).data.message.subject,
              SUBJECT,
            );
          } finally {
            await again.close();
          }
        } finally {
          cleanup(served);
        }
      }));
  }
});
