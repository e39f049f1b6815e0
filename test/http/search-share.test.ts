/**
 * PostgreSQL's pool under searches that never end (issue #28 item 3), on a real PostgreSQL: a
 * search that no index serves may read every row of a project, and before this twelve of them
 * took every connection of the pool, so `GET /me` waited up to the statement timeout and
 * `/readyz` said 200 throughout. Statements are held deterministically with a table lock taken
 * by the test on a connection of its own (an `ACCESS EXCLUSIVE` lock on `prospects` holds every
 * search, one on `api_tokens` every authenticated request), never with timing.
 * - Searches run within their share of the pool (`db.searchConnections`, 2 of 6 here): twelve at
 *   once hold two connections; the other ten wait `db.searchWaitMs` and answer 503
 *   `SERVICE_UNAVAILABLE` with `Retry-After`, while `GET /me` and lists without search answer,
 *   and `/readyz` stays 200.
 * - When every connection is in use and requests have waited for one past the saturation wait,
 *   `/readyz` answers 503 `NOT_READY` at once, without a connection, and goes back to 200 only
 *   once the hold has passed without such a wait.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import { importFile } from '../../src/import/index.js';
import { silentLogger } from '../../src/logger.js';
import { createToken } from '../../src/repos/tokens.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';

const SMALL = new URL('../fixtures/small.json', import.meta.url).pathname;
const POOL_SIZE = 6;
const SEARCH_CONNECTIONS = 2;
const SEARCH_WAIT_MS = 300;
/** When the pool counts as saturated here, ms (the defaults are 1000 and 10000). */
const SATURATION = { waitMs: 300, holdMs: 2000 };
/** Generous bounds for a busy machine; without the share, the answers below waited 15 s. */
const QUICK_MS = 3000;

describe('PostgreSQL: searches within their share of the pool', () => {
  let skip: string | false = false;
  let database: TestDatabase;
  let server: RunningServer;
  let token: string;
  let locker: pg.Client;
  before(async () => {
    skip = await serviceSkip('postgres');
    if (skip) return;
    database = await createTestDatabase('search-share');
    const clock = new FakeClock();
    const store = await openStore(database.url, {
      poolSize: POOL_SIZE,
      // Held statements wait on the test's lock, never on the statement timeout.
      statementTimeoutMs: 20_000,
      searchConnections: SEARCH_CONNECTIONS,
      searchWaitMs: SEARCH_WAIT_MS,
      saturation: SATURATION,
    });
    await migrate(store);
    await importFile(store, SMALL, { nowIso: isoAt(clock.now()) });
    ({ token } = await createToken(
      store.db,
      { accountId: 'acct_a', name: 'share', scopes: ['projects:read', 'prospects:read'], expiresAt: null },
      isoAt(clock.now()),
    ));
    const config = loadConfig(undefined, {}, { db: database.url, 'server.port': 0, 'limits.requestsPerMinute': 0 });
    server = await startServer({ config, store, clock, logger: silentLogger });
    locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
  });
  after(async () => {
    await locker?.query('ROLLBACK').catch(() => {});
    await locker?.end();
    await server?.close();
    await server?.store.close();
    await database?.drop();
  });

  const timed = async (path: string, authorized = true) => {
    const started = performance.now();
    const res = await fetch(`${server.origin}${path}`, {
      headers: authorized ? { authorization: `Bearer ${token}` } : {},
    });
    return { res, body: (await res.json()) as any, ms: performance.now() - started };
  };
  /** Resolves once `done()` holds (checked every 20 ms), or fails after `ms`. */
  const until = async (done: () => boolean, what: string, ms = 10_000) => {
    const deadline = performance.now() + ms;
    while (!done()) {
      assert.ok(performance.now() < deadline, `timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('holds twelve endless searches to two connections: the rest answer 503, GET /me and /readyz answer', async (t) => {
    if (skip) return t.skip(skip);
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE prospects IN ACCESS EXCLUSIVE MODE');
    const answers: Awaited<ReturnType<typeof timed>>[] = [];
    const searches = Array.from({ length: 12 }, () =>
      timed('/api/public/v1/projects/prj_a1/prospects?search=!!!').then((answer) => {
        answers.push(answer);
        return answer;
      }),
    );
    await until(() => answers.length >= 12 - SEARCH_CONNECTIONS, 'the searches beyond the share');
    for (const { res, body, ms } of answers) {
      assert.equal(res.status, 503, JSON.stringify(body));
      assert.equal(body.error.code, 'SERVICE_UNAVAILABLE');
      assert.equal(res.headers.get('retry-after'), '1');
      assert.ok(ms < QUICK_MS, `refused after ${Math.round(ms)} ms`);
    }
    // Two searches hold their connections; the other four serve everything else.
    const me = await Promise.all(Array.from({ length: 8 }, () => timed('/api/public/v1/me')));
    for (const { res, ms } of me) {
      assert.equal(res.status, 200);
      assert.ok(ms < QUICK_MS, `GET /me answered in ${Math.round(ms)} ms`);
    }
    assert.equal((await timed('/api/public/v1/projects')).res.status, 200);
    const ready = await timed('/readyz', false);
    assert.equal(ready.res.status, 200, JSON.stringify(ready.body));
    assert.equal(answers.length, 12 - SEARCH_CONNECTIONS, 'the two searches within the share still wait');
    await locker.query('COMMIT');
    await Promise.all(searches);
    for (const { res } of answers.slice(-SEARCH_CONNECTIONS)) assert.equal(res.status, 200);
  });

  it('says when the pool is saturated, at once, and is ready again after the hold', async (t) => {
    if (skip) return t.skip(skip);
    await until(() => server.store.saturated() === false, 'the end of an earlier hold');
    await locker.query('BEGIN');
    // Every request reads the change stamp (sql/postgres/0009_change_stamps.sql) before its token,
    // which may then come from the token cache: locking the stamp's table holds each request.
    await locker.query('LOCK TABLE change_stamps, api_tokens IN ACCESS EXCLUSIVE MODE');
    // Six requests hold every connection on the lock; three more wait for one.
    const held = Array.from({ length: POOL_SIZE + 3 }, () => timed('/api/public/v1/me'));
    await until(() => server.store.saturated(), 'saturation');
    let notReady = await timed('/readyz', false);
    assert.equal(notReady.res.status, 503, JSON.stringify(notReady.body));
    assert.equal(notReady.body.error.code, 'NOT_READY');
    assert.match(notReady.body.error.message, /every database connection is in use/);
    assert.ok(notReady.ms < QUICK_MS, `readyz answered in ${Math.round(notReady.ms)} ms`);
    await locker.query('COMMIT');
    for (const { res } of await Promise.all(held)) assert.equal(res.status, 200);
    // Not ready until the hold has passed without a long wait: no flapping back at once.
    const released = performance.now();
    notReady = await timed('/readyz', false);
    if (performance.now() - released < SATURATION.holdMs - 500) assert.equal(notReady.res.status, 503);
    let status = 0;
    const deadline = performance.now() + SATURATION.holdMs + 5000;
    while ((status = (await timed('/readyz', false)).res.status) !== 200 && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(status, 200, 'ready again after the hold');
  });
});
