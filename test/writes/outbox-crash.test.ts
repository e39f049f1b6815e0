/**
 * Crash safety of the outbox (decisions.md §7): a server process killed with SIGKILL after it
 * accepted a reply — while its delivery attempt hangs on an SMTP server that never answers —
 * delivers that reply exactly once after a restart with a working SMTP server.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { createToken } from '../../src/repos/tokens.js';
import { seed, startSmtp } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'outreach-crash-'));
const db = join(dir, 'crash.db');
after(() => rmSync(dir, { recursive: true, force: true }));

/** `outreach-api serve` as a child process; resolves with its origin once it listens. */
async function serve(smtpPort: number): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, ['bin/outreach-api.js', 'serve', '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      OUTREACH_API_DB: db,
      OUTREACH_API_LIMITS_REQUESTS_PER_MINUTE: '0',
      OUTREACH_API_PROVIDERS_MAIL: 'smtp',
      OUTREACH_API_SMTP_HOST: '127.0.0.1',
      OUTREACH_API_SMTP_PORT: String(smtpPort),
      OUTREACH_API_SMTP_TIMEOUT_MS: '60000',
      OUTREACH_API_OUTBOX_POLL_INTERVAL_MS: '50',
      OUTREACH_API_OUTBOX_BACKOFF_MS: '200',
    },
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

const exited = (child: ChildProcess) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
const until = async (what: string, check: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

it('delivers a reply accepted before a kill -9 exactly once after the restart', async () => {
  const store = await openStore(db);
  migrate(store);
  seed(store);
  const token = createToken(store, { accountId: 'acct_a', name: 'crash', scopes: ['outreach:send'], expiresAt: null }, new Date().toISOString()).token;
  await store.close();

  // An SMTP server that accepts connections and never says a word: the attempt hangs.
  const sockets: Socket[] = [];
  const mute = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
  const first = await serve((mute.address() as AddressInfo).port);
  try {
    const res = await fetch(`${first.origin}/api/public/v1/projects/prj_a1/sites/site_a1/threads/thr_a1/replies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'Delivered exactly once.', idempotencyKey: 'crash-key-0001' }),
    });
    assert.equal(res.status, 202);
    await until('the delivery attempt', () => sockets.length > 0);
  } finally {
    first.child.kill('SIGKILL');
    await exited(first.child);
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => mute.close(resolve));
  }

  const check = await openStore(db);
  const queued = check.sqlite.prepare("SELECT * FROM thread_messages WHERE body = 'Delivered exactly once.'").all() as Record<string, any>[];
  assert.equal(queued.length, 1);
  assert.equal(queued[0]!.status, 'queued');
  assert.equal(queued[0]!.attempts, 1);
  await check.close();

  const smtp = await startSmtp();
  const second = await serve(smtp.port);
  try {
    await until('the delivery', () => smtp.received.length > 0);
    await new Promise((r) => setTimeout(r, 600)); // several more polls and a backoff: nothing more may go out
    assert.equal(smtp.received.length, 1);
    assert.match(smtp.received[0]!.raw, /Delivered exactly once\./);
  } finally {
    second.child.kill('SIGTERM');
    await exited(second.child);
    await smtp.close();
  }
  const final = await openStore(db);
  const row = final.sqlite.prepare("SELECT status, attempts, sent_at FROM thread_messages WHERE body = 'Delivered exactly once.'").get() as Record<string, any>;
  await final.close();
  assert.equal(row.status, 'sent');
  assert.equal(row.attempts, 2);
  assert.ok(row.sent_at);
});
