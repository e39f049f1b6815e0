/**
 * What every write operation shares (decisions.md §3, §4, §7, §8), from one table: the scope
 * (403), the body rules (415 for a non-JSON body, 413 over `limits.maxBodyBytes`, 422 path
 * `body` for malformed JSON), validation before lookups, the plan gate (402 for a free account
 * and for a pro account past `planExpiresAt`, after the 404 lookups), and that a refused request
 * stores no idempotency key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_SCOPES, type TestServer } from '../helpers/harness.js';
import { row, startWriteServer } from './helpers.js';
import { sqlRun } from '../helpers/sql.js';

interface WriteOp {
  name: string;
  method: string;
  /** The path under a project `p` and site suffix `s` (`a1`, `b1`, `c1`). */
  path: (s: string) => string;
  scope: string;
  body: (key: string) => Record<string, unknown>;
  headers?: (key: string) => Record<string, string>;
  /** The success status. */
  ok: number;
}

const OPS: WriteOp[] = [
  {
    name: 'edit draft',
    method: 'PATCH',
    path: (s) => `/projects/prj_${s}/sites/site_${s}/drafts/drf_${s === 'a1' ? 'nomsg' : s}`,
    scope: 'outreach:write',
    body: () => ({ subject: 'Subject', body: 'A body long enough to pass.' }),
    ok: 200,
  },
  {
    name: 'regenerate draft',
    method: 'POST',
    path: (s) => `/projects/prj_${s}/sites/site_${s}/drafts/drf_${s === 'a1' ? 'nomsg' : s}/regenerate`,
    scope: 'outreach:write',
    body: () => ({ instruction: 'Shorter please' }),
    headers: (key) => ({ 'idempotency-key': key }),
    ok: 200,
  },
  {
    name: 'reply',
    method: 'POST',
    path: (s) => `/projects/prj_${s}/sites/site_${s}/threads/thr_${s}/replies`,
    scope: 'outreach:send',
    body: (key) => ({ body: 'Thanks, here it is.', idempotencyKey: key }),
    ok: 202,
  },
  {
    name: 'contact discovery',
    method: 'POST',
    path: (s) => `/projects/prj_${s}/prospects/pr_${s}/contact-discovery`,
    scope: 'contacts:write',
    body: (key) => ({ idempotencyKey: key }),
    ok: 200,
  },
  {
    name: 'verify contact',
    method: 'POST',
    path: (s) => `/projects/prj_${s}/sites/site_${s}/contacts/con_${s}/verify`,
    scope: 'contacts:write',
    body: (key) => ({ idempotencyKey: key }),
    ok: 200,
  },
];

describe('rules shared by every write operation', () => {
  let t: TestServer;
  const keyCount = async () => (await row<{ n: number }>(t, 'SELECT COUNT(*) AS n FROM idempotency_keys')).n;
  const send = (
    op: WriteOp,
    token: string,
    site: string,
    key: string,
    extra: { rawBody?: string; headers?: Record<string, string>; body?: unknown } = {},
  ) =>
    t.request(op.method, op.path(site), {
      token,
      body: extra.rawBody === undefined ? (extra.body ?? op.body(key)) : undefined,
      rawBody: extra.rawBody,
      headers: { ...op.headers?.(key), ...extra.headers },
    });
  const tokens = new Map<string, string>();
  /** One token per account and scope set (an account may hold only 10 active tokens). */
  const tokenFor = async (account: string, scopes: readonly string[] = ALL_SCOPES) => {
    const id = `${account} ${scopes.join(',')}`;
    if (!tokens.has(id)) tokens.set(id, await t.mintToken(account, scopes));
    return tokens.get(id)!;
  };
  before(async () => {
    t = await startWriteServer({ config: { 'limits.maxBodyBytes': 2048 } });
  });
  after(() => t.close());

  it('403 SCOPE_REQUIRED without the scope, before validation', async () => {
    for (const op of OPS) {
      const token = await tokenFor(
        'acct_a',
        ALL_SCOPES.filter((s) => s !== op.scope),
      );
      const res = await send(op, token, 'a1', 'k', { body: {} });
      assert.equal(res.status, 403, op.name);
      assert.equal(res.body.error.code, 'SCOPE_REQUIRED');
    }
  });

  it('415 for a body that is not JSON, 413 over the size limit, 422 path body for malformed JSON', async () => {
    for (const op of OPS) {
      const token = await tokenFor('acct_a');
      const text = await send(op, token, 'a1', 'rules-key-415', {
        rawBody: 'subject=x',
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(text.status, 415, op.name);
      assert.equal(text.body.error.code, 'UNSUPPORTED_MEDIA_TYPE');
      const big = await send(op, token, 'a1', 'rules-key-413', {
        body: { ...op.body('rules-key-413'), padding: 'x'.repeat(3000) },
      });
      assert.equal(big.status, 413, op.name);
      assert.equal(big.body.error.code, 'PAYLOAD_TOO_LARGE');
      const malformed = await send(op, token, 'a1', 'rules-key-422', {
        rawBody: '{"idempotencyKey": ',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(malformed.status, 422, op.name);
      assert.deepEqual(malformed.body.error.details, [{ path: 'body', message: 'Malformed JSON' }]);
    }
    assert.equal(await keyCount(), 0);
  });

  it('validates before looking up: an invalid body for a missing record is 422', async () => {
    for (const op of OPS) {
      const res = await t.request(op.method, op.path('zz'), { token: await tokenFor('acct_a'), body: {} });
      assert.equal(res.status, 422, op.name);
    }
  });

  it('402 UPGRADE_REQUIRED for a free account, after the lookups, storing nothing', async () => {
    for (const op of OPS) {
      const token = await tokenFor('acct_b');
      const refused = await send(op, token, 'b1', `free-key-${op.name.replace(/ /g, '-')}`);
      assert.equal(refused.status, 402, op.name);
      assert.equal(refused.body.error.code, 'UPGRADE_REQUIRED');
      const missing = await t.request(op.method, op.path('b1').replace(/(drf|thr|pr|con)_b1/, '$1_zz'), {
        token,
        body: op.body('free-key-x'),
        headers: op.headers?.('free-key-x'),
      });
      assert.equal(missing.status, 404, `${op.name}: 404 before 402`);
    }
    assert.equal(await keyCount(), 0);
  });

  it('402 for a pro account once planExpiresAt has passed (by the clock), and the key stays free', async () => {
    const keyOf = (op: WriteOp) => `expiry-key-${op.name.replace(/ /g, '-')}`;
    for (const op of OPS) {
      const res = await send(op, await tokenFor('acct_c'), 'c1', keyOf(op));
      assert.equal(res.status, op.ok, `${op.name} before expiry: ${JSON.stringify(res.body)}`);
    }
    t.clock.set(Date.parse('2026-12-01T00:00:00.000Z'));
    for (const op of OPS) {
      const res = await send(op, await tokenFor('acct_c'), 'c1', `${keyOf(op)}-after`);
      assert.equal(res.status, 402, `${op.name} after expiry`);
    }
    assert.equal(
      (await row<{ n: number }>(t, "SELECT COUNT(*) AS n FROM idempotency_keys WHERE key LIKE '%-after'")).n,
      0,
    );
    await sqlRun(t.store, "UPDATE accounts SET plan = 'lifetime' WHERE id = 'acct_c'");
    for (const op of OPS) {
      const res = await send(op, await tokenFor('acct_c'), 'c1', `${keyOf(op)}-after`);
      assert.equal(res.status, op.ok, `${op.name} with lifetime: the refused key was not stored`);
    }
  });
});
