/**
 * The soak's arithmetic (test/bench/soak.ts, issue #33 item 4): the slopes over the last 20
 * minutes, the request p99 of the last 10 minutes against the first 10 (halves of a shorter run),
 * and the SVG chart (one line per series, its range written beside it).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { chartSvg, quantile, rssByKind, slope, type SoakRow, summarize } from './bench/soak.js';

const row = (minute: number, rssMiB: number): SoakRow => ({
  minute,
  rssMiB,
  rssAnonMiB: rssMiB - 60,
  rssFileMiB: 60,
  rssShmemMiB: 0,
  heapUsedMiB: 50,
  heapTotalMiB: 60,
  externalMiB: 5,
  openFds: 40,
  loopP99Ms: 5,
  requestP99Ms: 10,
  requests: 100,
  failures: 0,
  checks: 0,
  inboxMessages: 0,
  deliveries: 0,
});

it('takes slopes over the last 20 minutes only, per 10 minutes', () => {
  assert.equal(slope([1, 2, 3], [5, 7, 9]), 2);
  assert.equal(slope([1], [5]), 0);
  // 10 minutes of growth (1 MiB a minute), then 20 flat: the slope is of the flat part.
  const rows = Array.from({ length: 30 }, (_, i) => row(i + 1, i < 10 ? 100 + i : 110));
  const latencies = rows.map(() => [10]);
  assert.equal(summarize(rows, latencies).rssMiBPer10Min, 0);
  assert.equal(summarize(rows, latencies).rssFileMiBPer10Min, 0);
  assert.equal(summarize(rows, latencies).slopeMinutes, 20);
  // A steady 0.2 MiB a minute is 2 MiB per 10 minutes.
  const growing = Array.from({ length: 30 }, (_, i) => row(i + 1, 100 + 0.2 * i));
  assert.ok(Math.abs(summarize(growing, latencies).rssMiBPer10Min - 2) < 1e-9);
  assert.ok(Math.abs(summarize(growing, latencies).rssAnonMiBPer10Min - 2) < 1e-9);
});

it('compares the p99 of the last 10 minutes with the first 10, halves of a shorter run', () => {
  const rows = Array.from({ length: 30 }, (_, i) => row(i + 1, 100));
  const latencies = rows.map((_, i) => Array.from({ length: 100 }, (_, j) => (i < 10 ? 10 : 12) + j / 100));
  const summary = summarize(rows, latencies);
  assert.equal(summary.windowMinutes, 10);
  assert.ok(summary.requestP99LastMs > 12.9 && summary.requestP99LastMs < 13);
  assert.ok(summary.requestP99FirstMs > 10.9 && summary.requestP99FirstMs < 11);
  assert.equal(summarize(rows.slice(0, 4), latencies.slice(0, 4)).windowMinutes, 2);
  assert.equal(quantile([3, 1, 2, 4], 0.5), 2);
  assert.ok(Number.isNaN(quantile([], 0.99)));
});

it('reads the resident memory of a process by kind from /proc', { skip: process.platform !== 'linux' }, () => {
  const own = rssByKind(process.pid);
  const total = process.memoryUsage.rss() / 2 ** 20;
  assert.ok(own.rssAnonMiB > 10 && own.rssFileMiB > 1, JSON.stringify(own));
  // The three kinds add up to the RSS (read a moment apart: within a few MiB).
  assert.ok(
    Math.abs(own.rssAnonMiB + own.rssFileMiB + own.rssShmemMiB - total) < 8,
    `${JSON.stringify(own)} vs ${total}`,
  );
  assert.ok(Number.isNaN(rssByKind(2 ** 30).rssAnonMiB));
});

it('draws one line per series with its range', () => {
  const svg = chartSvg('soak <test>', [
    { name: 'RSS, MiB', values: [100, 120, 110] },
    { name: 'request p99, ms', values: [5, 7, 6] },
  ]);
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.equal(svg.match(/<polyline /g)?.length, 2);
  assert.equal(svg.match(/<circle /g)?.length, 6);
  assert.match(svg, /RSS, MiB: 100 to 120/);
  assert.match(svg, /soak &lt;test&gt;/);
});
