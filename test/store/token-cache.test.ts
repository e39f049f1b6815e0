/**
 * The authenticated token is kept in process (`cachedTokenLookup`, src/repos/tokens.ts) until
 * the store's data changes: a repeated request does not look its token up again, and a
 * revocation or a scope change, by this connection, by another one (another process, or
 * `outreach-api tokens revoke` with its own) or by `Store.stamps.markChanged()`, counts from the very
 * next request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isoAt } from '../../src/domain/clock.js';
import { openStore, type Store } from '../../src/db/connection.js';
import { cachedTokenLookup, createToken } from '../../src/repos/tokens.js';
import { hashToken } from '../../src/domain/tokens.js';
import { cli } from '../helpers/cli.js';
import { account } from '../helpers/fixture.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { sqliteStore } from '../helpers/stores.js';

const ACCOUNT = {
  accounts: [account('acct_c', { email: 'c@example.test', name: 'C', planExpiresAt: '2099-01-01T00:00:00Z' })],
};

/** Counts the statements run on `store` whose SQL matches `pattern`, until `stop()`. */
function countExecutions(store: Store, pattern: RegExp): { n: number; stop: () => void } {
  const counter = { n: 0, stop: () => {} };
  counter.stop = store.traceQueries((query) => {
    if (pattern.test(query.sql)) counter.n++;
  });
  return counter;
}

describe('the token cache', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ fixture: ACCOUNT });
  });
  after(() => t.close());

  it('looks a token up once while the data is unchanged, and again after any change', async () => {
    const lookups = countExecutions(t.store, /"t"\."token_hash" = \?/);
    try {
      const find = cachedTokenLookup(t.store.db);
      const { row, token } = await createToken(
        t.store.db,
        { accountId: 'acct_c', name: 'cached', scopes: ['projects:read'], expiresAt: null },
        isoAt(t.clock.now()),
      );
      assert.equal((await find(token))?.tokenId, row.id);
      assert.equal((await find(token))?.tokenId, row.id);
      assert.equal(lookups.n, 1, 'the second lookup came from the cache');
      t.store.stamps.markChanged();
      assert.equal((await find(token))?.tokenId, row.id);
      assert.equal(lookups.n, 2, 'markChanged() empties the cache (e.g. after a restore in place)');
      assert.equal(await find(`${token}x`), undefined);
      assert.equal(await find(`${token}x`), undefined);
      assert.equal(lookups.n, 4, 'a token that matches nothing is looked up every time, never kept');
    } finally {
      lookups.stop();
    }
  });

  it('sees a scope change committed by another connection on the next request', async () => {
    const token = await t.mintToken('acct_c', ['projects:read']);
    assert.equal((await t.get('/projects', token)).status, 200);
    assert.equal((await t.get('/projects', token)).status, 200);
    const other = await openStore(sqliteStore(t.store).path);
    try {
      sqliteStore(other)
        .sqlite.prepare('UPDATE api_tokens SET scopes = ? WHERE token_hash = ?')
        .run('[]', hashToken(token));
    } finally {
      await other.close();
    }
    assert.equal((await t.get('/projects', token)).status, 403);
  });

  // The CLI opens its own connection, as another process does: SQLite tells each connection of
  // the others' commits alike (PRAGMA data_version), whichever process holds them.
  it('refuses a token revoked by `outreach-api tokens revoke` (its own connection) on the next request', async () => {
    const token = await t.mintToken('acct_c', []);
    const me = await t.get('/me', token);
    assert.equal(me.status, 200);
    assert.equal((await t.get('/me', token)).status, 200);
    const revoked = await cli(['--db', sqliteStore(t.store).path, 'tokens', 'revoke', me.body.data.token.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /revoked/);
    assert.equal((await t.get('/me', token)).status, 401);
  });
});
