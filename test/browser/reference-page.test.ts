/**
 * The reference page (decisions.md §15) in a real browser: playwright-core drives Debian's
 * Chromium (`/usr/bin/chromium`, or `CHROMIUM_PATH`; never a downloaded browser). It loads
 * /api/public/docs from a server over the demo data, records every request the page makes and
 * checks that all of them go to that server, finds every operation's summary of the served
 * OpenAPI document on the page, authorizes with the demo token and runs "Try it out" on
 * `GET /me`, which must show 200. Saves a screenshot to dist/screenshots/reference-page.png.
 *
 * Without a browser the test is skipped and says so; with `CI` set a missing browser fails it
 * (`.ci/run` installs Debian's chromium when it is missing).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';
import { DEMO_TOKEN } from '../../src/seed/demo.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../helpers/services.js';

const BROWSER = CHROMIUM_PATH;
const FLAGS = CHROMIUM_FLAGS;
const SCREENSHOT = resolve('dist/screenshots/reference-page.png');
const present = existsSync(BROWSER);

if (!present) {
  const message = `reference page browser test: no browser at ${BROWSER} (install Debian's chromium, or set CHROMIUM_PATH)`;
  if (process.env.CI) throw new Error(`${message}; CI is set, so this is a failure`);
  process.stdout.write(`SKIPPED: ${message}\n`);
}

describe('reference page in a browser', { skip: present ? false : `no browser at ${BROWSER}` }, () => {
  let t: TestServer;
  let context: BrowserContext;
  let profile: string;
  before(async () => {
    t = await startTestServer({ fixture: 'demo', config: { 'limits.requestsPerMinute': 0 } });
    profile = mkdtempSync(join(tmpdir(), 'outreach-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: BROWSER,
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 900 },
    });
  });
  after(async () => {
    await context?.close();
    await t?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('loads from the server alone, lists every operation, and tries GET /me with the demo token', async (test) => {
    const page = await context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => void requested.push(request.url()));
    const response = await page.goto(`${t.origin}/api/public/docs`, { waitUntil: 'networkidle' });
    assert.equal(response?.status(), 200);
    await page.locator('.opblock-summary-description').first().waitFor({ timeout: 30_000 });

    // Every operation's summary, as the served document has it, is on the page.
    const doc = (await (await fetch(`${t.origin}/api/public/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { summary?: string }>>;
    };
    const summaries = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.summary));
    assert.ok(summaries.length > 20, `${summaries.length} operations in the document`);
    const shown = new Set((await page.locator('.opblock-summary-description').allTextContents()).map((s) => s.trim()));
    for (const summary of summaries) {
      assert.ok(summary, 'every operation has a summary');
      assert.ok(shown.has(summary), `"${summary}" is on the page`);
    }

    // Authorize with the demo token, then "Try it out" on GET /me.
    await page.locator('.scheme-container .btn.authorize').click();
    await page.locator('.modal-ux input[type=text], .modal-ux input[type=password]').first().fill(DEMO_TOKEN);
    await page.locator('.modal-ux .auth-btn-wrapper .btn.authorize').click();
    await page.locator('.modal-ux .btn-done, .modal-ux .close-modal').first().click();
    const me = page.locator('.opblock-get').filter({ has: page.locator('.opblock-summary-path[data-path="/me"]') });
    await me.locator('.opblock-summary').first().click();
    await me.locator('.try-out__btn').click();
    await me.locator('.execute').click();
    const status = me.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    assert.equal((await status.textContent())?.trim(), '200');
    const body = await me
      .locator(
        '.live-responses-table .response-col_description .microlight, .live-responses-table .response-col_description pre',
      )
      .first()
      .textContent();
    assert.match(body ?? '', /acct_demo/);
    await me.scrollIntoViewIfNeeded();

    mkdirSync(resolve('dist/screenshots'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    test.diagnostic(`screenshot: ${SCREENSHOT}`);

    // Every request went to this server (no font, CDN, validator or telemetry host).
    const origin = new URL(t.origin).origin;
    const elsewhere = requested.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
    assert.deepEqual(elsewhere, [], 'requests to other hosts');
    assert.ok(
      requested.some((url) => url.endsWith('/api/public/openapi.json')),
      'the page read the served document',
    );
    assert.ok(
      requested.some((url) => url.endsWith('/api/public/v1/me')),
      'the try-it call went to this server',
    );
  });
});
