/**
 * The settings area in a real browser (decisions.md §18): playwright-core drives Debian's Chromium
 * (`/usr/bin/chromium`, or `CHROMIUM_PATH`; skipped in one line without it, a failure under `CI`),
 * one browser for the file and a context per case. Elements are found as a person finds them,
 * by role and label.
 *
 * - The README's way: `serve --demo` as a real process prints the sign-in URL and credentials; a
 *   person signs in, makes a token by hand and it works against the API at once with exactly its
 *   scopes (200 / 403 `SCOPE_REQUIRED`); the copy button copies it; the page loads nothing from
 *   another host. Saves dist/screenshots/settings-api-access.png (the README's picture).
 * - The whole flow with JavaScript turned off: errors next to their fields, create, the raw
 *   token only on the create's answer (not in any URL, not after going back), revoke → 401,
 *   sign-out.
 * - The keyboard alone (and the session cookie's flags), 375 px and desktop widths, and axe-core (from
 *   npm, injected) with no `serious` or `critical` violation on the sign-in and API access pages,
 *   as first shown and with form errors.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AxeResults } from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { API, startTestServer, type TestServer } from '../helpers/harness.js';
import { serveProcess, type ServeProcess } from '../helpers/cli.js';
import { sleep } from '../helpers/ports.js';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, serviceSkip } from '../helpers/services.js';
import { DEMO_EMAIL, DEMO_PASSWORD, giveDemoPasswords } from '../helpers/settings.js';

const BROWSER = CHROMIUM_PATH;
const FLAGS = CHROMIUM_FLAGS;
const SCREENSHOT = resolve('dist/screenshots/settings-api-access.png');
const AXE = join(createRequire(import.meta.url).resolve('axe-core'), '../axe.min.js');
const RAW_TOKEN = /oapi_[0-9A-Za-z]{49}/;

const skip = await serviceSkip('chromium');

/** The raw token shown in the "New token" field. */
async function newTokenOf(page: Page): Promise<string> {
  const value = await page.getByLabel('New token').inputValue();
  assert.match(value, RAW_TOKEN);
  return value;
}

/** The page's HTML once a navigation under way (such as Chromium's own error page) has settled. */
async function settledContent(page: Page): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      await page.waitForLoadState('load');
      return await page.content();
    } catch (error) {
      if (attempt >= 50) throw error;
    }
  }
}

/** Signs in through the form (typed like a person) and lands on API access. */
async function signIn(page: Page, origin: string, email = DEMO_EMAIL, password = DEMO_PASSWORD) {
  await page.goto(`${origin}/settings`);
  assert.equal(new URL(page.url()).pathname, '/settings/sign-in', 'without a session: the sign-in page');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'API access', level: 1 }).waitFor();
}

/** Fills and submits the create form. */
async function createToken(page: Page, name: string, scopes: string[], expires = 'In 7 days') {
  await page.getByLabel('Name', { exact: true }).fill(name);
  for (const scope of scopes) await page.getByLabel(scope, { exact: true }).check();
  await page.getByLabel('Expires', { exact: true }).selectOption({ label: expires });
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByRole('heading', { name: `Token “${name}” created` }).waitFor();
}

/** The `serious` and `critical` violations axe-core finds on the page as it is now. */
async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: readFileSync(AXE, 'utf8') });
  const { violations } = (await page.evaluate('axe.run()')) as AxeResults;
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

describe('settings area in a browser', { skip }, () => {
  let browser: Browser;
  let t: TestServer;
  const contexts: BrowserContext[] = [];
  const context = async (options: Parameters<Browser['newContext']>[0] = {}) => {
    const made = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
    contexts.push(made);
    return made;
  };

  before(async () => {
    browser = await chromium.launch({ executablePath: BROWSER, headless: true, args: FLAGS });
    t = await startTestServer({ fixture: 'demo', config: { 'limits.requestsPerMinute': 0 } });
    await giveDemoPasswords(t.store.db, t.clock.now());
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await t?.close();
  });

  it("the README's way: serve --demo, sign in with the printed credentials, make a token, use it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outreach-settings-browser-'));
    let server: ServeProcess | undefined;
    try {
      server = await serveProcess(['--db', join(dir, 'demo.db'), 'serve', '--demo', '--port', '0']);
      let line: RegExpExecArray | null = null;
      for (let waited = 0; !line && waited < 15_000; waited += 20) {
        line = /API access in a browser: (\S+) \(email (\S+), password (\S+)\)/.exec(server.stdout());
        if (!line) await sleep(20);
      }
      assert.ok(line, `serve --demo prints where and how to sign in:\n${server.stdout()}`);
      const [, url, email, password] = line;
      assert.equal(url, `${server.origin}/settings/sign-in`);
      assert.equal(password, 'demo-password');
      assert.ok(server.stdout().includes('demo token'), 'beside the demo token');

      const ctx = await context();
      await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.origin });
      const page = await ctx.newPage();
      const requested: string[] = [];
      page.on('request', (request) => void requested.push(request.url()));
      await signIn(page, server.origin, email, password);
      await createToken(page, 'made by hand', ['projects:read', 'leads:read']);
      const raw = await newTokenOf(page);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
      assert.equal(
        await page.evaluate<string>('navigator.clipboard.readText()'),
        raw,
        'the copy button copies the token',
      );
      mkdirSync(resolve('dist/screenshots'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });

      // As curl would: the token works at once, with exactly its scopes.
      const call = async (path: string) => {
        const res = await fetch(`${server!.origin}${API}${path}`, { headers: { authorization: `Bearer ${raw}` } });
        return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
      };
      assert.equal((await call('/me')).status, 200);
      assert.equal((await call('/projects')).status, 200);
      assert.equal((await call('/projects/prj_demo_main/leads')).status, 200);
      const refused = await call('/projects/prj_demo_main/sites');
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error?.code, 'SCOPE_REQUIRED');

      const origin = new URL(server.origin).origin;
      assert.deepEqual(
        requested.filter((u) => new URL(u).origin !== origin),
        [],
        'requests to other hosts',
      );
      assert.ok(!requested.some((u) => u.includes(raw)), 'the raw token in no requested URL');
      const logged = server.stdout();
      assert.ok(!logged.includes(raw), 'the raw token in no log line');
      assert.ok(!logged.slice(logged.indexOf('listening on')).includes(`password ${password}`.repeat(2)));
    } finally {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('works with JavaScript turned off: errors by their fields, create, the token once, revoke → 401, sign out', async () => {
    const ctx = await context({ javaScriptEnabled: false });
    const page = await ctx.newPage();
    const urls: string[] = [];
    page.on('framenavigated', (frame) => void urls.push(frame.url()));
    page.on('request', (request) => void urls.push(request.url()));
    await signIn(page, t.origin);

    // Bad input: the problems next to their fields, nothing created.
    await page.getByLabel('Name', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('alert').waitFor();
    const name = page.getByLabel('Name', { exact: true });
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    assert.match((await page.locator('#token-name-error').textContent()) ?? '', /Give the token a name/);
    assert.match((await page.locator('#scopes-error').textContent()) ?? '', /Choose at least one scope/);
    assert.match((await page.getByRole('alert').textContent()) ?? '', /The token was not created/);

    await createToken(page, 'no script', ['backlinks:read']);
    const raw = await newTokenOf(page);
    assert.equal(await page.getByLabel('New token').getAttribute('readonly'), '');
    assert.ok(!(await page.getByRole('button', { name: 'Copy' }).isVisible()), 'no copy button without script');
    assert.match((await page.locator('main').textContent()) ?? '', /it will not be shown again/);
    assert.equal((await t.get('/projects/prj_demo_main/backlinks', raw)).status, 200);

    // The token is on no other page, and going back does not show it again (no-store).
    await page.goto(`${t.origin}/settings/api-access`);
    assert.ok(!(await page.content()).includes(raw));
    const tokens = (await t.get('/me', raw)).body.data.activeTokenCount;
    // Chromium will not show a no-store answer to a post again (ERR_CACHE_MISS) nor post it again unasked.
    await page.goBack().catch(() => null);
    assert.ok(!(await settledContent(page)).includes(raw), 'going back does not bring the token back from a cache');
    assert.equal((await t.get('/me', raw)).body.data.activeTokenCount, tokens, 'nor creates another');
    await page.goto(`${t.origin}/settings/api-access`);

    // Revoke, through its confirmation.
    const row = page.getByRole('row').filter({ hasText: 'no script' });
    await row.getByRole('button', { name: /^Revoke/ }).click();
    await page.getByRole('heading', { name: 'Revoke token “no script”?' }).waitFor();
    await page.getByRole('button', { name: 'Revoke token' }).click();
    await page.getByRole('status').filter({ hasText: 'Token “no script” is revoked' }).waitFor();
    assert.equal((await t.get('/me', raw)).status, 401);
    assert.match((await page.getByRole('row').filter({ hasText: 'no script' }).textContent()) ?? '', /revoked/);

    assert.deepEqual(
      urls.filter((u) => u.includes(raw)),
      [],
      'the raw token in no URL of the history',
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    await page.goto(`${t.origin}/settings/api-access`);
    assert.equal(new URL(page.url()).pathname, '/settings/sign-in');
  });

  it('can be used with the keyboard alone; its session cookie is HttpOnly, SameSite=Strict, Path=/settings', async () => {
    const ctx = await context();
    const page = await ctx.newPage();
    await page.goto(`${t.origin}/settings/sign-in`);
    /** The focused element's id, or its text when it has none. */
    const focused = () => page.evaluate<string>('document.activeElement.id || document.activeElement.textContent');
    /** Presses Tab until the element with id (or text) `target` has the focus (at most 40 times). */
    const tabTo = async (target: string) => {
      for (let i = 0; i < 40; i++) {
        if ((await focused()) === target) return;
        await page.keyboard.press('Tab');
      }
      assert.fail(`Tab never reached ${target}`);
    };
    await tabTo('email');
    await page.keyboard.type(DEMO_EMAIL);
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'password');
    await page.keyboard.type(DEMO_PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'API access', level: 1 }).waitFor();
    // The session cookie: HttpOnly (no script reads it), SameSite=Strict, Path=/settings, not
    // Secure over plain HTTP.
    const [cookie] = await ctx.cookies();
    assert.equal(cookie?.name, 'outreach_session');
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'Strict');
    assert.equal(cookie?.path, '/settings');
    assert.equal(cookie?.secure, false);
    assert.equal(await page.evaluate<string>('document.cookie'), '', 'no script can read it');

    await tabTo('token-name');
    await page.keyboard.type('keyboard only');
    await tabTo('scope-sites:read');
    await page.keyboard.press('Space');
    await tabTo('token-expires');
    await tabTo('token-expires-on');
    await tabTo('Create token');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Token “keyboard only” created' }).waitFor();
    assert.deepEqual((await t.get('/me', await newTokenOf(page))).body.data.token.scopes, ['sites:read']);
    // Focus is shown: the control reached with Tab has a visible outline.
    await tabTo('new-token');
    const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
    assert.notEqual(outline, 'none');
  });

  it('is readable at 375 px (no sideways scrolling, one card per token) and on a desktop', async () => {
    for (const [width, height] of [
      [375, 812],
      [1280, 900],
    ] as const) {
      const ctx = await context({ viewport: { width, height } });
      const page = await ctx.newPage();
      await signIn(page, t.origin);
      const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
      assert.ok(scrollWidth <= width, `${width} px: the page is ${scrollWidth} px wide`);
      // A phone: the cells of a token stack (one card per token); a desktop: one row per token.
      const row = page.getByRole('row').filter({ hasText: 'Demo token (every scope)' });
      const name = (await row.getByRole('cell').first().boundingBox())!;
      const status = (await row.getByRole('cell', { name: 'active' }).boundingBox())!;
      for (const box of [name, status]) assert.ok(box.x >= 0 && box.x + box.width <= width, `${width} px: in view`);
      if (width === 375) assert.ok(status.y > name.y + name.height - 1, 'stacked on a phone');
      else assert.ok(Math.abs(status.y - name.y) < 2, 'side by side on a desktop');
    }
  });

  it('breaks no serious or critical axe-core rule on the sign-in and API access pages, first shown and with errors', async () => {
    // bypassCSP: the test injects axe-core's own script, which the pages' policy would refuse.
    const ctx = await context({ bypassCSP: true });
    const page = await ctx.newPage();
    const check = async (label: string) => assert.deepEqual(await axeViolations(page), [], label);
    await page.goto(`${t.origin}/settings/sign-in`);
    await check('sign-in, first shown');
    await page.getByLabel('Email').fill(DEMO_EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await check('sign-in, with an error');
    await page.getByLabel('Password').fill(DEMO_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API access', level: 1 }).waitFor();
    await check('API access, first shown');
    await page.getByLabel('Expires', { exact: true }).selectOption({ label: 'On a date (below)' });
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('alert').waitFor();
    await check('API access, with form errors');
    await createToken(page, 'axe', ['leads:read']);
    await check('API access, with a new token');
    await page
      .getByRole('row')
      .filter({ hasText: 'axe' })
      .getByRole('button', { name: /^Revoke/ })
      .click();
    await page.getByRole('button', { name: 'Revoke token' }).waitFor();
    await check('revoke confirmation');
  });
});
