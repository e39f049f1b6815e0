/**
 * The monitor's politeness (decisions.md §13 "Fetching"), measured by the test site's own log:
 * one fetch at a time per host, at least `monitor.perHostDelayMs` between two fetches of a host
 * (robots.txt included), at most `monitor.concurrency` fetches at once over all hosts.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { monitorFixture, TARGET, type MonitorFixture } from './helpers.js';
import { startTestSite, type SiteRequest, type TestSite } from './site.js';

const DELAY_MS = 150;
const PAGES_PER_HOST = 3;
let site: TestSite;
let f: MonitorFixture;

before(async () => {
  site = await startTestSite(['127.0.0.10', '127.0.0.11', '127.0.0.12']);
  const backlinks = [];
  for (const origin of site.origins) {
    for (let i = 0; i < PAGES_PER_HOST; i++) {
      // Each page takes 60 ms to answer, so fetches of different hosts overlap.
      site.route(`${origin}/p${i}`, (_req, res) => {
        setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(`<a href="${TARGET}">x</a>`), 60);
      });
      backlinks.push({ id: `bl_${origin.slice(-5)}_${i}`, sourceUrl: `${origin}/p${i}` });
    }
  }
  f = await monitorFixture(backlinks, { 'monitor.perHostDelayMs': DELAY_MS, 'monitor.concurrency': 2 });
});
after(async () => {
  await f.close();
  await site.close();
});

it('fetches one at a time per host with the delay between, and at most `concurrency` at once', async () => {
  const summary = await f.pass();
  assert.equal(summary.live, site.origins.length * PAGES_PER_HOST);
  for (const origin of site.origins) {
    const requests = site.requestsTo(origin);
    assert.deepEqual(
      requests.map((r) => r.path),
      ['/robots.txt', ...Array.from({ length: PAGES_PER_HOST }, (_, i) => `/p${i}`)],
      'robots.txt once, first, then the pages in due order',
    );
    for (let i = 1; i < requests.length; i++) {
      const gap = requests[i]!.start - requests[i - 1]!.end!;
      assert.ok(
        gap >= DELAY_MS - 1,
        `${origin}: ${gap.toFixed(1)} ms between the end of one fetch and the start of the next`,
      );
    }
  }
  const overlap = (at: SiteRequest) => site.log.filter((r) => r.start <= at.start && r.end! > at.start).length;
  const most = Math.max(...site.log.map(overlap));
  assert.equal(most, 2, 'two fetches at once (concurrency 2), never three');
});
