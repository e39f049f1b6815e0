/**
 * The backlink monitor on pages written to hurt it (issue #19): a page of deeply nested unclosed
 * tags is read in time linear in its size (the parser's cost per tag grows with the nesting, so
 * the reading stops past 512 open elements and the check says so), a long page is read in
 * slices with turns of the event loop between them, and what a page controls is stored bounded
 * (an unclosed link's anchor text, a huge alt, rel or href).
 *
 * The time bound is wide: a loaded 2-core machine takes well under a tenth of it, and reading
 * 1 MiB of unclosed `<div>` without the nesting bound took 13.8 s on a quiet one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LinkScanner } from '../../src/workers/monitor-links.js';
import { monitorFixture, TARGET, type MonitorFixture } from './helpers.js';
import { html, startTestSite, type TestSite } from './site.js';
import { sqlGet } from '../helpers/sql.js';

const MIB = 1024 * 1024;
/** Longest a pass over the hostile pages may take, ms. */
const PASS_BOUND_MS = 5000;
const link = `<a href="${TARGET}">the guide</a>`;

describe('backlink monitor: deeply nested pages', () => {
  let site: TestSite;
  let f: MonitorFixture;
  let A: string;

  before(async () => {
    site = await startTestSite(['127.0.0.2']);
    A = site.origins[0]!;
    site.route(`${A}/nested`, html('<div>'.repeat(MIB / 5) + link));
    site.route(`${A}/nested-after-link`, html(`<p>${link}</p>${'<span>'.repeat(MIB / 6)}`));
    f = await monitorFixture(
      [
        { id: 'bl_nested', sourceUrl: `${A}/nested` },
        { id: 'bl_nested_after', sourceUrl: `${A}/nested-after-link` },
      ],
      { 'monitor.maxBytes': 2 * MIB, 'monitor.respectRobotsTxt': false },
    );
  });
  after(async () => {
    await f.close();
    await site.close();
  });

  it('reads 1 MiB of unclosed tags in linear time: an error when the link is not before the nesting bound', async () => {
    const started = performance.now();
    const summary = await f.pass();
    const ms = performance.now() - started;
    assert.ok(ms < PASS_BOUND_MS, `the pass took ${Math.round(ms)} ms`);
    assert.equal(summary.checked, 2);
    const nested = (await f.checks('bl_nested'))[0]!;
    assert.equal(nested.status, 'error');
    assert.equal(nested.http_status, 200);
    assert.equal(nested.target_found, 0);
    const after = (await f.checks('bl_nested_after'))[0]!;
    assert.equal(after.status, 'live', 'a link before the bound is found');
    assert.equal(after.observed_anchor, 'the guide');
  });

  it('reads a long piece in slices: the event loop turns many times while 1 MiB is scanned', async () => {
    const scanner = new LinkScanner(TARGET, `${A}/long`);
    let turns = 0;
    let reading = true;
    const tick = () => {
      turns++;
      if (reading) setImmediate(tick);
    };
    setImmediate(tick);
    await scanner.write(`${'<p>Lorem ipsum dolor sit amet.</p>\n'.repeat(MIB / 35)}${link}`);
    reading = false;
    assert.equal(scanner.end().match?.observedAnchor, 'the guide');
    // 1 MiB in slices of 16 KiB: 64 slices.
    assert.ok(turns >= 32, `the event loop turned ${turns} times`);
  });
});

describe('backlink monitor: what a page controls is stored bounded', () => {
  let site: TestSite;
  let f: MonitorFixture;
  let A: string;
  /** About 1 MiB of words and whitespace runs. */
  const text = 'lorem   ipsum\n\t dolor '.repeat(MIB / 24);

  before(async () => {
    site = await startTestSite(['127.0.0.2']);
    A = site.origins[0]!;
    site.route(`${A}/unclosed`, html(`<p>See <a href="${TARGET}">  the\n guide ${text}`));
    site.route(`${A}/alt`, html(`<a href="${TARGET}"><img alt="${text}"></a>`));
    site.route(
      `${A}/rel`,
      html(
        `<a href="${TARGET}" rel="NOFOLLOW ugc ${Array.from({ length: 100_000 }, (_, i) => `r${i}`).join(' ')}">x</a>`,
      ),
    );
    site.route(`${A}/href`, html(`<a href="${TARGET}#${'x'.repeat(MIB)}">the guide</a>`));
    f = await monitorFixture(
      ['unclosed', 'alt', 'rel', 'href'].map((name) => ({ id: `bl_${name}`, sourceUrl: `${A}/${name}` })),
      { 'monitor.maxBytes': 2 * MIB, 'monitor.respectRobotsTxt': false },
    );
    await f.pass();
  });
  after(async () => {
    await f.close();
    await site.close();
  });

  it('an unclosed link: its anchor text is 500 characters, whitespace collapsed, on the check and the backlink', async () => {
    const check = (await f.checks('bl_unclosed'))[0]!;
    assert.equal(check.status, 'live');
    const anchor = check.observed_anchor!;
    assert.equal(anchor.length, 500, `${anchor.length} characters`);
    assert.ok(anchor.startsWith('the guide lorem ipsum dolor lorem'), anchor.slice(0, 40));
    assert.doesNotMatch(anchor, /\s\s|[\n\t]|^\s|\s$/);
    assert.equal((await f.backlink('bl_unclosed')).observed_anchor, anchor);
  });

  it('a huge alt, rel or href: stored bounded too', async () => {
    const alt = (await f.checks('bl_alt'))[0]!;
    assert.equal(alt.status, 'live');
    assert.ok(alt.observed_anchor!.length <= 500 && alt.observed_anchor!.startsWith('lorem ipsum dolor'));
    const rel = (await f.checks('bl_rel'))[0]!;
    const tokens = JSON.parse(rel.observed_rel) as string[];
    assert.ok(tokens.includes('nofollow') && tokens.includes('ugc'), 'the first tokens are kept');
    assert.ok(tokens.length > 50 && tokens.join(' ').length <= 500, `${tokens.join(' ').length} characters`);
    const href = (await f.checks('bl_href'))[0]!;
    assert.equal(href.status, 'live');
    assert.ok(href.observed_target_url!.length <= 2048, `${href.observed_target_url!.length} characters`);
    assert.ok(href.observed_target_url!.startsWith(`${TARGET}#xxx`));
    const stored = (await sqlGet(
      f.store,
      'SELECT max(length(observed_anchor) + length(observed_rel) + length(observed_target_url)) AS n FROM backlink_checks',
    )) as { n: number };
    assert.ok(stored.n <= 500 + 600 + 2048, `largest check: ${stored.n} characters`);
  });
});
