/**
 * The settings area's sign-in, sessions and pages over real HTTP (decisions.md §18), with the
 * harness's fake clock for every window and expiry (no sleeps):
 * - every page but sign-in redirects (303) to it without a session and shows no data, an API
 *   token opens nothing, and every answer carries the §18 headers and is a page, never the envelope;
 * - a wrong password and an unknown email get the same message after the same work;
 * - the attempt limit (5 per email, 20 per client address in 15 minutes; 429 with when to try
 *   again, even with the right password), per forwarded address behind a trusted proxy;
 * - the session cookie's flags (`Secure` over HTTPS through a trusted proxy only), only the id's
 *   hash stored; idle and absolute expiry, sign-out, and a new password ending every session;
 * - the log lines and the metric of sign-ins; `settings.enabled: false` → 404.
 */
import assert from 'node:assert/strict';
import { createHash, scrypt } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  SCRYPT_CONCURRENCY,
  SCRYPT_MAX_WAITING,
  SCRYPT_RETRY_AFTER_S,
  ScryptQueue,
  hashPassword,
} from '../../src/domain/passwords.js';
import { isoAt } from '../../src/domain/clock.js';
import { createLogger } from '../../src/logger.js';
import { clientKey, emailKey } from '../../src/domain/sign-in.js';
import { recordSignInFailure, setAccountPassword } from '../../src/repos/sessions.js';
import { accountExists, createAccount } from '../../src/repos/tokens.js';
import { DEMO_TOKEN } from '../../src/seed/demo.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import {
  DEMO_EMAIL,
  DEMO_PASSWORD,
  OTHER_EMAIL,
  OTHER_PASSWORD,
  type PageAnswer,
  SettingsClient,
  giveDemoPasswords,
} from '../helpers/settings.js';

const MINUTE = 60_000;
const WRONG = /That email and password do not match an account that can sign in here/;

describe('settings area: sign-in and sessions', () => {
  let t: TestServer;
  const lines: string[] = [];
  const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  before(async () => {
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    t = await startTestServer({
      fixture: 'demo',
      logger,
      config: { 'metrics.enabled': true, 'server.trustProxy': ['127.0.0.1'] },
    });
    await giveDemoPasswords(t.store.db, t.clock.now());
  });
  after(() => t.close());
  // Each case starts past every window and session of the one before.
  beforeEach(() => t.clock.advance(13 * 60 * MINUTE));

  /** A client whose requests come through the (trusted) proxy at 127.0.0.1 from `address`. */
  const from = (address: string, extra: Record<string, string> = {}) =>
    new SettingsClient(t.origin, { 'x-forwarded-for': address, ...extra });
  const sessionRows = () => t.store.db.selectFrom('settings_sessions').select(['id_hash', 'account_id']).execute();

  it('redirects every page but sign-in to it without a session, showing no data; API tokens open nothing', async () => {
    const browser = from('192.0.2.1');
    for (const path of [
      '/settings',
      '/settings/',
      '/settings/api-access',
      '/settings/api-access/tokens/tok_demo_all_scopes/revoke',
    ]) {
      for (const headers of [{}, { authorization: `Bearer ${DEMO_TOKEN}` }] as Record<string, string>[]) {
        const res = await browser.get(path, headers);
        assert.equal(res.status, 303, path);
        assert.equal(res.location, '/settings/sign-in', path);
        assert.doesNotMatch(res.html, /Trailhead|tok_demo|oapi_/, `${path} shows no data`);
      }
    }
    const forms = await browser.post('/settings/api-access/tokens', { name: 'x', scopes: 'leads:read' });
    assert.equal(forms.status, 303);
    const signInPage = await browser.get('/settings/sign-in');
    assert.equal(signInPage.status, 200);
    assert.match(signInPage.html, /<label for="email">Email<\/label>/);
    assert.match(signInPage.html, /<label for="password">Password<\/label>/);
    assert.match(signInPage.html, /<button type="submit">Sign in<\/button>/);
    // No route: a page too, not the envelope; the client checks every answer's headers.
    const missing = await browser.get('/settings/nowhere');
    assert.equal(missing.status, 404);
    assert.match(missing.html, /<h1>Not found<\/h1>/);
    const css = await browser.get('/settings/assets/settings.css');
    assert.equal(css.status, 200);
    assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
  });

  it('signs in: cookie outreach_session (HttpOnly, SameSite=Strict, Path=/settings), only its SHA-256 stored', async () => {
    const browser = from('192.0.2.2');
    await browser.signIn(DEMO_EMAIL, DEMO_PASSWORD);
    const set = browser.setCookies.at(-1)!;
    const id = /^outreach_session=([A-Za-z0-9_-]{43});/.exec(set)?.[1];
    assert.ok(id, `a 256-bit id in base64url: ${set}`);
    assert.match(set, /; HttpOnly/);
    assert.match(set, /; SameSite=Strict/);
    assert.match(set, /; Path=\/settings(;|$)/);
    assert.doesNotMatch(set, /Secure/, 'plain HTTP: not Secure');
    const rows = await sessionRows();
    assert.ok(rows.some((r) => r.id_hash === createHash('sha256').update(id).digest('hex')));
    assert.ok(!JSON.stringify(rows).includes(id), 'the id itself is stored nowhere');
    const page = await browser.get('/settings/api-access');
    assert.equal(page.status, 200);
    assert.match(page.html, /Trailhead Outdoor Co\./);
    // Signed in: the sign-in page and /settings lead to API access.
    assert.equal((await browser.get('/settings/sign-in')).location, '/settings/api-access');
    assert.equal((await browser.get('/settings')).location, '/settings/api-access');
    // Email is case-insensitive and trimmed; the password is not.
    await from('192.0.2.2').signIn(`  ${DEMO_EMAIL.toUpperCase()} `, DEMO_PASSWORD);
    const caseOfPassword = await from('192.0.2.2').post('/settings/sign-in', {
      email: DEMO_EMAIL,
      password: DEMO_PASSWORD.toUpperCase(),
    });
    assert.equal(caseOfPassword.status, 422);
  });

  it('sets Secure, and takes the origin, from X-Forwarded-Proto/-Host of a trusted proxy only', async () => {
    const proxied = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'outreach.example.com' };
    const viaProxy = new SettingsClient(t.origin, proxied);
    const res = await viaProxy.post(
      '/settings/sign-in',
      { email: DEMO_EMAIL, password: DEMO_PASSWORD },
      { origin: 'https://outreach.example.com' },
    );
    assert.equal(res.status, 303);
    assert.match(viaProxy.setCookies.at(-1)!, /; Secure/);
    // The same headers from a server that trusts no proxy: ignored, so that origin is foreign.
    const direct = await startTestServer({ fixture: 'demo', clock: t.clock });
    try {
      await giveDemoPasswords(direct.store.db, t.clock.now());
      const client = new SettingsClient(direct.origin, proxied);
      const refused = await client.post(
        '/settings/sign-in',
        { email: DEMO_EMAIL, password: DEMO_PASSWORD },
        { origin: 'https://outreach.example.com' },
      );
      assert.equal(refused.status, 403);
      assert.equal(client.cookie, undefined);
      await client.signIn(DEMO_EMAIL, DEMO_PASSWORD);
      assert.doesNotMatch(client.setCookies.at(-1)!, /Secure/);
    } finally {
      await direct.close();
    }
  });

  it('gives a wrong password, an unknown email and an account without a password the same answer, after the same work', async () => {
    await setAccountPassword(t.store.db, 'acct_other', await hashPassword(OTHER_PASSWORD), isoAt(t.clock.now()));
    const answers: { kind: string; status: number; message: string; ms: number }[] = [];
    const attempt = async (kind: string, email: string, password: string) => {
      const started = performance.now();
      const res = await from(`198.51.100.${answers.length + 1}`).post('/settings/sign-in', { email, password });
      const ms = performance.now() - started;
      const message = /<div class="error-summary" role="alert" id="sign-in-error"><p>([^<]*)<\/p>/.exec(res.html)?.[1];
      answers.push({ kind, status: res.status, message: message ?? '', ms });
    };
    // Interleaved, four of each, every one from a fresh address and under every limit; another
    // spelling of an account's email (U+0130 for its i) is an unknown email too.
    for (let i = 0; i < 4; i++) {
      await attempt('wrong password', DEMO_EMAIL, `not the password ${i}`);
      await attempt('unknown email', `nobody-${i}@example.test`, DEMO_PASSWORD);
      await attempt('other spelling', DEMO_EMAIL.replace('i', '\u0130'), DEMO_PASSWORD);
    }
    await t.store.db.deleteFrom('account_passwords').where('account_id', '=', 'acct_other').execute();
    await attempt('no password', OTHER_EMAIL, OTHER_PASSWORD);
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([422]));
    assert.equal(new Set(answers.map((a) => a.message)).size, 1, JSON.stringify(answers));
    assert.match(answers[0]!.message, WRONG);
    // Both paths verify one scrypt hash (a stand-in without an account): without the stand-in an
    // unknown email answers ~100 times faster. The bound leaves room for a loaded machine.
    const median = (kind: string) => {
      const ms = answers
        .filter((a) => a.kind === kind)
        .map((a) => a.ms)
        .sort((a, b) => a - b);
      return (ms[1]! + ms[2]!) / 2;
    };
    for (const kind of ['unknown email', 'other spelling']) {
      const ratio = median(kind) / median('wrong password');
      assert.ok(
        ratio > 0.2 && ratio < 5,
        `${kind} / wrong password time: ${ratio.toFixed(2)} (${JSON.stringify(answers)})`,
      );
    }
    await giveDemoPasswords(t.store.db, t.clock.now());
  });

  it('refuses, after 5 failures for an email in 15 minutes, even the right password, saying when to try again (429)', async () => {
    const at = t.clock.now();
    for (let i = 0; i < 5; i++) {
      const res = await from(`203.0.113.${i + 1}`).post('/settings/sign-in', {
        email: DEMO_EMAIL,
        password: `wrong ${i}`,
      });
      assert.equal(res.status, 422);
      t.clock.advance(MINUTE);
    }
    const limited = await from('203.0.113.99').post('/settings/sign-in', {
      email: DEMO_EMAIL,
      password: DEMO_PASSWORD,
    });
    assert.equal(limited.status, 429);
    // The first failure leaves the window 15 minutes after it was made: 10 minutes from now.
    const allowed = new Date(at + 15 * MINUTE).toISOString().slice(11, 16);
    assert.match(
      limited.html,
      new RegExp(`Too many failed sign-ins\\. Try again after ${allowed} UTC \\(in 10 minutes\\)`),
    );
    assert.equal(limited.headers.get('retry-after'), String(10 * 60));
    assert.equal(limited.headers.get('set-cookie'), null, 'no session');
    // Another email is not limited by this one's failures.
    await from('203.0.113.99').signIn(OTHER_EMAIL, OTHER_PASSWORD);
    t.clock.advance(10 * MINUTE - 1);
    assert.equal(
      (await from('203.0.113.99').post('/settings/sign-in', { email: DEMO_EMAIL, password: DEMO_PASSWORD })).status,
      429,
    );
    t.clock.advance(1);
    await from('203.0.113.99').signIn(DEMO_EMAIL, DEMO_PASSWORD);
    // A sign-in clears the email's failures: one more failure is not the limit.
    await from('203.0.113.98').post('/settings/sign-in', { email: DEMO_EMAIL, password: 'wrong again' });
    await from('203.0.113.98').signIn(DEMO_EMAIL, DEMO_PASSWORD);
  });

  it('compares emails one way on every store (trimmed, ASCII letters folded): no other spelling signs in or gets a budget of its own', async () => {
    // An ASCII email with a k, for the Kelvin sign (U+212A: JavaScript and PostgreSQL's locale
    // lower-case it to k); the demo's has an i, for U+0130 (PostgreSQL: i; JavaScript: i + U+0307).
    const kit = 'kit@keystone.test';
    const nowIso = isoAt(t.clock.now());
    if (!(await accountExists(t.store.db, 'acct_kit'))) {
      await createAccount(t.store.db, { id: 'acct_kit', email: kit, name: 'Kit', plan: 'pro' }, nowIso);
      await setAccountPassword(t.store.db, 'acct_kit', await hashPassword(OTHER_PASSWORD), nowIso);
    }
    const tryAs = (email: string, password: string, i: number) =>
      from(`203.0.113.${200 + i}`).post('/settings/sign-in', { email, password });
    const others = [
      DEMO_EMAIL.replace('i', '\u0130'),
      DEMO_EMAIL.replace('i', 'i\u0307'),
      DEMO_EMAIL.replace('i', '\u0131'),
      kit.replace('k', '\u212a'),
      kit.replace('i', '\u0130'),
    ];
    // Spellings that differ in ASCII case alone are the same email, and share its 5 attempts.
    const spellings = [
      'OWNER@trailhead.test',
      ' owner@TRAILHEAD.test ',
      'Owner@Trailhead.Test',
      DEMO_EMAIL,
      'oWnEr@trailhead.TEST',
    ];
    for (const [i, email] of spellings.entries())
      assert.equal((await tryAs(email, `wrong ${i}`, i)).status, 422, email);
    assert.equal((await tryAs(DEMO_EMAIL.toUpperCase(), DEMO_PASSWORD, 9)).status, 429, 'the 6th, in any ASCII case');
    // Every other spelling, with the right password, is an email no account has: the same answer
    // as a wrong password, never a session (on PostgreSQL the İ one signed in here, past the limit,
    // and the Kelvin one signed in as acct_kit).
    for (const [i, email] of others.entries()) {
      const res = await tryAs(email, email.includes('keystone') ? OTHER_PASSWORD : DEMO_PASSWORD, 20 + i);
      assert.equal(res.status, 422, JSON.stringify(email));
      assert.match(res.html, WRONG);
      assert.equal(res.headers.get('set-cookie'), null, JSON.stringify(email));
    }
    await from('203.0.113.240').signIn(' KIT@Keystone.TEST ', OTHER_PASSWORD);
    // Still limited, and another spelling's failures took none of the 5 attempts.
    assert.equal((await tryAs(DEMO_EMAIL, DEMO_PASSWORD, 30)).status, 429);
    t.clock.advance(15 * MINUTE);
    await from('203.0.113.241').signIn(DEMO_EMAIL, DEMO_PASSWORD);
  });

  it('holds the limit for attempts sent at once: no more than 5 are tried, the rest are refused (429)', async () => {
    // Each attempt is counted from the moment it starts, not after its scrypt: otherwise a
    // hundred attempts sent together would all be tried before the first was recorded.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        from(`203.0.113.${100 + i}`).post('/settings/sign-in', { email: DEMO_EMAIL, password: `parallel ${i}` }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    const tried = statuses.filter((s) => s === 422).length;
    assert.ok(tried <= 5, `tried: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s !== 422 && s !== 429).length, 0, statuses.join(' '));
    // The tried ones count as failures, the refused ones do not: how many are tried depends on how
    // the attempts interleave (on PostgreSQL all 12 may see each other and none be tried), but
    // together with the failures that follow, exactly 5 are tried before the limit holds.
    for (let i = tried; i < 5; i++)
      assert.equal(
        (await from('203.0.113.97').post('/settings/sign-in', { email: DEMO_EMAIL, password: `after ${i}` })).status,
        422,
        `failure ${i + 1} of 5 is tried (${tried} in the batch)`,
      );
    assert.equal(
      (await from('203.0.113.99').post('/settings/sign-in', { email: DEMO_EMAIL, password: DEMO_PASSWORD })).status,
      429,
    );
  });

  it('refuses, after 20 failures from one client address, any sign-in from it; other addresses go on', async () => {
    const attacker = from('192.0.2.66');
    // 19 failures stored as a sign-in stores them (four per email, so that no email reaches its
    // own limit; a scrypt each through HTTP would cost two seconds), the 20th through the form.
    for (let i = 0; i < 19; i++)
      await recordSignInFailure(t.store.db, {
        emailKey: emailKey(`victim-${Math.floor(i / 4)}@example.test`),
        clientAddress: '192.0.2.66',
        atIso: isoAt(t.clock.now()),
      });
    const twentieth = await attacker.post('/settings/sign-in', { email: 'victim-5@example.test', password: 'guess' });
    assert.equal(twentieth.status, 422);
    const limited = await attacker.post('/settings/sign-in', { email: DEMO_EMAIL, password: DEMO_PASSWORD });
    assert.equal(limited.status, 429);
    assert.match(limited.html, /Try again after \d\d:\d\d UTC \(in 15 minutes\)/);
    await from('192.0.2.67').signIn(DEMO_EMAIL, DEMO_PASSWORD);
    t.clock.advance(15 * MINUTE);
    await attacker.signIn(DEMO_EMAIL, DEMO_PASSWORD);
  });

  it('counts an IPv6 client by its /64: failures from many addresses of one /64 limit them all; another /64 goes on', async () => {
    const network = '2001:db8:42:7';
    // 19 failures from 19 addresses of the /64, stored as a sign-in stores them (clientKey), four
    // per email; the 20th through the form from yet another address of it.
    for (let i = 0; i < 19; i++)
      await recordSignInFailure(t.store.db, {
        emailKey: emailKey(`v6-victim-${Math.floor(i / 4)}@example.test`),
        clientAddress: clientKey(`${network}:${(i + 1).toString(16)}::${i + 1}`),
        atIso: isoAt(t.clock.now()),
      });
    const twentieth = await from(`${network}:abcd:ef01:2345:6789`).post('/settings/sign-in', {
      email: 'v6-victim-5@example.test',
      password: 'guess',
    });
    assert.equal(twentieth.status, 422);
    // Through the proxy as written in X-Forwarded-For: bracketed with a port, and in full.
    for (const address of [`[${network}:ffff:ffff:ffff:ffff]:443`, '2001:0db8:0042:0007:0000:0000:0000:0001']) {
      const limited = await from(address).post('/settings/sign-in', { email: DEMO_EMAIL, password: DEMO_PASSWORD });
      assert.equal(limited.status, 429, address);
      assert.match(limited.html, /Try again after \d\d:\d\d UTC \(in 15 minutes\)/);
    }
    await from('2001:db8:42:8::1').signIn(DEMO_EMAIL, DEMO_PASSWORD);
    // IPv4 addresses stay one client each, IPv4-mapped ones included.
    assert.equal(clientKey('::ffff:192.0.2.66'), '192.0.2.66');
    assert.equal(clientKey('192.0.2.66'), '192.0.2.66');
    assert.equal(clientKey(`${network}::1%eth0`), '2001:db8:42:7::/64');
    assert.equal(clientKey('unknown'), 'unknown');
  });

  it('ends a session after settings.sessionIdleMinutes without a request, and 12 hours after it began', async () => {
    const browser = from('192.0.2.3');
    await browser.signIn(DEMO_EMAIL, DEMO_PASSWORD);
    // Used every 59 minutes, it lives on until its twelfth hour.
    for (let elapsed = 59; elapsed < 12 * 60; elapsed += 59) {
      t.clock.advance(59 * MINUTE);
      assert.equal((await browser.get('/settings/api-access')).status, 200, `after ${elapsed} minutes`);
    }
    t.clock.advance(12 * 60 * MINUTE - 12 * 59 * MINUTE + 1);
    const absolute = await browser.get('/settings/api-access');
    assert.equal(absolute.status, 303, '12 hours after it began');
    assert.equal(absolute.location, '/settings/sign-in?ended');
    assert.equal(browser.cookie, undefined, 'the cookie is cleared');
    assert.match((await browser.get('/settings/sign-in?ended')).html, /Your session ended/);

    await browser.signIn(DEMO_EMAIL, DEMO_PASSWORD);
    const cookie = browser.cookie;
    t.clock.advance(60 * MINUTE);
    assert.equal((await browser.get('/settings/api-access')).location, '/settings/sign-in?ended', '60 idle minutes');
    browser.cookie = cookie;
    assert.equal((await browser.get('/settings/api-access')).location, '/settings/sign-in', 'its row is gone');
  });

  it('takes settings.sessionIdleMinutes from the configuration', async () => {
    const short = await startTestServer({
      fixture: 'demo',
      clock: t.clock,
      config: { 'settings.sessionIdleMinutes': 5 },
    });
    try {
      await giveDemoPasswords(short.store.db, t.clock.now());
      const browser = new SettingsClient(short.origin);
      await browser.signIn(DEMO_EMAIL, DEMO_PASSWORD);
      t.clock.advance(4 * MINUTE);
      assert.equal((await browser.get('/settings/api-access')).status, 200);
      t.clock.advance(5 * MINUTE);
      assert.equal((await browser.get('/settings/api-access')).status, 303);
    } finally {
      await short.close();
    }
  });

  it('ends the session on "Sign out" (a form with the anti-forgery value) and the cookie with it', async () => {
    const browser = from('192.0.2.4');
    await browser.signIn(DEMO_EMAIL, DEMO_PASSWORD);
    const cookie = browser.cookie;
    const token = await browser.antiForgery();
    assert.equal((await browser.post('/settings/sign-out', {})).status, 403, 'without the anti-forgery value');
    assert.equal((await browser.get('/settings/api-access')).status, 200, 'still signed in');
    const out = await browser.post('/settings/sign-out', { _csrf: token });
    assert.equal(out.status, 303);
    assert.equal(out.location, '/settings/sign-in?signed-out');
    assert.match(browser.setCookies.at(-1)!, /^outreach_session=; Max-Age=0; Path=\/settings/);
    assert.match((await browser.get('/settings/sign-in?signed-out')).html, /You are signed out/);
    browser.cookie = cookie;
    assert.equal((await browser.get('/settings/api-access')).status, 303, 'the old cookie opens nothing');
  });

  it("ends every session of an account when its password is set again, and no other account's", async () => {
    const laptop = from('192.0.2.5');
    const phone = from('192.0.2.6');
    const other = from('192.0.2.7');
    await laptop.signIn(DEMO_EMAIL, DEMO_PASSWORD);
    await phone.signIn(DEMO_EMAIL, DEMO_PASSWORD);
    await other.signIn(OTHER_EMAIL, OTHER_PASSWORD);
    await setAccountPassword(t.store.db, 'acct_demo', await hashPassword('a brand new password'), isoAt(t.clock.now()));
    assert.equal((await laptop.get('/settings/api-access')).status, 303);
    assert.equal((await phone.get('/settings/api-access')).status, 303);
    assert.equal((await other.get('/settings/api-access')).status, 200);
    assert.equal((await laptop.post('/settings/sign-in', { email: DEMO_EMAIL, password: DEMO_PASSWORD })).status, 422);
    await laptop.signIn(DEMO_EMAIL, 'a brand new password');
    await giveDemoPasswords(t.store.db, t.clock.now());
  });

  it('logs sign-ins, failures and refusals at info with the account id and client address, never what was typed; counts them', async () => {
    const entries = logged().filter((e) => typeof e.msg === 'string' && (e.msg as string).startsWith('settings sign-'));
    const messages = new Set(entries.map((e) => e.msg));
    for (const msg of [
      'settings sign-in',
      'settings sign-in failed',
      'settings sign-in refused: too many failed attempts',
      'settings sign-out',
    ])
      assert.ok(messages.has(msg), `logged: ${msg}`);
    for (const e of entries) assert.equal(e.level, 'info');
    const ok = entries.find((e) => e.msg === 'settings sign-in' && e.clientAddress === '192.0.2.3');
    assert.equal(ok?.accountId, 'acct_demo', 'the forwarded client address of a trusted proxy');
    const text = lines.join('\n');
    for (const secret of [
      DEMO_PASSWORD,
      OTHER_PASSWORD,
      'a brand new password',
      'not the password',
      DEMO_EMAIL,
      'victim-',
    ])
      assert.ok(!text.includes(secret), `"${secret}" in the log`);
    const metrics = await (await fetch(`${t.origin}/metrics`)).text();
    for (const result of ['ok', 'failed', 'limited']) {
      const count = Number(
        new RegExp(`^outreach_settings_sign_ins_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(metrics)?.[1],
      );
      const expected = entries.filter((e) =>
        result === 'ok'
          ? e.msg === 'settings sign-in'
          : result === 'failed'
            ? e.msg === 'settings sign-in failed'
            : /refused/.test(String(e.msg)),
      ).length;
      assert.equal(count, expected, `outreach_settings_sign_ins_total{result="${result}"}`);
    }
  });
});

describe('settings area: sign-ins waiting for scrypt', () => {
  it(`computes at most ${SCRYPT_CONCURRENCY} hashes at once, lets ${SCRYPT_MAX_WAITING} wait, and refuses more at once (429, Retry-After, a page)`, {
    timeout: 60_000,
  }, async () => {
    // node:crypto's scrypt behind a gate this test opens: until then every hash that starts holds
    // its slot, so what the queue admits and refuses does not depend on how fast hashes are.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let hashing = 0;
    let most = 0;
    const queue = new ScryptQueue({
      scrypt: async (password, salt, keyLength, options) => {
        most = Math.max(most, ++hashing);
        try {
          await gate;
          return await new Promise<Buffer>((resolve, reject) =>
            scrypt(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
          );
        } finally {
          hashing--;
        }
      },
    });
    const t = await startTestServer({ fixture: 'demo', scrypt: queue, config: { 'server.trustProxy': ['127.0.0.1'] } });
    try {
      const extra = 5;
      const total = SCRYPT_CONCURRENCY + SCRYPT_MAX_WAITING + extra;
      // Every attempt for an email and from an address of its own: no attempt limit is near.
      const answers = Array.from({ length: total }, (_, i) =>
        new SettingsClient(t.origin, { 'x-forwarded-for': `198.18.${i >> 8}.${i & 255}` }).post('/settings/sign-in', {
          email: `flood-${i}@example.test`,
          password: 'a guess',
        }),
      );
      // While the gate is shut nothing can be answered but a refusal of the full queue. A queue
      // that refuses nothing would leave every attempt waiting: after 20 s the gate opens and the
      // test fails, rather than hang.
      const refused: PageAnswer[] = [];
      let deadline: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve, reject) => {
        deadline = setTimeout(() => {
          open();
          reject(new Error(`${refused.length} of ${total} answered in 20 s while ${hashing} hashes were held`));
        }, 20_000);
        for (const answer of answers)
          void answer.then((a) => {
            refused.push(a);
            if (refused.length === extra) resolve();
          });
      }).finally(() => clearTimeout(deadline));
      for (const a of refused) {
        assert.equal(a.status, 429);
        assert.equal(a.headers.get('retry-after'), String(SCRYPT_RETRY_AFTER_S));
        assert.match(a.html, /Too many sign-ins are being checked right now\. Try again in a moment\./);
        assert.match(a.html, /<form method="post" action="\/settings\/sign-in"/, 'the sign-in page, with its form');
      }
      assert.equal(queue.running, SCRYPT_CONCURRENCY);
      assert.equal(queue.waiting, SCRYPT_MAX_WAITING);
      assert.equal(most, SCRYPT_CONCURRENCY);
      open();
      const statuses = (await Promise.all(answers)).map((a) => a.status);
      assert.equal(
        statuses.filter((s) => s === 422).length,
        SCRYPT_CONCURRENCY + SCRYPT_MAX_WAITING,
        statuses.join(' '),
      );
      assert.equal(statuses.filter((s) => s === 429).length, extra);
      assert.equal(most, SCRYPT_CONCURRENCY, 'never more hashes at once');
      // The refused attempts were not counted as failures: their emails try again at once.
      const again = await new SettingsClient(t.origin, { 'x-forwarded-for': '198.18.1.1' }).post('/settings/sign-in', {
        email: `flood-${answers.length - 1}@example.test`,
        password: 'a guess',
      });
      assert.equal(again.status, 422);
      assert.equal(queue.running + queue.waiting, 0);
    } finally {
      await t.close();
    }
  });
});

describe('settings area turned off', () => {
  it('answers 404 under /settings with settings.enabled false', async () => {
    const t = await startTestServer({ fixture: 'demo', config: { 'settings.enabled': false } });
    try {
      for (const path of ['/settings', '/settings/sign-in', '/settings/api-access', '/settings/assets/settings.css'])
        assert.equal((await fetch(`${t.origin}${path}`, { redirect: 'manual' })).status, 404, path);
      const post = await fetch(`${t.origin}/settings/sign-in`, {
        method: 'POST',
        headers: { origin: t.origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: `email=${DEMO_EMAIL}&password=${DEMO_PASSWORD}`,
      });
      assert.equal(post.status, 404);
    } finally {
      await t.close();
    }
  });
});
