/**
 * The contact finders read text that other people wrote within bounds of time (issue #19, item
 * 1): addresses are found in time linear in the text on adversarial input (runs of `a`, `a@`,
 * `a.`), a page is read in slices with turns of the event loop between them, and the server goes
 * on answering while the crawl reads a hostile page. What a page says of a person is stored
 * bounded (item 4).
 *
 * The time bounds are wide (a loaded 2-core machine takes well under a tenth of them); a
 * backtracking scan misses them by minutes. Sizes double up to 1 MiB and a case stops at the
 * first size over the bound, so a quadratic scan fails within seconds rather than after minutes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBuiltinFinder, extractFromHtml } from '../../src/providers/contact-finder.js';
import type { ProspectFacts } from '../../src/providers/index.js';
import { row, startHttp, startWriteServer, type TestHttp } from './helpers.js';
import { sqlRun } from '../helpers/sql.js';

const MIB = 1024 * 1024;
/** Longest time one scan of up to 1 MiB may take, ms. */
const SCAN_BOUND_MS = 5000;
/** Longest time a /healthz request may wait while a hostile page is crawled, ms. */
const ANSWER_BOUND_MS = 2000;
const ADDRESS = 'pat@hikingblog.example';

/** `unit` repeated to exactly `size` characters. */
const filled = (unit: string, size: number) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

const prospect = (description: string): ProspectFacts => ({
  id: 'pr_1',
  url: 'https://hikingblog.example/a',
  domain: 'hikingblog.example',
  title: null,
  description,
  contentExcerpt: null,
  contactPaths: [],
});

/** Runs `scan` on 64 KiB, 128 KiB, … 1 MiB of `unit` (then `tail`), each within the bound. */
async function withinBound(label: string, unit: string, tail: string, scan: (text: string) => Promise<unknown>) {
  for (let size = 64 * 1024; size <= MIB; size *= 2) {
    const text = filled(unit, size) + tail;
    const started = performance.now();
    const result = await scan(text);
    const ms = performance.now() - started;
    assert.ok(ms < SCAN_BOUND_MS, `${label}: ${size} characters of ${JSON.stringify(unit)} took ${Math.round(ms)} ms`);
    if (size === MIB) return result;
  }
}

describe('contact finders on adversarial text', () => {
  it('the builtin finder finds an address after 1 MiB of a, a@ or a. in linear time', async () => {
    const finder = createBuiltinFinder();
    for (const unit of ['a', 'a@', 'a.', 'a@a.']) {
      const found = (await withinBound(`description`, unit, ` ${ADDRESS}`, (text) => finder.find(prospect(text)))) as {
        email: string;
      }[];
      assert.deepEqual(
        found.map((c) => c.email),
        [ADDRESS],
        unit,
      );
    }
  });

  it('a crawled page of 1 MiB of a, a@, a. or unclosed tags is read in linear time', async () => {
    for (const unit of ['a', 'a@', 'a.', 'a@a.', '<p>x', '<']) {
      const found = (await withinBound('page', unit, `<p>${ADDRESS}</p>`, (html) =>
        extractFromHtml(html, 'https://hikingblog.example/'),
      )) as { email: string }[];
      assert.deepEqual(
        found.map((c) => c.email),
        [ADDRESS],
        unit,
      );
    }
    // Nesting past 512 elements stops the reading there: the time stays linear, and what follows is not read.
    for (const unit of ['<div>', '<span><b>', '<div></b>']) {
      const found = (await withinBound('page', unit, `<p>${ADDRESS}</p>`, (html) =>
        extractFromHtml(html, 'https://hikingblog.example/'),
      )) as unknown[];
      assert.deepEqual(found, [], unit);
    }
  });

  it('reads JSON-LD up to 256 KiB and 32 levels deep', async () => {
    const block = (json: string) => `<script type="application/ld+json">${json}</script>`;
    const person = `{"@type":"Person","name":"Pat","email":"${ADDRESS}"}`;
    const emails = async (html: string) =>
      (await extractFromHtml(html, 'https://hikingblog.example/')).map((c) => c.email);
    assert.deepEqual(await emails(block(person)), [ADDRESS]);
    assert.deepEqual(await emails(block(`[${person},"${filled('x', 256 * 1024)}"]`)), [], 'a block over 256 KiB');
    assert.deepEqual(await emails(block(`${'['.repeat(31)}${person}${']'.repeat(31)}`)), [ADDRESS]);
    assert.deepEqual(await emails(block(`${'['.repeat(40)}${person}${']'.repeat(40)}`)), [], 'deeper than 32');
    assert.deepEqual(await emails(block(`${'['.repeat(5000)}${']'.repeat(5000)}`)), [], '5,000 levels');
  });

  it('keeps a name and job title from a page at 500 characters, whitespace collapsed', async () => {
    const long = 'Pat   Writer\n'.repeat(8000); // 104 KB each: the block stays under 256 KiB
    const json = JSON.stringify({ '@type': 'Person', name: long, jobTitle: long, email: ADDRESS });
    const [found] = await extractFromHtml(`<script type="application/ld+json">${json}</script>`, 'https://x.example/');
    assert.equal(found?.email, ADDRESS);
    for (const text of [found!.fullName!, found!.role!]) {
      assert.equal(text.length, 500);
      assert.ok(text.startsWith('Pat Writer Pat Writer'));
    }
  });

  it('reads a 1 MiB page in slices: the event loop turns many times while it is read', async () => {
    const html = filled(`<p>Lorem ipsum dolor sit amet, ${ADDRESS} consectetur.</p>\n`, MIB);
    let turns = 0;
    let reading = true;
    const tick = () => {
      turns++;
      if (reading) setImmediate(tick);
    };
    setImmediate(tick);
    const found = await extractFromHtml(html, 'https://hikingblog.example/');
    reading = false;
    assert.ok(found.length > 10_000, `${found.length} addresses`);
    // 1 MiB in 16 KiB slices is 64 slices, and the text scan adds as many again.
    assert.ok(turns >= 64, `the event loop turned ${turns} times`);
  });
});

describe('the server while the crawl reads a hostile page', () => {
  let pages: TestHttp;
  before(async () => {
    // 200 KB of `a`, as in the report: a backtracking scan held the event loop for about 20 s on it.
    const hostile = filled('a', 200_000);
    pages = await startHttp((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(hostile));
  });
  after(() => pages.close());

  it('answers /healthz within the bound while the discovery job reads the page', async () => {
    const t = await startWriteServer({
      config: { 'providers.contactFinder': 'crawl', 'crawl.allowPrivateNetworks': true },
    });
    try {
      await sqlRun(
        t.store,
        "UPDATE prospects SET url = ?, contact_paths = '[]', content_excerpt = NULL WHERE id = 'pr_text'",
        `${pages.url}/hostile`,
      );
      const token = await t.mintToken('acct_a', ['contacts:write']);
      const res = await t.request('POST', '/projects/prj_a1/prospects/pr_text/contact-discovery', {
        token,
        body: { idempotencyKey: 'hostile-page-1' },
      });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      let drained = false;
      const drain = t.server.workers.discovery.drain().then(() => {
        drained = true;
      });
      let slowest = 0;
      let asked = 0;
      while (!drained) {
        const started = performance.now();
        const health = await fetch(`${t.origin}/healthz`);
        await health.arrayBuffer();
        slowest = Math.max(slowest, performance.now() - started);
        asked++;
        assert.ok(slowest < ANSWER_BOUND_MS, `/healthz took ${Math.round(slowest)} ms`);
      }
      await drain;
      assert.ok(asked > 0);
      const job = await row(t, 'SELECT * FROM discovery_jobs WHERE id = ?', res.body.data.job.id);
      assert.notEqual(job.status, 'queued');
      assert.ok(pages.requests.length > 0, 'the page was fetched');
    } finally {
      await t.close();
    }
  });
});
