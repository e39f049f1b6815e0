/**
 * The inbox sync on PostgreSQL (decisions.md §16, §17), against a real PostgreSQL (a database of
 * this file's own, opened with `openStore` and migrated with sql/postgres/) and a real Dovecot:
 * two instances, each with its own store (its own connection pool), syncing at once store every
 * message once, whether the lease keeps the second one off a connection or two connections of one
 * site hold the same replies; and the sync worker of `serve --db postgres://…`, run by two server
 * processes on the one database, stores each new message once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../src/domain/clock.js';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { runInboxPass } from '../../src/workers/inbox/pass.js';
import type { ConnectionSummary } from '../../src/workers/inbox/types.js';
import { serveProcess, type ServeProcess } from '../helpers/cli.js';
import { startDovecot, type TestDovecot } from '../helpers/dovecot.js';
import { sleep } from '../helpers/ports.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';
import { sqlAll, sqlGet, sqlRun } from '../helpers/sql.js';
import { ANA, PASSWORD, mail, outboxId } from './helpers.js';

const skip = (await serviceSkip('postgres')) || (await serviceSkip('dovecot'));
const T0 = '2026-10-01T09:00:00.000Z';

/** Polls `check` every 20 ms until it holds; fails after `timeoutMs`. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

describe('the inbox sync on PostgreSQL, two instances at once', { skip }, () => {
  let database: TestDatabase;
  let dovecot: TestDovecot;
  /** The test's own store, for the dataset and the assertions. */
  let store: Store;
  const instances: Store[] = [];
  const clock = new FakeClock();
  /** An instance: a store of its own (its own pool of 4) on the test database. */
  const instance = async () => {
    const opened = await openStore(database.url, { poolSize: 4 });
    instances.push(opened);
    return opened;
  };
  const mailboxes = (connections: Record<string, { user: string }>) =>
    Object.fromEntries(
      Object.entries(connections).map(([id, { user }]) => [
        id,
        { host: dovecot.host, port: dovecot.port, secure: false, user, passwordEnv: 'PW' },
      ]),
    );
  const pass = async (connections: Record<string, { user: string }>, holder: string) =>
    runInboxPass(
      {
        store: await instance(),
        clock,
        config: loadConfig(undefined, {}, { 'inbox.connections': mailboxes(connections) }),
        logger: silentLogger,
        env: { PW: PASSWORD },
      },
      { holder },
    );

  before(async () => {
    database = await createTestDatabase('inbox');
    dovecot = await startDovecot({ pg1: PASSWORD, pg2: PASSWORD, pg3: PASSWORD, pg4: PASSWORD });
    store = await openStore(database.url);
    await migrate(store);
    const rows: [string, string][] = [
      ['accounts (id, email, name, plan, created_at, updated_at)', `'acct', 'a@x.example', 'A', 'pro', ?, ?`],
      ['projects (id, account_id, name, created_at, updated_at)', `'prj', 'acct', 'P', ?, ?`],
      [
        'sites (id, project_id, name, domain, url, status, created_at, updated_at)',
        `'site', 'prj', 'S', 'trailgear.example', 'https://trailgear.example/', 'active', ?, ?`,
      ],
      [
        'prospects (id, site_id, project_id, status, url, domain, created_at, updated_at)',
        `'pr', 'site', 'prj', 'proposed', 'https://blog.example/', 'blog.example', ?, ?`,
      ],
      [
        'contacts (id, prospect_id, site_id, project_id, email, status, verification_status, created_at, updated_at)',
        `'con', 'pr', 'site', 'prj', '${ANA}', 'active', 'unverified', ?, ?`,
      ],
      [
        'threads (id, site_id, project_id, prospect_id, contact_id, provider_thread_id, status, outcome, classification, outbound_count, created_at, updated_at)',
        `'thr', 'site', 'prj', 'pr', 'con', 'gm-thr', 'awaiting_reply', 'none', 'unclassified', 1, ?, ?`,
      ],
      [
        'thread_messages (id, thread_id, direction, status, from_email, body, sent_at, created_at, updated_at)',
        `'msg_out', 'thr', 'outbound', 'sent', 'me@trailgear.example', 'An idea', ?, ?, ?`,
      ],
    ];
    for (const id of ['conn_a', 'conn_b', 'conn_c'])
      rows.push([
        'email_connections (id, site_id, project_id, provider, status, account_email, created_at, updated_at)',
        `'${id}', 'site', 'prj', 'smtp', 'connected', 'me@trailgear.example', ?, ?`,
      ]);
    for (const [table, values] of rows) {
      const params = values.split('?').length - 1;
      await sqlRun(store, `INSERT INTO ${table} VALUES (${values})`, ...Array<string>(params).fill(T0));
    }
  });
  after(async () => {
    for (const opened of instances) await opened.close();
    await store?.close();
    await dovecot?.stop();
    await database?.drop();
  });

  const replies = (user: string, from: number, count: number, receivedAt = clock.now()) => {
    for (let n = from; n < from + count; n++)
      dovecot.deliver(
        user,
        mail({ messageId: `<pg${n}@blog.example>`, inReplyTo: outboxId('msg_out'), body: `Reply ${n}: sounds good.` }),
        { receivedAt },
      );
  };
  const inbound = async () =>
    Number((await sqlGet(store, "SELECT count(*) AS n FROM thread_messages WHERE direction = 'inbound'"))!.n);
  const threadCount = async () =>
    Number((await sqlGet(store, "SELECT inbound_count FROM threads WHERE id = 'thr'"))!.inbound_count);

  it('lets one instance sync a connection while the other finds it busy, and stores each message once', async () => {
    replies('pg1', 0, 120);
    const [a, b] = await Promise.all([
      pass({ conn_a: { user: 'pg1' } }, 'inbox_one'),
      pass({ conn_a: { user: 'pg1' } }, 'inbox_two'),
    ]);
    assert.deepEqual([a[0]!.status, b[0]!.status].sort(), ['busy', 'ok']);
    assert.equal(a[0]!.matched + b[0]!.matched, 120);
    assert.equal(await inbound(), 120);
    const [thread] = await sqlAll(store, "SELECT inbound_count, status, outcome FROM threads WHERE id = 'thr'");
    assert.deepEqual(thread, { inbound_count: 120, status: 'replied', outcome: 'positive' });
    const position = await sqlGet(store, "SELECT last_uid FROM inbox_mailboxes WHERE connection_id = 'conn_a'");
    assert.equal(Number(position!.last_uid), 120);
  });

  it('stores once the replies two mailboxes of the site both hold, read by two instances at once', async () => {
    replies('pg2', 200, 150);
    replies('pg3', 200, 150);
    const [a, b] = await Promise.all([
      pass({ conn_a: { user: 'pg2' } }, 'inbox_three'),
      pass({ conn_b: { user: 'pg3' } }, 'inbox_four'),
    ]);
    assert.deepEqual([a[0]!.status, b[0]!.status], ['ok', 'ok']);
    assert.equal(a[0]!.fetched + b[0]!.fetched, 300);
    assert.equal(a[0]!.matched + b[0]!.matched, 150, 'each reply stored by one of them');
    assert.equal(a[0]!.duplicates + b[0]!.duplicates, 150, 'and found a duplicate by the other');
    assert.equal(await inbound(), 270);
    assert.equal(await threadCount(), 270, 'counted once each');
    const counter = await sqlGet(
      store,
      "SELECT n FROM row_counts WHERE tbl = 'thread_messages' AND scope = 'thr' AND key = 'thread:1'",
    );
    assert.equal(Number(counter!.n), 271, 'the message list total stays exact (270 replies and our message)');
  });

  it('runs the sync worker in two serve processes on the database: each new message stored once', async () => {
    // serve uses the real clock: the messages arrive now, inside inbox.initialDays.
    const stored = await inbound();
    const counted = await threadCount();
    replies('pg4', 400, 3, Date.now());
    const env = {
      OUTREACH_API_INBOX_ENABLED: 'true',
      OUTREACH_API_INBOX_INTERVAL_MS: '200',
      OUTREACH_API_INBOX_CONNECTIONS: JSON.stringify(mailboxes({ conn_c: { user: 'pg4' } })),
      PW: PASSWORD,
    };
    const servers: ServeProcess[] = [];
    try {
      for (let i = 0; i < 2; i++) servers.push(await serveProcess(['--db', database.url, 'serve', '--port', '0'], env));
      await until(async () => (await inbound()) === stored + 3, 'the 3 replies stored');
      replies('pg4', 403, 1, Date.now());
      await until(async () => (await inbound()) === stored + 4, 'the reply delivered while serving stored');
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
    assert.equal(await threadCount(), counted + 4, 'counted once each');
    // Every pass that read something logs its summary: across both processes, each reply matched once.
    const passes = servers.flatMap((server) =>
      server
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"msg":"inbox pass"'))
        .map((line) => JSON.parse(line) as ConnectionSummary),
    );
    assert.equal(
      passes.reduce((n, p) => n + p.matched, 0),
      4,
      JSON.stringify(passes),
    );
    assert.ok(
      passes.every((p) => p.connectionId === 'conn_c' && p.duplicates === 0 && p.errors === 0),
      JSON.stringify(passes),
    );
  });
});
