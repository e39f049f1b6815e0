/**
 * A rolling upgrade on PostgreSQL (db.preparedStatements, src/db/postgres/prepared.ts): a server
 * whose requests run as prepared statements keeps answering when another instance's migration adds
 * a column to a table they read with `SELECT *` (the leads page): every request after the change
 * answers 200 with the same body as before, and `/readyz` stays 200.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/logger.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { serviceSkip, type TestDatabase } from '../helpers/services.js';
import { smallPostgresDatabase } from '../helpers/stores.js';
const LEADS = '/api/public/v1/projects/prj_a1/leads?limit=25';

// No top-level await (see postgres-failure.test.ts): the check runs in `before`.
describe('prepared statements across a migration of another instance', () => {
  let skip: string | false = false;
  let database: TestDatabase;
  let server: RunningServer;
  let token: string;
  before(async () => {
    skip = await serviceSkip('postgres');
    if (skip) return;
    const clock = new FakeClock();
    ({ database, token } = await smallPostgresDatabase('prepared_http', ['leads:read'], isoAt(clock.now())));
    const config = loadConfig(
      undefined,
      {},
      { db: database.url, 'db.poolSize': 2, 'server.port': 0, 'limits.requestsPerMinute': 0 },
    );
    server = await startServer({ config, clock, logger: silentLogger });
  });
  after(async () => {
    await server?.close();
    await database?.drop();
  });

  const leads = async () => {
    const res = await fetch(`${server.origin}${LEADS}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: await res.text() };
  };

  it('answers every request after a column is added as before', async (t) => {
    if (skip) return t.skip(skip);
    // Run enough times for the page statement to be prepared on both connections.
    const first = await leads();
    assert.equal(first.status, 200, first.body);
    for (let i = 0; i < 6; i++) assert.deepEqual(await leads(), first);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query('ALTER TABLE leads ADD COLUMN upgrade_note text');
    } finally {
      await admin.end();
    }
    for (let i = 0; i < 6; i++) assert.deepEqual(await leads(), first, `request ${i + 1} after the migration`);
    const ready = await fetch(`${server.origin}/readyz`);
    assert.equal(ready.status, 200);
  });
});
