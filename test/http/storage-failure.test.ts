/**
 * Readiness follows whether the store can serve (issue #21 item 3, decisions.md §16 "Failures"),
 * tested the way it was found: the database file, its write-ahead log and its shared-memory file
 * overwritten with garbage while the server runs, as a failing disk would leave them. `/readyz`
 * answers 503 `NOT_READY` (its check reads the file itself, not the connection's page cache), and
 * a request that meets the damage answers 503 `SERVICE_UNAVAILABLE` with `Retry-After`, never 500.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type TestServer, startTestServer } from '../helpers/harness.js';
import { sqliteOnly, sqliteStore } from '../helpers/stores.js';

describe('a SQLite file damaged while the server runs', { skip: sqliteOnly() }, () => {
  let t: TestServer;
  let token: string;
  before(async () => {
    t = await startTestServer({ fixture: 'small' });
    token = await t.mintToken('acct_a', ['projects:read']);
  });
  after(() => t.close());

  it('takes the instance out of rotation and answers 503 with Retry-After, not 500', async () => {
    assert.equal((await t.get('/api/readyz', undefined, { unchecked: true })).status, 404, 'readyz is outside /api');
    const ready = await fetch(`${t.origin}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal((await t.get('/projects', token)).status, 200);

    const path = sqliteStore(t.store).path;
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      const size = existsSync(file) ? statSync(file).size : 0;
      writeFileSync(file, randomBytes(Math.max(size, 4096)));
    }

    const notReady = await fetch(`${t.origin}/readyz`);
    assert.equal(notReady.status, 503);
    const body = (await notReady.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'NOT_READY');
    assert.match(body.error.message, /the database cannot be reached or read/);
    assert.doesNotMatch(body.error.message, /SQLITE|not a database|\//, 'no internals');

    for (const path of ['/projects', '/projects/prj_a1/sites']) {
      const res = await t.get(path, token);
      assert.equal(res.status, 503, `${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'SERVICE_UNAVAILABLE');
      assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.doesNotMatch(JSON.stringify(res.body), /SQLITE|not a database/);
    }
    assert.equal((await fetch(`${t.origin}/readyz`)).status, 503, 'still not ready: the file is still damaged');
    assert.equal((await fetch(`${t.origin}/healthz`)).status, 200, 'the process itself is alive');
  });
});
