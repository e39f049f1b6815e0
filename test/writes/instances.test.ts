/**
 * Several instances on one PostgreSQL database (decisions.md §16 "Idempotency across
 * instances", "Background work across instances"): two servers in this process, each with its
 * own pool, serve one database.
 * - One idempotency key, concurrent requests spread over both: one execution; the others get 409
 *   while it runs or the stored answer after, never a second reply queued.
 * - A key in flight on one instance is not released by another instance starting.
 * - Both outbox workers running at once deliver each queued reply once; both discovery workers
 *   run each job once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import { importDocument } from '../../src/import/index.js';
import { silentLogger } from '../../src/logger.js';
import type { ContactFinder, ProspectFacts, Verifier } from '../../src/providers/index.js';
import { createToken } from '../../src/repos/tokens.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';
import { sqlAll, sqlGet } from '../helpers/sql.js';
import { gate, startSmtp, type TestSmtp, writesFixture } from './helpers.js';

const API = '/api/public/v1';

// No top-level await: it can resume outside the file's suite when the unit shards load several
// files at once (node:test finds the suite from the async context). The check runs in \`before\`.
describe('two instances on one PostgreSQL database', () => {
  let skip: string | false = false;
  let database: TestDatabase;
  let smtp: TestSmtp;
  const clock = new FakeClock(Date.parse('2026-03-02T10:00:00.000Z'));
  const servers: RunningServer[] = [];
  let token: string;
  /** Contact finder calls, by prospect id. */
  const found = new Map<string, number>();
  let verifierHeld: ReturnType<typeof gate> | undefined;

  const finder: ContactFinder = {
    name: 'counting',
    defers: () => true,
    async find(facts: ProspectFacts) {
      found.set(facts.id, (found.get(facts.id) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      return [{ email: `found@${facts.domain}`, fullName: null, role: null, sourceUrl: null, sourceReference: 'test' }];
    },
  };
  const verifier: Verifier = {
    name: 'held',
    async verify() {
      await verifierHeld?.promise;
      return { status: 'valid', reason: 'held, then valid' };
    },
  };

  const start = async () => {
    const config = loadConfig(
      undefined,
      {},
      {
        db: database.url,
        'server.port': 0,
        'limits.requestsPerMinute': 0,
        'providers.mail': 'smtp',
        'smtp.host': '127.0.0.1',
        'smtp.port': smtp.port,
        'smtp.user': '',
        'outbox.pollIntervalMs': 3_600_000,
        'outbox.backoffMs': 1000,
      },
    );
    const server = await startServer({
      config,
      clock,
      logger: silentLogger,
      providers: { contactFinder: finder, verifier },
    });
    servers.push(server);
    return server;
  };

  before(async () => {
    skip = await serviceSkip('postgres');
    if (skip) return;
    database = await createTestDatabase('instances');
    smtp = await startSmtp();
    const store = await openStore(database.url);
    try {
      await migrate(store);
      await importDocument(store, writesFixture(), { nowIso: isoAt(clock.now()) });
      ({ token } = await createToken(
        store.db,
        { accountId: 'acct_a', name: 'instances', scopes: ['outreach:send', 'contacts:write'], expiresAt: null },
        isoAt(clock.now()),
      ));
    } finally {
      await store.close();
    }
    await start();
    await start();
  });
  after(async () => {
    for (const server of servers) await server.close();
    await smtp?.close();
    await database?.drop();
  });

  const post = (server: RunningServer, path: string, body: unknown) =>
    fetch(`${server.origin}${API}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const count = async (sql: string, ...params: unknown[]) =>
    Number((await sqlGet<{ n: number }>(servers[0]!.store, sql, ...params))!.n);

  it('runs one idempotency key once, whichever instance gets each of its concurrent requests', async (t) => {
    if (skip) return t.skip(skip);
    const before = await count("SELECT count(*) AS n FROM thread_messages WHERE thread_id = 'thr_a1'");
    const body = { body: 'One reply, however many instances.', idempotencyKey: 'instances-key-0001' };
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post(servers[i % 2]!, '/projects/prj_a1/sites/site_a1/threads/thr_a1/replies', body),
      ),
    );
    const statuses = answers.map((res) => res.status);
    assert.ok(
      statuses.every((s) => s === 202 || s === 409),
      `only 202 (the run and its replays) and 409 (while it ran): ${statuses}`,
    );
    assert.equal(
      answers.filter((res) => res.status === 202 && res.headers.get('idempotent-replayed') === null).length,
      1,
      'one execution',
    );
    assert.equal(await count("SELECT count(*) AS n FROM thread_messages WHERE thread_id = 'thr_a1'"), before + 1);
    const after = await post(servers[1]!, '/projects/prj_a1/sites/site_a1/threads/thr_a1/replies', body);
    assert.equal(after.status, 202);
    assert.equal(after.headers.get('idempotent-replayed'), 'true');
  });

  it('leaves a key in flight on one instance alone when another instance starts', async (t) => {
    if (skip) return t.skip(skip);
    verifierHeld = gate();
    const body = { idempotencyKey: 'instances-key-0002' };
    const path = '/projects/prj_a1/sites/site_a1/contacts/con_a1/verify';
    const first = post(servers[0]!, path, body);
    // Wait until the key is stored in flight (the verifier holds the request).
    for (
      let i = 0;
      i < 200 && (await count("SELECT count(*) AS n FROM idempotency_keys WHERE key = 'instances-key-0002'")) === 0;
      i++
    )
      await new Promise((resolve) => setTimeout(resolve, 25));
    const third = await start();
    // Were the key released, the third instance would run the request, and wait on the held verifier.
    const during = await Promise.race([
      post(third, path, body),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000)),
    ]);
    assert.ok(during, 'the third instance answered at once: it did not run the request');
    assert.equal(during.status, 409, 'the key is still held by the first instance');
    verifierHeld.open();
    assert.equal((await first).status, 200);
    const replay = await post(third, path, body);
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  });

  it('delivers each queued reply once with both outbox workers running at once', async (t) => {
    if (skip) return t.skip(skip);
    await Promise.all(servers.map((s) => s.workers.outbox.drain()));
    smtp.received.length = 0;
    const bodies = Array.from({ length: 8 }, (_, i) => `Reply number ${i} from the instances test.`);
    for (const [i, text] of bodies.entries())
      assert.equal(
        (
          await post(servers[i % 2]!, '/projects/prj_a1/sites/site_a1/threads/thr_a1/replies', {
            body: text,
            idempotencyKey: `instances-outbox-${i}`,
          })
        ).status,
        202,
      );
    await Promise.all([...servers, ...servers].map((s) => s.workers.outbox.runOnce()));
    await Promise.all(servers.map((s) => s.workers.outbox.drain()));
    const delivered = bodies.map((text) => smtp.received.filter((mail) => mail.raw.includes(text)).length);
    assert.deepEqual(
      delivered,
      bodies.map(() => 1),
      'each reply sent once',
    );
    const rows = await sqlAll<{ status: string; attempts: number }>(
      servers[0]!.store,
      "SELECT status, attempts FROM thread_messages WHERE body LIKE 'Reply number % from the instances test.'",
    );
    assert.deepEqual(
      rows.map((r) => `${r.status}/${r.attempts}`),
      bodies.map(() => 'sent/1'),
    );
  });

  it('runs each contact-discovery job once with both discovery workers running at once', async (t) => {
    if (skip) return t.skip(skip);
    const prospects = ['pr_queued', 'pr_mailto', 'pr_text'];
    for (const [i, id] of prospects.entries()) {
      const res = await post(servers[i % 2]!, `/projects/prj_a1/prospects/${id}/contact-discovery`, {
        idempotencyKey: `instances-discovery-${i}`,
      });
      assert.equal(res.status, 202, await res.text());
    }
    await Promise.all([...servers, ...servers].map((s) => s.workers.discovery.runOnce()));
    await Promise.all(servers.map((s) => s.workers.discovery.drain()));
    assert.deepEqual(
      prospects.map((id) => found.get(id)),
      prospects.map(() => 1),
      'the finder ran once per job',
    );
    const jobs = await sqlAll<{ status: string; current_attempt: number }>(
      servers[0]!.store,
      'SELECT j.status, j.current_attempt FROM discovery_jobs j JOIN contact_discovery_work w ON w.job_id = j.id',
    );
    assert.deepEqual(
      jobs.map((j) => `${j.status}/${j.current_attempt}`),
      prospects.map(() => 'completed/1'),
    );
  });
});
