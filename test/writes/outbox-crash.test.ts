/**
 * Crash safety of the outbox (decisions.md §7): a server process killed with SIGKILL after it
 * accepted a reply — while its delivery attempt hangs on an SMTP server that never answers —
 * delivers that reply once after a restart with a working SMTP server (never lost); and if that
 * attempt was the last of `outbox.maxAttempts`, the restart never attempts it again (never more
 * than maxAttempts) but marks it failed. The killed server is a real process; the restart is a
 * server started in this process on the same database file, with the same configuration.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { silentLogger } from '../../src/logger.js';
import { accountExists, createToken } from '../../src/repos/tokens.js';
import { startServer } from '../../src/server.js';
import { cliBundle } from '../helpers/cli.js';
import { seed, startSmtp, type TestSmtp } from './helpers.js';
import { sqlAll } from '../helpers/sql.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'outreach-crash-'));
const db = join(dir, 'crash.db');
after(() => rmSync(dir, { recursive: true, force: true }));

/** The servers' environment: the database, SMTP on `smtpPort`, a quick outbox, plus `env`. */
const serverEnv = (smtpPort: number, env: Record<string, string>): Record<string, string> => ({
  OUTREACH_API_DB: db,
  OUTREACH_API_LIMITS_REQUESTS_PER_MINUTE: '0',
  OUTREACH_API_PROVIDERS_MAIL: 'smtp',
  OUTREACH_API_SMTP_HOST: '127.0.0.1',
  OUTREACH_API_SMTP_PORT: String(smtpPort),
  OUTREACH_API_SMTP_TIMEOUT_MS: '60000',
  // At least twice the SMTP timeout (decisions.md §16).
  OUTREACH_API_WORKERS_LEASE_MS: '120000',
  OUTREACH_API_OUTBOX_POLL_INTERVAL_MS: '50',
  OUTREACH_API_OUTBOX_BACKOFF_MS: '200',
  ...env,
});

/** `outreach-api serve` as a child process; resolves with its origin once it listens. */
async function serve(
  smtpPort: number,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, [await cliBundle(), 'serve', '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, ...serverEnv(smtpPort, env) },
  });
  let output = '';
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return { child, origin };
}

const exited = (child: ChildProcess) =>
  new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve),
  );
const until = async (what: string, check: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** The database migrated and seeded (once); a new token of acct_a that may send. */
async function sendingToken(): Promise<string> {
  const store = await openStore(db);
  await migrate(store);
  if (!(await accountExists(store.db, 'acct_a'))) await seed(store);
  const { token } = await createToken(
    store.db,
    { accountId: 'acct_a', name: 'crash', scopes: ['outreach:send'], expiresAt: null },
    new Date().toISOString(),
  );
  await store.close();
  return token;
}

/** POSTs `body` as a reply to thr_a1 under idempotency key `key`; resolves with the status. */
async function reply(origin: string, token: string, body: string, key: string): Promise<number> {
  const res = await fetch(`${origin}/api/public/v1/projects/prj_a1/sites/site_a1/threads/thr_a1/replies`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ body, idempotencyKey: key }),
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Accepts `body` as a reply in a server whose SMTP server never answers, waits for the delivery
 * attempt to hang, and kills the process with SIGKILL; returns the message row left behind.
 */
async function acceptThenKill(
  body: string,
  key: string,
  env: Record<string, string> = {},
): Promise<Record<string, any>> {
  const token = await sendingToken();
  // An SMTP server that accepts connections and never says a word: the attempt hangs.
  const sockets: Socket[] = [];
  const mute = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
  const first = await serve((mute.address() as AddressInfo).port, env);
  try {
    assert.equal(await reply(first.origin, token, body, key), 202);
    await until('the delivery attempt', () => sockets.length > 0);
  } finally {
    first.child.kill('SIGKILL');
    await exited(first.child);
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => mute.close(resolve));
  }
  return messageRow(body);
}

async function messageRow(body: string): Promise<Record<string, any>> {
  const check = await openStore(db);
  const rows = (await sqlAll(check, 'SELECT * FROM thread_messages WHERE body = ?', body)) as Record<string, any>[];
  await check.close();
  assert.equal(rows.length, 1);
  return rows[0]!;
}

/**
 * Restarts the server (in this process, as `serve` starts it) with a working SMTP server, lets it
 * poll for a while, and stops it; returns what that server received.
 */
async function restartAndWatch(env: Record<string, string>, until_?: (smtp: TestSmtp) => boolean) {
  const smtp = await startSmtp();
  const config = loadConfig(undefined, serverEnv(smtp.port, env), { 'server.port': 0 });
  const second = await startServer({ config, logger: silentLogger });
  try {
    if (until_) await until('the delivery', () => until_(smtp));
    await new Promise((r) => setTimeout(r, 600)); // several more polls and a backoff: nothing more may go out
    return { received: [...smtp.received], attempts: smtp.attempts };
  } finally {
    await second.close();
    await smtp.close();
  }
}

it('delivers a reply accepted before a kill -9 once after the restart (never lost)', async () => {
  const queued = await acceptThenKill('Delivered once.', 'crash-key-0001');
  assert.equal(queued.status, 'queued');
  assert.equal(queued.attempts, 1);

  const { received } = await restartAndWatch({}, (smtp) => smtp.received.length > 0);
  assert.equal(received.length, 1);
  assert.match(received[0]!.raw, /Delivered once\./);
  const row = await messageRow('Delivered once.');
  assert.equal(row.status, 'sent');
  assert.equal(row.attempts, 2);
  assert.ok(row.sent_at);
});

it('never attempts a reply again after a kill -9 during its last attempt (never more than outbox.maxAttempts)', async () => {
  const env = { OUTREACH_API_OUTBOX_MAX_ATTEMPTS: '1' };
  const queued = await acceptThenKill('Killed on its only attempt.', 'crash-key-0002', env);
  assert.equal(queued.status, 'queued');
  assert.equal(queued.attempts, 1);

  const { attempts } = await restartAndWatch(env);
  assert.equal(attempts, 0, 'no second attempt reached the relay');
  const row = await messageRow('Killed on its only attempt.');
  assert.equal(row.status, 'failed');
  assert.equal(row.attempts, 1);
  assert.match(row.last_error, /stopped during attempt 1 of 1/);
});

it('keeps every reply it acknowledged when killed with SIGKILL amid concurrent replies (group commit, synchronous=full)', async () => {
  const token = await sendingToken();
  // No relay at all: deliveries fail and back off; the replies' own writes are what is looked at.
  const first = await serve(1);
  const acknowledged: string[] = [];
  let killed = false;
  // 16 clients at once, so that replies commit while others' syncs are in flight and share them.
  const client = async (c: number) => {
    for (let i = 0; !killed; i++) {
      const body = `Concurrent reply ${c}-${i}.`;
      const status = await reply(first.origin, token, body, `crash-group-${c}-${i}`).catch(() => null);
      if (status === 202) acknowledged.push(body);
      else if (!killed) assert.fail(`reply ${c}-${i} answered ${status}`);
    }
  };
  const clients = Array.from({ length: 16 }, (_, c) => client(c));
  await until('200 acknowledged replies', () => acknowledged.length >= 200, 60_000);
  first.child.kill('SIGKILL');
  killed = true;
  await exited(first.child);
  await Promise.all(clients);

  const check = await openStore(db);
  const stored = new Set(
    (
      (await sqlAll(check, "SELECT body FROM thread_messages WHERE body LIKE 'Concurrent reply %'")) as {
        body: string;
      }[]
    ).map((r) => r.body),
  );
  await check.close();
  const lost = acknowledged.filter((body) => !stored.has(body));
  assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged replies lost`);
  assert.ok(stored.size >= acknowledged.length);
});
