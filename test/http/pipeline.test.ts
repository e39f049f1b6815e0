/**
 * The request pipeline shared by every operation (decisions.md §3, §4, §9): authentication,
 * the rate limiter, the envelope on every error, request ids, and the OpenAPI document.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import { revokeToken } from '../../src/repos/tokens.js';
import { generateToken } from '../../src/domain/tokens.js';
import { account, project } from '../helpers/fixture.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { REDIS_URL, redisKeyPrefix, serviceSkip } from '../helpers/services.js';
import { sqlGet, sqlRun, sqlScript } from '../helpers/sql.js';

const PROJECTS = {
  accounts: [account('acct_p', { email: 'p@example.test', name: 'P', planExpiresAt: '2099-01-01T00:00:00Z' })],
  projects: [
    project('prj_p', 'acct_p', { name: 'P', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' }),
  ],
};

describe('authentication', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ fixture: PROJECTS });
  });
  after(() => t.close());

  it('answers 401 UNAUTHORIZED, in the envelope, for a missing, malformed, unknown or mistyped token', async () => {
    const good = await t.mintToken('acct_p', ['projects:read']);
    const cases: Record<string, string | undefined>[] = [
      {},
      { authorization: 'Bearer' },
      { authorization: `Basic ${good}` },
      { authorization: `Bearer ${good} extra` },
      { authorization: 'Bearer short' },
      { authorization: `Bearer ${generateToken()}` },
      // one character changed: the checksum no longer matches
      { authorization: `Bearer ${good.slice(0, 10)}${good[10] === 'A' ? 'B' : 'A'}${good.slice(11)}` },
    ];
    for (const headers of cases) {
      const res = await t.request('GET', '/me', { headers: headers as Record<string, string> });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.deepEqual(res.body, {
        ok: false,
        error: { code: 'UNAUTHORIZED', message: 'A valid bearer token is required' },
      });
      assert.equal(res.headers.get('x-ratelimit-limit'), null, 'no limiter headers before authentication');
      // RFC 6750 §3: the challenge, with invalid_token once credentials were sent.
      const challenge =
        headers.authorization === undefined
          ? 'Bearer realm="outreach-api"'
          : 'Bearer realm="outreach-api", error="invalid_token"';
      assert.equal(res.headers.get('www-authenticate'), challenge, JSON.stringify(headers));
    }
    const expired = await t.mintToken('acct_p', [], { expiresAt: isoAt(t.clock.now() + 1) });
    t.clock.advance(1);
    assert.equal(
      (await t.get('/me', expired)).headers.get('www-authenticate'),
      'Bearer realm="outreach-api", error="invalid_token"',
    );
  });

  it('never accepts a token in the URL', async () => {
    const token = await t.mintToken('acct_p', ['projects:read']);
    for (const name of ['token', 'access_token', 'api_key', 'authorization']) {
      const res = await t.get(`/me?${name}=${encodeURIComponent(token)}`);
      assert.equal(res.status, 401);
    }
  });

  it('accepts the scheme in any case and serves /me without a scope', async () => {
    const token = await t.mintToken('acct_p', []);
    const res = await t.request('GET', '/me', { headers: { authorization: `bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.equal(res.body.data.owner.id, 'acct_p');
    assert.deepEqual(res.body.data.token.scopes, []);
    assert.equal(res.body.data.projectCount, 1);
    assert.ok(!JSON.stringify(res.body).includes(token), 'the token never comes back');
    assert.equal(res.body.data.token.lastFour, token.slice(-4));
  });

  it('counts the active tokens of the account in /me: neither revoked nor expired by the clock', async () => {
    const token = await t.mintToken('acct_p', []);
    const active = (await t.get('/me', token)).body.data.activeTokenCount;
    assert.equal(
      active,
      (
        (await sqlGet(
          t.store,
          "SELECT count(*) AS n FROM api_tokens WHERE account_id = 'acct_p' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)",
          isoAt(t.clock.now()),
        )) as { n: number }
      ).n,
    );
    await t.mintToken('acct_p', [], { expiresAt: isoAt(t.clock.now() + 1_000) });
    assert.equal((await t.get('/me', token)).body.data.activeTokenCount, active + 1);
    t.clock.advance(1_000);
    assert.equal((await t.get('/me', token)).body.data.activeTokenCount, active, 'the expired one no longer counts');
  });

  it("answers /me from what the store holds on every request: the account's and project's changes show at once", async () => {
    const token = await t.mintToken('acct_p', []);
    const first = await t.get('/me', token);
    assert.deepEqual((await t.get('/me', token)).body, first.body, 'unchanged: the same answer');
    await sqlRun(t.store, "UPDATE accounts SET name = 'P renamed' WHERE id = 'acct_p'");
    assert.equal((await t.get('/me', token)).body.data.owner.name, 'P renamed');
    await sqlRun(
      t.store,
      "INSERT INTO projects (id, account_id, name, created_at, updated_at) SELECT 'prj_p2', account_id, 'P2', created_at, updated_at FROM projects WHERE id = 'prj_p'",
    );
    assert.equal((await t.get('/me', token)).body.data.projectCount, first.body.data.projectCount + 1);
  });

  it('refuses an expired token from the moment it expires', async () => {
    const token = await t.mintToken('acct_p', ['projects:read'], { expiresAt: isoAt(t.clock.now() + 60_000) });
    assert.equal((await t.get('/projects', token)).status, 200);
    t.clock.advance(60_000);
    assert.equal((await t.get('/projects', token)).status, 401);
  });

  it('refuses a revoked token on the next request', async () => {
    const token = await t.mintToken('acct_p', ['projects:read']);
    const me = await t.get('/me', token);
    assert.equal(me.status, 200);
    assert.ok(await revokeToken(t.store.db, me.body.data.token.id, isoAt(t.clock.now())));
    assert.equal((await t.get('/me', token)).status, 401);
  });

  it('refuses any text before the Bearer scheme, and takes one or more spaces after it', async () => {
    const good = await t.mintToken('acct_p', []);
    for (const authorization of [`xBearer ${good}`, `Basic Bearer ${good}`, `Bearer: ${good}`, `Bearer\t${good}`]) {
      const res = await t.request('GET', '/me', { headers: { authorization } });
      assert.equal(res.status, 401, authorization);
      assert.equal(res.body.error.code, 'UNAUTHORIZED');
    }
    for (const authorization of [`Bearer ${good}`, `Bearer   ${good}`, `BEARER  ${good}`]) {
      const res = await t.request('GET', '/me', { headers: { authorization } });
      assert.equal(res.status, 200, authorization);
      assert.equal(res.body.data.owner.id, 'acct_p');
    }
  });

  it('refuses a malformed token before any database lookup', async () => {
    const good = await t.mintToken('acct_p', []);
    const random = good.slice(5, 48);
    const mistyped = `oapi_${random.slice(0, 20)}${random[20] === 'A' ? 'B' : 'A'}${random.slice(21)}${good.slice(-6)}`;
    // Without its table, any token lookup fails (a 500): a malformed token must never get that far.
    await sql`ALTER TABLE api_tokens RENAME TO api_tokens_away`.execute(t.store.db);
    try {
      for (const token of [mistyped, 'short', 'x'.repeat(513)]) {
        const res = await t.request('GET', '/me', { headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.status, 401, token);
        assert.equal(res.body.error.code, 'UNAUTHORIZED');
      }
      const looked = await t.request('GET', '/me', { headers: { authorization: `Bearer ${generateToken()}` } });
      assert.equal(looked.status, 500, 'a well-formed token is looked up (so the lookup above would have failed)');
    } finally {
      await sql`ALTER TABLE api_tokens_away RENAME TO api_tokens`.execute(t.store.db);
    }
    assert.equal((await t.get('/me', good)).status, 200);
  });

  it('writes last_used_at at most once a minute per token, at the minute boundary too', async () => {
    const token = await t.mintToken('acct_p', []);
    const start = t.clock.now();
    const lastUsed = async () => (await t.get('/me', token)).body.data.token.lastUsedAt;
    assert.equal(await lastUsed(), isoAt(start));
    t.clock.advance(59_999);
    assert.equal(await lastUsed(), isoAt(start), 'not again within the minute');
    t.clock.advance(1);
    assert.equal(await lastUsed(), isoAt(start + 60_000), 'again once a full minute has passed');
    t.clock.advance(30_000);
    assert.equal(await lastUsed(), isoAt(start + 60_000));
    const other = await t.mintToken('acct_p', []);
    assert.equal((await t.get('/me', other)).body.data.token.lastUsedAt, isoAt(t.clock.now()), 'per token');
  });

  it('records when a token was last used', async () => {
    const token = await t.mintToken('acct_p', []);
    const first = await t.get('/me', token);
    const second = await t.get('/me', token);
    assert.equal(second.body.data.token.lastUsedAt, isoAt(t.clock.now()));
    assert.equal(first.body.data.token.createdAt, isoAt(t.clock.now()));
  });
});

// The same requests and the same expected headers for either store (decisions.md §9, §16).
for (const store of ['memory', 'redis'] as const) {
  describe(`rate limiter (limits.store: ${store})`, { skip: store === 'redis' && (await serviceSkip('redis')) }, () => {
    let t: TestServer;
    let clock: FakeClock;
    before(async () => {
      clock = new FakeClock(Date.UTC(2026, 10, 1, 12, 0, 0));
      const config =
        store === 'redis'
          ? { 'limits.store': store, 'redis.url': REDIS_URL, 'redis.keyPrefix': redisKeyPrefix('pipeline') }
          : {};
      t = await startTestServer({ fixture: PROJECTS, clock, config });
    });
    after(async () => {
      // Every check was answered by the store under test, not by a fallback.
      assert.equal(t.server.app.deps.limiter?.shared, store === 'redis');
      await t.close();
    });

    it('allows exactly 100 requests per sliding 60 s, counts down, and refuses the 101st with Retry-After', async () => {
      const token = await t.mintToken('acct_p', []);
      const start = clock.now();
      for (let i = 1; i <= 100; i++) {
        const res = await t.get('/me', token);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('x-ratelimit-limit'), '100');
        assert.equal(res.headers.get('x-ratelimit-remaining'), String(100 - i));
        assert.equal(res.headers.get('x-ratelimit-reset'), String(Math.ceil((start + 60_000) / 1000)));
        assert.equal(res.headers.get('ratelimit-policy'), '"default";q=100;w=60');
        if (i === 50) clock.advance(30_000); // the second half arrives 30 s later
      }
      const refused = await t.get('/me', token);
      assert.equal(refused.status, 429);
      assert.deepEqual(refused.body.error, {
        code: 'RATE_LIMIT_EXCEEDED',
        message: 'Rate limit of 100 requests per 60 s exceeded; retry after 30 s',
      });
      assert.equal(refused.headers.get('retry-after'), '30');
      assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(refused.headers.get('ratelimit'), '"default";r=0;t=30');

      // Rejected requests are not counted: many more refusals change nothing.
      for (let i = 0; i < 5; i++) assert.equal((await t.get('/me', token)).status, 429);
      clock.advance(29_999);
      assert.equal((await t.get('/me', token)).status, 429);
      clock.advance(1); // Retry-After honoured: the first 50 leave the window
      const served = await t.get('/me', token);
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('x-ratelimit-remaining'), '49');
    });

    it('keeps one window per token', async () => {
      const other = await t.mintToken('acct_p', []);
      const res = await t.get('/me', other);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-ratelimit-remaining'), '99');
    });

    it('sends the headers on authenticated error responses too', async () => {
      const token = await t.mintToken('acct_p', []);
      const res = await t.get('/projects', token);
      assert.equal(res.status, 403);
      assert.deepEqual(res.body.error, {
        code: 'SCOPE_REQUIRED',
        message: 'This operation requires the scope projects:read',
      });
      assert.equal(res.headers.get('x-ratelimit-remaining'), '99');
    });
  });
}

describe('rate limiter turned off', () => {
  it('sends no limiter headers and never refuses when limits.requestsPerMinute is 0', async () => {
    const t = await startTestServer({ fixture: PROJECTS, config: { 'limits.requestsPerMinute': 0 } });
    try {
      const token = await t.mintToken('acct_p', []);
      for (let i = 0; i < 110; i++) assert.equal((await t.get('/me', token)).status, 200);
      assert.equal((await t.get('/me', token)).headers.get('x-ratelimit-limit'), null);
    } finally {
      await t.close();
    }
  });
});

describe('errors and the envelope', () => {
  let t: TestServer;
  let token: string;
  const logged: string[] = [];
  before(async () => {
    t = await startTestServer({
      fixture: PROJECTS,
      logger: { log: (level, message, fields) => logged.push(JSON.stringify({ level, message, ...fields })) },
    });
    token = await t.mintToken('acct_p', ['projects:read', 'workspaces:read', 'sites:read']);
  });
  after(() => t.close());

  it('answers unknown routes with 404 NOT_FOUND', async () => {
    const res = await t.get('/no-such-thing', token);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'NOT_FOUND');
    const outside = await t.request('GET', '/api/nothing-here', { unchecked: true });
    assert.equal(outside.status, 404);
  });

  it('answers a known route with another method with 405 and Allow', async () => {
    const res = await t.request('DELETE', '/projects', { token });
    assert.equal(res.status, 405);
    assert.equal(res.body.error.code, 'METHOD_NOT_ALLOWED');
    assert.match(res.headers.get('allow') ?? '', /GET/);
  });

  it('gives every response a distinct X-Request-Id', async () => {
    const a = await t.get('/me', token);
    const b = await t.get('/me', token);
    assert.notEqual(a.headers.get('x-request-id'), b.headers.get('x-request-id'));
  });

  it('turns an unexpected failure into a bare 500; the log line has the request id, message and stack (server-side only)', async () => {
    await sqlScript(t.store, 'ALTER TABLE projects RENAME TO projects_elsewhere');
    try {
      const res = await t.get('/projects', token);
      assert.equal(res.status, 500);
      assert.deepEqual(res.body, {
        ok: false,
        error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred' },
      });
      const line = logged.find((l) => l.includes(res.headers.get('x-request-id')!));
      assert.ok(line, 'the failure is logged with its request id');
      // decisions.md §15: the message and stack are for the operator, in the log, never in the body.
      // SQLite's words, or PostgreSQL's.
      assert.match(line!, /"message":"(no such table: projects|relation \\"projects\\" does not exist)"/);
      assert.match(
        line!,
        /"stack":"(SqliteError: no such table: projects|error: relation \\"projects\\" does not exist)\\n\s+at /,
      );
      assert.ok(!line!.includes(token), 'no token in the log line');
    } finally {
      await sqlScript(t.store, 'ALTER TABLE projects_elsewhere RENAME TO projects');
    }
  });

  it('serves the OpenAPI 3.1 document without a token', async () => {
    const res = await t.request('GET', '/api/public/openapi.json', { unchecked: true });
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    assert.deepEqual(res.body.servers, [{ url: '/api/public/v1' }]);
    assert.ok(res.body.paths['/me'].get);
  });
});
