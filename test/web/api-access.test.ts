/**
 * The API access page over real HTTP (decisions.md §18): what it shows, the create form (field
 * errors, nothing created on bad input, the raw token once), a token made in the page working at
 * once against the API with exactly its scopes, the 10-token limit, revoke → 401, another
 * account's tokens never reachable, forged posts refused with nothing changed, and the log.
 * The browser side (labels, keyboard, JavaScript off, axe-core) is test/browser/settings.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/logger.js';
import { listTokens } from '../../src/repos/tokens.js';
import { DEMO_TOKEN, DEMO_TOKEN_ID, OTHER_TOKEN_ID } from '../../src/seed/demo.js';
import { API, startTestServer, type TestServer } from '../helpers/harness.js';
import {
  DEMO_EMAIL,
  DEMO_PASSWORD,
  OTHER_EMAIL,
  OTHER_PASSWORD,
  SettingsClient,
  antiForgeryOf,
  giveDemoPasswords,
} from '../helpers/settings.js';

const RAW_TOKEN = /oapi_[0-9A-Za-z]{49}/g;

describe('settings area: API access', () => {
  let t: TestServer;
  let browser: SettingsClient;
  let csrf: string;
  const lines: string[] = [];
  const created: string[] = [];
  const tokensOf = (accountId: string) => listTokens(t.store.db, accountId);

  before(async () => {
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    t = await startTestServer({ fixture: 'demo', logger, config: { 'limits.requestsPerMinute': 0 } });
    await giveDemoPasswords(t.store.db, t.clock.now());
    browser = new SettingsClient(t.origin);
    await browser.signIn(DEMO_EMAIL, DEMO_PASSWORD);
    csrf = await browser.antiForgery();
  });
  after(() => t.close());

  /** Creates a token through the page; returns the raw value shown. */
  const create = async (name: string, scopes: string[], expires = 'never', expiresOn = '') => {
    t.clock.advance(60_000); // each token a minute newer than the one before
    const res = await browser.post('/settings/api-access/tokens', { _csrf: csrf, name, scopes, expires, expiresOn });
    assert.equal(res.status, 200, res.html.slice(0, 500));
    const shown = res.html.match(RAW_TOKEN) ?? [];
    assert.equal(shown.length, 1, 'the raw token appears once on the page');
    created.push(shown[0]!);
    return { raw: shown[0]!, html: res.html };
  };

  it("shows the account's name and plan, the active count, and its tokens only, newest first", async () => {
    const page = await browser.get('/settings/api-access');
    assert.equal(page.status, 200);
    assert.match(page.html, /Account <strong>Trailhead Outdoor Co\.<\/strong> · plan <strong>pro<\/strong>/);
    assert.match(page.html, /1 of 10 active tokens/);
    assert.match(page.html, /Demo token \(every scope\)/);
    assert.doesNotMatch(page.html, new RegExp(OTHER_TOKEN_ID), "another account's token never appears");
    for (const header of ['Name', 'Scopes', 'Created', 'Expires', 'Last used', 'Status'])
      assert.match(page.html, new RegExp(`<th scope="col">${header}</th>`));
    // Its tokens' hashes and raw values are nowhere on the page.
    assert.doesNotMatch(page.html, RAW_TOKEN);
    assert.ok(!page.html.includes(DEMO_TOKEN));
  });

  it('refuses bad input with each problem next to its field, creating nothing', async () => {
    const before = (await tokensOf('acct_demo')).length;
    const cases: { fields: Record<string, string | string[]>; field: string; message: RegExp }[] = [
      {
        fields: { name: '', scopes: 'leads:read', expires: 'never' },
        field: 'token-name-error',
        message: /Give the token a name/,
      },
      {
        fields: { name: '   ', scopes: 'leads:read', expires: 'never' },
        field: 'token-name-error',
        message: /Give the token a name/,
      },
      {
        fields: { name: 'x'.repeat(101), scopes: 'leads:read', expires: 'never' },
        field: 'token-name-error',
        message: /at most 100 characters \(this one has 101\)/,
      },
      ...['ci\u009b31m', 'ci\u009d0;x', 'deploy\u202egnp.exe'].map((name) => ({
        fields: { name, scopes: 'leads:read', expires: 'never' },
        field: 'token-name-error',
        message: /cannot contain control or format characters \(such as a line break or a direction override\)/,
      })),
      { fields: { name: 'ok', expires: 'never' }, field: 'scopes-error', message: /Choose at least one scope/ },
      {
        fields: { name: 'ok', scopes: 'admin:all', expires: 'never' },
        field: 'scopes-error',
        message: /from the list only/,
      },
      {
        fields: { name: 'ok', scopes: 'leads:read', expires: '365' },
        field: 'token-expires-error',
        message: /Choose when/,
      },
      {
        fields: { name: 'ok', scopes: 'leads:read', expires: 'date', expiresOn: '2026-02-30' },
        field: 'token-expires-on-error',
        message: /as a date/,
      },
      {
        fields: { name: 'ok', scopes: 'leads:read', expires: 'date', expiresOn: '2026-11-01' },
        field: 'token-expires-on-error',
        message: /after today/,
      },
    ];
    for (const { fields, field, message } of cases) {
      const res = await browser.post('/settings/api-access/tokens', { _csrf: csrf, ...fields });
      assert.equal(res.status, 422, JSON.stringify(fields));
      const error = new RegExp(`<p class="error" id="${field}">[\\s\\S]*?</p>`).exec(res.html)?.[0] ?? '';
      assert.match(error, message, `${JSON.stringify(fields)}: ${field}`);
      // The field points at its error, and the summary links to the field.
      assert.match(res.html, new RegExp(`aria-describedby="[^"]*${field}[^"]*"`));
      assert.match(res.html, /<div class="error-summary" role="alert">/);
    }
    // What was typed is kept: the name and the scopes chosen.
    const kept = await browser.post('/settings/api-access/tokens', {
      _csrf: csrf,
      name: 'keep me',
      scopes: ['leads:read', 'sites:read'],
      expires: 'date',
      expiresOn: 'tomorrow',
    });
    assert.match(kept.html, /value="keep me"/);
    assert.match(kept.html, /value="leads:read" checked=""/);
    assert.match(kept.html, /value="sites:read" checked=""/);
    assert.match(kept.html, /value="projects:read" aria-describedby/);
    assert.equal((await tokensOf('acct_demo')).length, before, 'nothing created');
  });

  it('creates a token that works at once against the API with exactly its scopes, shown once', async () => {
    const { raw, html } = await create('reporting job', ['projects:read', 'leads:read'], '30');
    assert.match(html, /<label for="new-token">New token<\/label>/);
    assert.match(html, new RegExp(`<input id="new-token" type="text" readonly="" value="${raw}"`));
    assert.match(html, /it will not be shown again/);
    assert.match(
      html,
      /<button type="button" data-copy="new-token" data-status="copy-status" hidden="">Copy<\/button>/,
    );
    assert.match(html, /<script src="\/settings\/assets\/copy\.js" defer=""><\/script>/);
    // At once: /me, a route of each of its scopes, and 403 SCOPE_REQUIRED for one it lacks.
    const me = await t.get('/me', raw);
    assert.equal(me.status, 200);
    assert.deepEqual([...me.body.data.token.scopes].sort(), ['leads:read', 'projects:read']);
    assert.equal((await t.get('/projects', raw)).status, 200);
    assert.equal((await t.get('/projects/prj_demo_main/leads', raw)).status, 200);
    for (const path of ['/workspaces', '/projects/prj_demo_main/sites', '/projects/prj_demo_main/backlinks']) {
      const refused = await t.get(path, raw);
      assert.equal(refused.status, 403, path);
      assert.equal(refused.body.error.code, 'SCOPE_REQUIRED', path);
    }
    // The expiry chosen: 30 days from now.
    const row = (await tokensOf('acct_demo')).find((r) => r.name === 'reporting job')!;
    assert.equal(Date.parse(row.expires_at!) - t.clock.now(), 30 * 24 * 60 * 60 * 1000);
    // A date: 00:00 UTC that day.
    await create('dated', ['sites:read'], 'date', '2027-03-01');
    assert.equal((await tokensOf('acct_demo')).find((r) => r.name === 'dated')!.expires_at, '2027-03-01T00:00:00.000Z');
    // Never again: the page, any other page, and the raw value is in no later answer.
    for (const path of ['/settings/api-access', `/settings/api-access/tokens/${row.id}/revoke`, '/settings/sign-in']) {
      const later = await browser.get(path);
      assert.ok(!later.html.includes(raw), `${path} does not show the raw token`);
    }
    const listed = await browser.get('/settings/api-access');
    assert.match(listed.html, /reporting job/);
    assert.match(listed.html, /3 of 10 active tokens/);
    // Newest first.
    assert.ok(listed.html.indexOf('dated') < listed.html.indexOf('reporting job'));
    assert.ok(listed.html.indexOf('reporting job') < listed.html.indexOf('Demo token (every scope)'));
  });

  it('holds the 10-token limit: the page says so, and an 11th create is refused with that message', async () => {
    const active = async () => (await tokensOf('acct_demo')).filter((r) => r.revoked_at === null).length;
    for (let n = await active(); n < 10; n = await active()) await create(`filler ${n}`, ['sites:read']);
    const page = await browser.get('/settings/api-access');
    assert.match(page.html, /10 of 10 active tokens/);
    assert.match(page.html, /This account has 10 active tokens, the most it may have\. Revoke one to create another\./);
    const refused = await browser.post('/settings/api-access/tokens', {
      _csrf: csrf,
      name: 'eleventh',
      scopes: 'sites:read',
      expires: 'never',
    });
    assert.equal(refused.status, 409);
    assert.match(refused.html, /<div class="error-summary" role="alert">[\s\S]*This account has 10 active tokens/);
    assert.doesNotMatch(refused.html, RAW_TOKEN);
    assert.equal(await active(), 10);
    assert.ok(!(await tokensOf('acct_demo')).some((r) => r.name === 'eleventh'));
  });

  it('revokes after a confirmation naming the token; the token answers 401 from the next request', async () => {
    const target = (await tokensOf('acct_demo')).find((r) => r.name === 'reporting job')!;
    const raw = created[0]!;
    const confirm = await browser.get(`/settings/api-access/tokens/${target.id}/revoke`);
    assert.equal(confirm.status, 200);
    assert.match(confirm.html, /<h1>Revoke token “reporting job”\?<\/h1>/);
    assert.match(confirm.html, /<button type="submit" class="danger">Revoke token<\/button>/);
    const done = await browser.post(`/settings/api-access/tokens/${target.id}/revoke`, {
      _csrf: antiForgeryOf(confirm.html),
    });
    assert.equal(done.status, 303);
    assert.equal(done.location, `/settings/api-access?revoked=${target.id}`);
    const me = await t.get('/me', raw);
    assert.equal(me.status, 401);
    assert.equal(me.body.error.code, 'UNAUTHORIZED');
    const page = await browser.get(done.location!);
    assert.match(page.html, /Token “reporting job” is revoked/);
    assert.match(page.html, /9 of 10 active tokens/);
    assert.match(page.html, /<span class="state-revoked">revoked<\/span>/);
    // Room again: a create works.
    await create('after revoke', ['leads:read']);
  });

  it("answers 404 to another account's token id (or none), changing nothing", async () => {
    const other = new SettingsClient(t.origin);
    await other.signIn(OTHER_EMAIL, OTHER_PASSWORD);
    const otherCsrf = await other.antiForgery();
    for (const id of [DEMO_TOKEN_ID, 'tok_nope']) {
      assert.equal((await other.get(`/settings/api-access/tokens/${id}/revoke`)).status, 404, id);
      const posted = await other.post(`/settings/api-access/tokens/${id}/revoke`, { _csrf: otherCsrf });
      assert.equal(posted.status, 404, id);
      assert.match(posted.html, /<h1>Not found<\/h1>/);
    }
    assert.equal((await t.get('/me', DEMO_TOKEN)).status, 200, "acct_demo's token still works");
    const page = await other.get('/settings/api-access');
    assert.match(page.html, /Northwind Bikes/);
    assert.doesNotMatch(page.html, /Demo token|reporting job|filler/);
  });

  it('refuses forged posts (no anti-forgery value, a wrong one, a foreign or missing Origin) with 403, changing nothing', async () => {
    const other = new SettingsClient(t.origin);
    await other.signIn(OTHER_EMAIL, OTHER_PASSWORD);
    const foreignCsrf = await other.antiForgery();
    const count = async () => (await tokensOf('acct_demo')).length;
    const before = await count();
    const revoke = `/settings/api-access/tokens/${DEMO_TOKEN_ID}/revoke`;
    const attempts: [string, Record<string, string>, { origin?: string | null }][] = [
      ['no value', {}, {}],
      ['empty value', { _csrf: '' }, {}],
      ["another session's value", { _csrf: foreignCsrf }, {}],
      ['foreign Origin', { _csrf: csrf }, { origin: 'https://evil.example' }],
      ['Origin null', { _csrf: csrf }, { origin: 'null' }],
      ['no Origin', { _csrf: csrf }, { origin: null }],
    ];
    for (const [label, fields, options] of attempts) {
      const made = await browser.post(
        '/settings/api-access/tokens',
        { ...fields, name: `forged ${label}`, scopes: 'leads:read', expires: 'never' },
        options,
      );
      assert.equal(made.status, 403, `create, ${label}`);
      assert.match(made.html, /was refused/);
      assert.equal((await browser.post(revoke, fields, options)).status, 403, `revoke, ${label}`);
      assert.equal((await browser.post('/settings/sign-out', fields, options)).status, 403, `sign-out, ${label}`);
    }
    assert.equal(await count(), before, 'no token created');
    assert.equal((await t.get('/me', DEMO_TOKEN)).status, 200, 'the demo token is not revoked');
    assert.equal((await browser.get('/settings/api-access')).status, 200, 'still signed in');
    // A sign-in posted from another site starts no session.
    const elsewhere = new SettingsClient(t.origin);
    const signIn = await elsewhere.post(
      '/settings/sign-in',
      { email: DEMO_EMAIL, password: DEMO_PASSWORD },
      { origin: 'https://evil.example' },
    );
    assert.equal(signIn.status, 403);
    assert.equal(elsewhere.cookie, undefined);
  });

  it('logs creations and revocations with account, token and client address, and never a raw token', async () => {
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const creations = entries.filter((e) => e.msg === 'settings token created');
    assert.equal(creations.length, created.length);
    for (const e of creations) {
      assert.equal(e.level, 'info');
      assert.equal(e.accountId, 'acct_demo');
      assert.match(String(e.tokenId), /^tok_/);
      assert.equal(e.clientAddress, '127.0.0.1');
    }
    const revocation = entries.find((e) => e.msg === 'settings token revoked');
    assert.equal(revocation?.accountId, 'acct_demo');
    assert.match(String(revocation?.tokenId), /^tok_/);
    const text = lines.join('\n');
    for (const raw of created) assert.ok(!text.includes(raw), 'a raw token in the log');
    assert.ok(!text.includes(DEMO_PASSWORD));
    // The access log has the settings requests, paths only.
    assert.ok(entries.some((e) => e.msg === 'request' && e.path === '/settings/api-access/tokens' && e.status === 200));
    assert.equal((await fetch(`${t.origin}${API}/me`)).status, 401);
  });
});
