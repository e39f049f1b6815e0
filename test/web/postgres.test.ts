/**
 * The settings area's storage on PostgreSQL (decisions.md §16, §18), against a real PostgreSQL
 * (a database of this file's own, migrated with sql/postgres/): two instances, each with its own
 * connection pool, share passwords, sessions and sign-in failures through the database alone.
 * A session made on one is valid on the other, a password set on one ends the sessions the other
 * made, failures recorded by either count for both (attempts sent at once to both included), and
 * a token made or revoked through one (the page's and the CLI's `createToken`/`revokeToken`) is
 * seen at once by the other.
 *
 * Each instance is a store of its own (`openStore` on the database's URL, a pool of 4); the
 * repositories are called on its `db`, as the routes call them. The HTTP tests of the area run on
 * both stores through the shared store helper (test/helpers/stores.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { isoAt } from '../../src/domain/clock.js';
import { hashPassword, verifyPassword } from '../../src/domain/passwords.js';
import {
  MAX_FAILURES_PER_EMAIL,
  SIGN_IN_WINDOW_MS,
  emailKey,
  newSessionId,
  sessionHasEnded,
  sessionIdHash,
  signInAllowedAt,
} from '../../src/domain/sign-in.js';
import {
  clearSignInFailures,
  createSession,
  deleteExpiredSignInRows,
  otherSignInAccountWithEmailOf,
  passwordHashOf,
  recentSignInFailures,
  recordSignInFailure,
  sessionByIdHash,
  setAccountPassword,
  signInAccountByEmail,
  touchSession,
} from '../../src/repos/sessions.js';
import {
  TokenLimitError,
  countActiveTokens,
  createToken,
  listTokens,
  revokeToken,
  tokenState,
} from '../../src/repos/tokens.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';
import { sqlRun } from '../helpers/sql.js';

const skip = await serviceSkip('postgres');
const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
const PASSWORD = 'a password on postgres';

describe('the settings area on PostgreSQL, two instances', { skip }, () => {
  let database: TestDatabase;
  let a: Kysely<Database>;
  let b: Kysely<Database>;
  const stores: Store[] = [];
  /** An instance: a store of its own (its own pool of 4) on the test database; its `db`. */
  const instance = async () => {
    const store = await openStore(database.url, { poolSize: 4 });
    stores.push(store);
    return store.db;
  };

  before(async () => {
    database = await createTestDatabase('settings');
    const setup = await openStore(database.url);
    stores.push(setup);
    await migrate(setup);
    for (const [id, email] of [
      ['acct_a', 'Owner@Example.test'],
      ['acct_b', 'other@example.test'],
      ['acct_same', 'owner@example.TEST'],
    ])
      await sqlRun(
        setup,
        'INSERT INTO accounts (id, email, name, plan, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
        id,
        email,
        id,
        'pro',
        isoAt(T0),
        isoAt(T0),
      );
    a = await instance();
    b = await instance();
  });
  after(async () => {
    for (const store of stores) await store.close();
    await database?.drop();
  });

  it('signs in on one instance with a password set on the other (email case folded, trimmed)', async () => {
    assert.equal(await setAccountPassword(a, 'acct_a', await hashPassword(PASSWORD), isoAt(T0)), 0);
    const found = await signInAccountByEmail(b, '  owner@EXAMPLE.test ');
    assert.equal(found?.account.id, 'acct_a');
    assert.ok(await verifyPassword(PASSWORD, found!.passwordHash));
    assert.equal(await signInAccountByEmail(b, 'other@example.test'), undefined, 'no password, no sign-in');
    assert.equal(await otherSignInAccountWithEmailOf(b, 'acct_same'), 'acct_a');
    assert.equal(await otherSignInAccountWithEmailOf(b, 'acct_b'), undefined);
    assert.equal(await passwordHashOf(a, 'acct_a'), found!.passwordHash);
  });

  it('knows a session made on the other instance, its touch, its expiry, and ends it on a new password', async () => {
    const id = newSessionId();
    await createSession(a, { idHash: sessionIdHash(id), accountId: 'acct_a', nowIso: isoAt(T0) });
    const seen = await sessionByIdHash(b, sessionIdHash(id));
    assert.equal(seen?.account.id, 'acct_a');
    assert.equal(seen?.createdAtMs, T0);
    assert.equal(await sessionByIdHash(b, sessionIdHash(newSessionId())), undefined);
    await touchSession(b, sessionIdHash(id), isoAt(T0 + 30 * 60_000));
    const touched = (await sessionByIdHash(a, sessionIdHash(id)))!;
    assert.equal(touched.lastSeenAtMs, T0 + 30 * 60_000);
    assert.ok(!sessionHasEnded(touched, T0 + 80 * 60_000, 60 * 60_000));
    assert.ok(sessionHasEnded(touched, T0 + 90 * 60_000, 60 * 60_000));

    const second = newSessionId();
    await createSession(b, { idHash: sessionIdHash(second), accountId: 'acct_a', nowIso: isoAt(T0) });
    assert.equal(await setAccountPassword(b, 'acct_a', await hashPassword(PASSWORD), isoAt(T0)), 2);
    assert.equal(await sessionByIdHash(a, sessionIdHash(id)), undefined, 'every session of the account ended');
    assert.equal(await sessionByIdHash(a, sessionIdHash(second)), undefined);

    // Expired rows are deleted by either instance.
    const old = newSessionId();
    await createSession(a, { idHash: sessionIdHash(old), accountId: 'acct_a', nowIso: isoAt(T0) });
    await deleteExpiredSignInRows(b, {
      failuresBeforeIso: isoAt(T0),
      idleBeforeIso: isoAt(T0),
      createdBeforeIso: isoAt(T0 - 1),
    });
    assert.equal(await sessionByIdHash(a, sessionIdHash(old)), undefined);
  });

  it('counts failures recorded by either instance, and of attempts sent at once to both tries at most 5', async () => {
    const keys = { emailKey: emailKey('victim@example.test'), clientAddress: '192.0.2.1' };
    const since = isoAt(T0 - SIGN_IN_WINDOW_MS);
    for (let i = 0; i < 4; i++) await recordSignInFailure(i % 2 ? a : b, { ...keys, atIso: isoAt(T0 + i) });
    const seen = await recentSignInFailures(a, keys, since, '');
    assert.deepEqual(seen.byEmail, [T0, T0 + 1, T0 + 2, T0 + 3]);
    assert.equal(signInAllowedAt(seen.byEmail, MAX_FAILURES_PER_EMAIL), undefined, 'four: a fifth may be tried');
    await clearSignInFailures(b, keys.emailKey);
    assert.deepEqual((await recentSignInFailures(a, keys, since, '')).byEmail, []);

    // The sign-in's own steps (src/web/sign-in.tsx): record the attempt, then count the others.
    const attempt = async (db: Kysely<Database>, i: number) => {
      const own = await recordSignInFailure(db, { ...keys, clientAddress: `198.51.100.${i}`, atIso: isoAt(T0 + 10) });
      const others = await recentSignInFailures(db, { ...keys, clientAddress: `198.51.100.${i}` }, since, own);
      return signInAllowedAt(others.byEmail, MAX_FAILURES_PER_EMAIL) === undefined;
    };
    const tried = (await Promise.all(Array.from({ length: 12 }, (_, i) => attempt(i % 2 ? a : b, i)))).filter(Boolean);
    assert.ok(tried.length <= MAX_FAILURES_PER_EMAIL, `${tried.length} of 12 tried`);
  });

  it('sees a token made or revoked through one instance at once on the other, with the 10-token limit', async () => {
    const now = isoAt(T0);
    const { row } = await createToken(
      a,
      { accountId: 'acct_b', name: 'made on a', scopes: ['leads:read'], expiresAt: null },
      now,
    );
    assert.deepEqual(
      (await listTokens(b, 'acct_b')).map((t) => [t.name, tokenState(t, now)]),
      [['made on a', 'active']],
    );
    for (let i = 1; i < 10; i++)
      await createToken(
        i % 2 ? b : a,
        { accountId: 'acct_b', name: `t${i}`, scopes: ['leads:read'], expiresAt: null },
        now,
      );
    assert.equal(await countActiveTokens(a, 'acct_b', now), 10);
    await assert.rejects(
      createToken(b, { accountId: 'acct_b', name: 'eleventh', scopes: ['leads:read'], expiresAt: null }, now),
      TokenLimitError,
    );
    assert.ok(await revokeToken(b, row.id, now));
    assert.equal(tokenState((await listTokens(a, 'acct_b')).find((t) => t.id === row.id)!, now), 'revoked');
    assert.equal(await countActiveTokens(a, 'acct_b', now), 9);
  });
});
