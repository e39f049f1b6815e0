/**
 * The access log (decisions.md §15): one JSON line per request with the fields of §15, through
 * the pino-backed logger, and never a raw token or `Authorization` value — for every kind of
 * request: accepted, refused at each step of the pipeline (401 with a token sent, 403, 404, 405,
 * 415, 422, 429), replayed, a 500, and tokens put where they do not belong (the query
 * string, the path, the user agent).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isoAt } from '../../src/domain/clock.js';
import { createLogger } from '../../src/logger.js';
import { revokeToken } from '../../src/repos/tokens.js';
import { generateToken, hashToken } from '../../src/domain/tokens.js';
import { API, type TestServer } from '../helpers/harness.js';
import { startWriteServer } from '../writes/helpers.js';
import { sqlGet, sqlScript } from '../helpers/sql.js';

const FIELDS = [
  'time',
  'level',
  'msg',
  'requestId',
  'method',
  'route',
  'path',
  'status',
  'errorCode',
  'durationMs',
  'bytes',
  'tokenId',
  'accountId',
  'remoteAddr',
  'userAgent',
];
const REPLY = '/projects/prj_a1/sites/site_a1/threads/thr_a1/replies';
const METRICS_TOKEN = 'metrics-token-never-logged-42';

describe('access log', () => {
  let t: TestServer;
  const lines: string[] = [];
  before(async () => {
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    t = await startWriteServer({
      logger,
      config: { 'limits.requestsPerMinute': 30, 'metrics.enabled': true, 'metrics.token': METRICS_TOKEN },
    });
  });
  after(() => t.close());

  const entries = () => lines.map((line) => JSON.parse(line) as Record<string, any>);
  const requestEntry = (requestId: string | null) => {
    const found = entries().filter((e) => e.msg === 'request' && e.requestId === requestId);
    assert.equal(found.length, 1, `one access line for request ${requestId}`);
    return found[0]!;
  };

  it('writes one line per request with the fields of §15', async () => {
    const token = await t.mintToken('acct_a', ['projects:read']);
    const res = await fetch(`${t.origin}${API}/projects/prj_a1?x=1`, {
      headers: { authorization: `Bearer ${token}`, 'user-agent': 'access-log-test/1.0' },
    });
    const text = await res.text();
    const entry = requestEntry(res.headers.get('x-request-id'));
    assert.deepEqual(Object.keys(entry).sort(), [...FIELDS].sort());
    assert.equal(entry.level, 'info');
    assert.equal(entry.msg, 'request');
    assert.ok(!Number.isNaN(Date.parse(entry.time)));
    assert.equal(entry.method, 'GET');
    assert.equal(entry.route, '/api/public/v1/projects/:projectId');
    assert.equal(entry.path, '/api/public/v1/projects/prj_a1', 'the path, without the query string');
    assert.equal(entry.status, 200);
    assert.equal(entry.errorCode, null);
    assert.ok(typeof entry.durationMs === 'number' && entry.durationMs > 0);
    assert.ok(entry.bytes > Buffer.byteLength(text), 'bytes written: headers and body');
    assert.match(entry.tokenId, /^tok_/);
    assert.equal(entry.accountId, 'acct_a');
    assert.equal(entry.remoteAddr, '127.0.0.1');
    assert.equal(entry.userAgent, 'access-log-test/1.0');

    const missing = await fetch(`${t.origin}/nowhere`);
    await missing.text();
    const notFound = requestEntry(missing.headers.get('x-request-id'));
    assert.equal(notFound.route, null);
    assert.equal(notFound.status, 404);
    assert.equal(notFound.errorCode, 'NOT_FOUND');
  });

  it('never writes a raw token or an Authorization value, whatever the request', async () => {
    const good = await t.mintToken('acct_a', ['outreach:send', 'outreach:read', 'projects:read']);
    const noScope = await t.mintToken('acct_a', []);
    const revoked = await t.mintToken('acct_a', ['projects:read']);
    const revokedId = (
      (await sqlGet(t.store, 'SELECT id FROM api_tokens WHERE token_hash = ?', hashToken(revoked))) as { id: string }
    ).id;
    assert.ok(await revokeToken(t.store.db, revokedId, isoAt(t.clock.now())));
    const expired = await t.mintToken('acct_a', ['projects:read'], { expiresAt: isoAt(t.clock.now() - 1000) });
    const unknown = generateToken();
    const secrets = [good, noScope, revoked, expired, unknown, METRICS_TOKEN, 'not-even-a-token-s3cr3t'];
    const authorizations: string[] = [];
    const statuses = new Set<number>();
    const send = async (
      method: string,
      path: string,
      init: { auth?: string; body?: string; type?: string; ua?: string } = {},
    ) => {
      const headers: Record<string, string> = {};
      if (init.auth !== undefined) {
        headers.authorization = init.auth;
        authorizations.push(init.auth);
      }
      if (init.type) headers['content-type'] = init.type;
      if (init.ua) headers['user-agent'] = init.ua;
      const res = await fetch(t.origin + path, { method, headers, body: init.body });
      await res.arrayBuffer();
      statuses.add(res.status);
      const entry = requestEntry(res.headers.get('x-request-id'));
      assert.equal(entry.status, res.status);
      return res.status;
    };
    const bearer = (token: string) => `Bearer ${token}`;

    assert.equal(await send('GET', `${API}/me`, { auth: bearer(good) }), 200);
    for (const token of [revoked, expired, unknown])
      assert.equal(await send('GET', `${API}/me`, { auth: bearer(token) }), 401);
    assert.equal(await send('GET', `${API}/me`, { auth: `Basic ${good}` }), 401);
    assert.equal(await send('GET', `${API}/me`, { auth: `Bearer ${good} trailing` }), 401);
    assert.equal(await send('GET', `${API}/me`, { auth: 'Bearer not-even-a-token-s3cr3t' }), 401);
    assert.equal(await send('GET', `${API}/me?token=${good}&access_token=${good}`), 401);
    assert.equal(await send('GET', `${API}/projects/${good}`, { auth: bearer(good) }), 404);
    assert.equal(await send('GET', `${API}/${good}/nowhere`, { auth: bearer(good) }), 404);
    assert.equal(await send('GET', `${API}/me`, { auth: bearer(good), ua: `curl/8 ${good}` }), 200);
    assert.equal(await send('GET', `${API}/projects`, { auth: bearer(noScope) }), 403);
    assert.equal(await send('DELETE', `${API}/me`, { auth: bearer(good) }), 405);
    assert.equal(await send('GET', `${API}/projects?limit=abc`, { auth: bearer(good) }), 422);
    assert.equal(
      await send('POST', API + REPLY, { auth: bearer(good), body: '{"body":', type: 'application/json' }),
      422,
    );
    assert.equal(await send('POST', API + REPLY, { auth: bearer(good), body: 'body=x', type: 'text/plain' }), 415);
    const reply = JSON.stringify({ body: 'Thanks, the link is live now.', idempotencyKey: 'log-reply-0001' });
    assert.equal(await send('POST', API + REPLY, { auth: bearer(good), body: reply, type: 'application/json' }), 202);
    assert.equal(await send('POST', API + REPLY, { auth: bearer(good), body: reply, type: 'application/json' }), 202);
    assert.equal(await send('GET', '/healthz', { auth: bearer(good) }), 200);
    assert.equal(await send('GET', '/readyz', { auth: bearer(good) }), 200);
    assert.equal(await send('GET', '/metrics', { auth: bearer(METRICS_TOKEN) }), 200);
    assert.equal(await send('GET', '/metrics', { auth: bearer(good) }), 401);
    assert.equal(await send('GET', '/api/public/docs', { auth: bearer(good) }), 200);
    let status = 0;
    while (status !== 429) status = await send('GET', `${API}/me`, { auth: bearer(good) });
    // A 500: the table behind the keyword list is gone.
    await sqlScript(t.store, 'ALTER TABLE keywords RENAME TO keywords_gone');
    try {
      assert.equal(await send('GET', `${API}/projects/prj_a1/sites/site_a1/keywords`, { auth: bearer(noScope) }), 403);
      const seo = await t.mintToken('acct_a', ['sites:read']);
      const res = await fetch(`${t.origin}${API}/projects/prj_a1/sites/site_a1/keywords`, {
        headers: { authorization: bearer(seo) },
      });
      authorizations.push(bearer(seo));
      secrets.push(seo);
      await res.text();
      assert.equal(res.status, 500);
      {
        const id = res.headers.get('x-request-id');
        assert.equal(requestEntry(id).errorCode, 'INTERNAL_ERROR');
        assert.ok(
          entries().some((e) => e.level === 'error' && e.requestId === id),
          'the 500 is logged at error with its request id',
        );
        statuses.add(500);
      }
    } finally {
      await sqlScript(t.store, 'ALTER TABLE keywords_gone RENAME TO keywords');
    }

    for (const code of [200, 202, 401, 403, 404, 405, 415, 422, 429, 500])
      assert.ok(statuses.has(code), `a ${code} was logged`);
    const log = lines.join('');
    for (const secret of [...secrets, ...authorizations])
      assert.ok(!log.includes(secret), `the log holds ${secret.slice(0, 12)}…`);
    assert.ok(!/authorization/i.test(log), 'no Authorization header in the log');
    assert.ok(log.includes('oapi_[masked]'), 'a token-shaped path segment is masked, not dropped');
  });

  it('writes nothing below log.level', async () => {
    const quiet: string[] = [];
    const logger = createLogger({ level: 'warn', destination: { write: (line: string) => void quiet.push(line) } });
    logger.log('info', 'request', { status: 200 });
    logger.log('warn', 'a warning', { n: 1 });
    assert.equal(quiet.length, 1);
    assert.equal(JSON.parse(quiet[0]!).msg, 'a warning');
    const silent = createLogger({ level: 'silent', destination: { write: (line: string) => void quiet.push(line) } });
    silent.log('error', 'dropped');
    assert.equal(quiet.length, 1);
  });
});
