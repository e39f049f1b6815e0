/**
 * Graceful shutdown of the monitor worker (decisions.md §15): `stop()` during a pass lets the
 * fetches in hand finish and records them, starts no other, and leaves the rest due.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { silentLogger } from '../../src/logger.js';
import { createMonitorWorker } from '../../src/workers/monitor.js';
import { assertConsistent, monitorFixture, TARGET, type MonitorFixture } from './helpers.js';
import { startTestSite, type TestSite } from './site.js';

let site: TestSite;
let f: MonitorFixture;
/** Resolves when the site has two page requests in hand. */
let twoInHand: Promise<void>;

before(async () => {
  site = await startTestSite(['127.0.0.40', '127.0.0.41', '127.0.0.42', '127.0.0.43']);
  let arrived = 0;
  let release!: () => void;
  twoInHand = new Promise((resolve) => (release = resolve));
  const backlinks = site.origins.map((origin, i) => {
    site.route(`${origin}/p`, (_req, res) => {
      if (++arrived === 2) release();
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(`<a href="${TARGET}">x</a>`), 200);
    });
    return { id: `bl_s${i}`, sourceUrl: `${origin}/p` };
  });
  f = await monitorFixture(backlinks, { 'monitor.concurrency': 2, 'monitor.respectRobotsTxt': false });
});
after(async () => {
  await f.close();
  await site.close();
});

it('stop() finishes and records the fetches in hand, starts no other, and leaves the rest due', async () => {
  const worker = createMonitorWorker({ store: f.store, clock: f.clock, config: f.config, logger: silentLogger });
  worker.start();
  await twoInHand;
  await worker.stop();
  assert.equal(site.log.length, 2, 'no fetch started after stop()');
  assert.ok(site.log.every((r) => r.end !== null));
  const checked = site.log.map((r) => `bl_s${site.origins.indexOf(`http://${r.host}`)}`).sort();
  for (const id of checked)
    assert.equal((await f.backlink(id)).status, 'live', `${id}: the fetch in hand was recorded`);
  const due = site.origins.map((_, i) => `bl_s${i}`).filter((id) => !checked.includes(id));
  for (const id of due) assert.equal((await f.backlink(id)).last_checked_at, null, `${id}: still due`);
  await assertConsistent(f.store);
  assert.equal(await worker.runOnce(), 0, 'a stopped worker runs no pass');
});
