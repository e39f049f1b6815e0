/**
 * SQLite's searches on reader threads (issue #28 item 2; src/db/sqlite/readers.ts): a search's
 * statements run on a worker thread's own read-only connection, so however long one takes, the
 * event loop serves every other request meanwhile.
 * - While a search turn runs a statement that takes a while (counting to 8 million, about a
 *   second on the 2-core development machine), the event loop turns hundreds of times, a
 *   statement on the store's own connection answers, and over HTTP `/healthz`, `/readyz` and a
 *   list without search answer; a search that waits longer than `db.searchWaitMs` for the one
 *   reader is refused with 503 `SERVICE_UNAVAILABLE` and `Retry-After`, and searches again once
 *   the reader is free. Before, a search ran on the event loop: nothing else ran until it ended.
 * - A reader reads what was committed, at once, and never the rows of a transaction still open
 *   on the store's connection.
 * - A `:memory:` store (no second connection can open it) searches on its own connection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { searchPage } from '../../src/db/search.js';
import { inTransaction } from '../../src/db/store.js';
import { importDocument } from '../../src/import/index.js';
import { listProspects } from '../../src/repos/prospects.js';
import { SMALL } from '../helpers/fixture.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { sqliteOnly } from '../helpers/stores.js';

const NOW = '2026-03-10T12:00:00.000Z';

/** A statement that reads no table and takes a while: counting to 8 million (about 1 s here). */
const slowStatement = sql<{
  n: number;
}>`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 8000000) SELECT count(*) AS n FROM c`;

const insertProspect = (id: string, title: string) =>
  sql`INSERT INTO prospects (id, site_id, project_id, status, url, domain, title, created_at, updated_at)
      VALUES (${id}, 'site_a1', 'prj_a1', 'proposed', 'https://x.example/', 'x.example', ${title}, ${NOW}, ${NOW})`;

describe('searches on reader threads (SQLite)', { skip: sqliteOnly() }, () => {
  let t: TestServer;
  let token: string;
  before(async () => {
    t = await startTestServer({
      fixture: 'small',
      config: { 'limits.requestsPerMinute': 0, 'db.searchWaitMs': 100 },
    });
    token = await t.mintToken('acct_a');
  });
  after(() => t?.close());

  it('runs a long search statement off the event loop; a search past the wait is refused, the rest served', async () => {
    // Once, so the reader thread is started and its connection open.
    assert.equal((await t.get('/projects/prj_a1/prospects?search=b', token)).status, 200);
    let done = false;
    const statement = { compile: () => slowStatement.compile(t.store.db) };
    const slow = searchPage(t.store.db, statement, async () => 0).then(([rows]) => {
      done = true;
      return rows;
    });
    let turns = 0;
    const turning = (async () => {
      while (!done) {
        await new Promise((resolve) => setImmediate(resolve));
        turns++;
      }
    })();
    // The store's own connection answers meanwhile.
    const own = await sql<{ one: number }>`SELECT 1 AS one`.execute(t.store.db);
    assert.deepEqual(own.rows, [{ one: 1 }]);
    assert.equal(done, false, 'answered while the search statement ran');
    for (const path of ['/healthz', '/readyz']) {
      const res = await fetch(`${t.origin}${path}`);
      assert.equal(res.status, 200, path);
    }
    assert.equal((await t.get('/projects/prj_a1/prospects', token)).status, 200);
    const refused = await t.get('/projects/prj_a1/prospects?search=bo', token);
    assert.equal(done, false, 'the search was refused while the reader was in use');
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.deepEqual(await slow, [{ n: 8_000_000 }]);
    await turning;
    assert.ok(turns > 100, `the event loop turned ${turns} times during the statement`);
    const res = await t.get('/projects/prj_a1/prospects?search=bo', token);
    assert.equal(res.status, 200);
    assert.ok(res.body.data.pagination.total > 0);
  });

  it('reads what is committed at once, never an open transaction’s rows', async () => {
    const found = async () =>
      (await listProspects(t.store.db, { projectId: 'prj_a1', search: 'Zq' }, 25, 0)).items.map((p) => p.id);
    assert.deepEqual(await found(), []);
    await insertProspect('pr_committed', 'Committed zq').execute(t.store.db);
    assert.deepEqual(await found(), ['pr_committed']);
    let release!: () => void;
    const open = inTransaction(t.store.db, async (trx) => {
      await insertProspect('pr_open', 'Open ZQ').execute(trx);
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    while (!release) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(await found(), ['pr_committed'], 'the open transaction’s row is not seen');
    release();
    await open;
    assert.deepEqual((await found()).sort(), ['pr_committed', 'pr_open']);
  });

  it('searches on its own connection when the store is :memory:', async () => {
    const store = await openStore(':memory:');
    try {
      await migrate(store);
      await importDocument(store, SMALL, { nowIso: NOW });
      const page = await listProspects(store.db, { projectId: 'prj_a1', search: 'bo' }, 25, 0);
      assert.ok(page.total > 0 && page.items.length === page.total);
    } finally {
      await store.close();
    }
  });
});
