/**
 * The reference page's address (issue #21 item 7): `/api/public/docs/`, with a trailing slash,
 * leads to the page, and every asset the page names loads from where the browser ends up. (The
 * page itself in a browser: test/browser/reference-page.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/harness.js';

describe('the reference page address', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ fixture: 'small' });
  });
  after(() => t.close());

  it('redirects /api/public/docs/ to the page, by a relative Location that works under a proxy prefix', async () => {
    const res = await fetch(`${t.origin}/api/public/docs/`, { redirect: 'manual' });
    assert.equal(res.status, 301);
    const location = res.headers.get('location')!;
    assert.ok(!/^[a-z]+:/i.test(location) && !location.startsWith('/'), `relative: ${location}`);
    assert.equal(new URL(location, `${t.origin}/api/public/docs/`).pathname, '/api/public/docs');
    assert.equal(
      new URL(location, 'https://proxy.example/outreach/api/public/docs/').pathname,
      '/outreach/api/public/docs',
    );
  });

  it('serves the page and each of its assets after the trailing-slash address', async () => {
    const page = await fetch(`${t.origin}/api/public/docs/`);
    assert.equal(page.status, 200);
    assert.equal(new URL(page.url).pathname, '/api/public/docs');
    const html = await page.text();
    const assets = [...html.matchAll(/(?:href|src)="([^"]+)"/g)]
      .map((m) => m[1]!)
      .filter((a) => !a.startsWith('data:'));
    assert.ok(assets.length >= 3, `assets: ${assets.join(', ')}`);
    for (const asset of assets) {
      const res = await fetch(new URL(asset, page.url));
      await res.arrayBuffer();
      assert.equal(res.status, 200, asset);
    }
  });
});
