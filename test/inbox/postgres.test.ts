/**
 * The inbox sync on PostgreSQL (decisions.md §16, §17), against a real PostgreSQL (a database of
 * this file's own, migrated with sql/postgres/) and a real Dovecot: two instances, each with its
 * own connection pool, syncing at once store every message once, whether the lease keeps the
 * second one off a connection or two connections of one site hold the same replies.
 *
 * The store does not open PostgreSQL yet (the scale-out issue wires it): the repositories are
 * run here on kysely's PostgreSQL dialect over a `pg` pool, which is all they use of a store
 * (`store.db`); the migrations are applied with plain `pg`, as test/store/postgres-schema.test.ts
 * does. When `openStore` takes a `postgres://` URL this file opens its stores with it instead.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { FakeClock } from '../../src/domain/clock.js';
import type { Store } from '../../src/db/connection.js';
import { readMigrationDir } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { runInboxPass } from '../../src/workers/inbox.js';
import { startDovecot, type TestDovecot } from '../helpers/dovecot.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';
import { ANA, PASSWORD, mail, outboxId } from './helpers.js';

const skip = (await serviceSkip('postgres')) || (await serviceSkip('dovecot'));
const PG_DIR = fileURLToPath(new URL('../../sql/postgres/', import.meta.url));
const T0 = '2026-10-01T09:00:00.000Z';

describe('the inbox sync on PostgreSQL, two instances at once', { skip }, () => {
  let database: TestDatabase;
  let dovecot: TestDovecot;
  const instances: Kysely<Database>[] = [];
  const clock = new FakeClock();
  /** An instance: its own pool on the test database, as a store's `db`. */
  const instance = () => {
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 4 }) }),
    });
    instances.push(db);
    return { db } as unknown as Store;
  };
  const q = async (text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  const config = (connections: Record<string, { user: string }>) =>
    loadConfig(
      undefined,
      {},
      {
        'inbox.connections': Object.fromEntries(
          Object.entries(connections).map(([id, { user }]) => [
            id,
            { host: dovecot.host, port: dovecot.port, secure: false, user, passwordEnv: 'PW' },
          ]),
        ),
      },
    );
  const pass = (store: Store, connections: Record<string, { user: string }>, holder: string) =>
    runInboxPass(
      { store, clock, config: config(connections), logger: silentLogger, env: { PW: PASSWORD } },
      { holder },
    );

  before(async () => {
    database = await createTestDatabase('inbox');
    dovecot = await startDovecot({ pg1: PASSWORD, pg2: PASSWORD, pg3: PASSWORD });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      for (const migration of readMigrationDir(PG_DIR)) {
        await client.query('BEGIN');
        await client.query(migration.sql);
        await client.query('COMMIT');
      }
      const rows: [string, string][] = [
        ['accounts (id, email, name, plan, created_at, updated_at)', `'acct', 'a@x.example', 'A', 'pro', $1, $1`],
        ['projects (id, account_id, name, created_at, updated_at)', `'prj', 'acct', 'P', $1, $1`],
        [
          'sites (id, project_id, name, domain, url, status, created_at, updated_at)',
          `'site', 'prj', 'S', 'trailgear.example', 'https://trailgear.example/', 'active', $1, $1`,
        ],
        [
          'prospects (id, site_id, project_id, status, url, domain, created_at, updated_at)',
          `'pr', 'site', 'prj', 'proposed', 'https://blog.example/', 'blog.example', $1, $1`,
        ],
        [
          'contacts (id, prospect_id, site_id, project_id, email, status, verification_status, created_at, updated_at)',
          `'con', 'pr', 'site', 'prj', '${ANA}', 'active', 'unverified', $1, $1`,
        ],
        [
          'threads (id, site_id, project_id, prospect_id, contact_id, provider_thread_id, status, outcome, classification, outbound_count, created_at, updated_at)',
          `'thr', 'site', 'prj', 'pr', 'con', 'gm-thr', 'awaiting_reply', 'none', 'unclassified', 1, $1, $1`,
        ],
        [
          'thread_messages (id, thread_id, direction, status, from_email, body, sent_at, created_at, updated_at)',
          `'msg_out', 'thr', 'outbound', 'sent', 'me@trailgear.example', 'An idea', $1, $1, $1`,
        ],
      ];
      for (const id of ['conn_a', 'conn_b'])
        rows.push([
          'email_connections (id, site_id, project_id, provider, status, account_email, created_at, updated_at)',
          `'${id}', 'site', 'prj', 'smtp', 'connected', 'me@trailgear.example', $1, $1`,
        ]);
      for (const [table, values] of rows) await client.query(`INSERT INTO ${table} VALUES (${values})`, [T0]);
    } finally {
      await client.end();
    }
  });
  after(async () => {
    for (const db of instances) await db.destroy();
    await dovecot?.stop();
    await database?.drop();
  });

  const replies = (user: string, from: number, count: number) => {
    for (let n = from; n < from + count; n++)
      dovecot.deliver(
        user,
        mail({ messageId: `<pg${n}@blog.example>`, inReplyTo: outboxId('msg_out'), body: `Reply ${n}: sounds good.` }),
        { receivedAt: clock.now() },
      );
  };
  const inbound = async () =>
    Number((await q("SELECT count(*) AS n FROM thread_messages WHERE direction = 'inbound'"))[0].n);

  it('lets one instance sync a connection while the other finds it busy, and stores each message once', async () => {
    replies('pg1', 0, 120);
    const [a, b] = await Promise.all([
      pass(instance(), { conn_a: { user: 'pg1' } }, 'inbox_one'),
      pass(instance(), { conn_a: { user: 'pg1' } }, 'inbox_two'),
    ]);
    assert.deepEqual([a[0]!.status, b[0]!.status].sort(), ['busy', 'ok']);
    assert.equal(a[0]!.matched + b[0]!.matched, 120);
    assert.equal(await inbound(), 120);
    const [thread] = await q("SELECT inbound_count, status, outcome FROM threads WHERE id = 'thr'");
    assert.deepEqual(thread, { inbound_count: 120, status: 'replied', outcome: 'positive' });
    const [position] = await q("SELECT last_uid FROM inbox_mailboxes WHERE connection_id = 'conn_a'");
    assert.equal(Number(position.last_uid), 120);
  });

  it('stores once the replies two mailboxes of the site both hold, read by two instances at once', async () => {
    replies('pg2', 200, 150);
    replies('pg3', 200, 150);
    const [a, b] = await Promise.all([
      pass(instance(), { conn_a: { user: 'pg2' } }, 'inbox_three'),
      pass(instance(), { conn_b: { user: 'pg3' } }, 'inbox_four'),
    ]);
    assert.deepEqual([a[0]!.status, b[0]!.status], ['ok', 'ok']);
    assert.equal(a[0]!.fetched + b[0]!.fetched, 300);
    assert.equal(a[0]!.matched + b[0]!.matched, 150, 'each reply stored by one of them');
    assert.equal(a[0]!.duplicates + b[0]!.duplicates, 150, 'and found a duplicate by the other');
    assert.equal(await inbound(), 270);
    const [thread] = await q("SELECT inbound_count FROM threads WHERE id = 'thr'");
    assert.equal(thread.inbound_count, 270, 'counted once each');
    const [counter] = await q(
      "SELECT n FROM row_counts WHERE tbl = 'thread_messages' AND scope = 'thr' AND key = 'thread:1'",
    );
    assert.equal(Number(counter.n), 271, 'the message list total stays exact (270 replies and our message)');
  });
});
