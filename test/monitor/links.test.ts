/**
 * The link finder of the backlink monitor (decisions.md §13 "Finding the link"): the URL
 * normalisation as one table of matching and non-matching pairs, and the streaming scanner.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headerNofollow, LinkScanner, normaliseUrl, scanHtml } from '../../src/workers/monitor-links.js';

const TARGET = 'https://www.example.com/guide/?b=2&a=1';

describe('normaliseUrl', () => {
  const same: [string, string][] = [
    ['http://example.com/guide?a=1&b=2', 'scheme, www., trailing slash and parameter order'],
    ['HTTPS://EXAMPLE.COM/guide?a=1&b=2#top', 'case of scheme and host, fragment'],
    ['https://example.com:443/guide/?a=1&b=2&utm_source=x&utm_medium=y', 'default port and utm_*'],
    ['https://www.example.com/guide?b=2&a=1&UTM_Campaign=z', 'utm_* in any case'],
  ];
  for (const [url, what] of same)
    it(`matches across ${what}`, () => assert.equal(normaliseUrl(url), normaliseUrl(TARGET)));

  const different: [string, string][] = [
    ['https://example.com/guide?a=1', 'a missing parameter'],
    ['https://example.com/guide?a=1&b=3', 'another parameter value'],
    ['https://example.com/Guide?a=1&b=2', 'path case'],
    ['https://example.com/guide/x?a=1&b=2', 'a longer path'],
    ['https://example.com:8443/guide?a=1&b=2', 'another port'],
    ['https://blog.example.com/guide?a=1&b=2', 'another subdomain'],
    ['https://wwwexample.com/guide?a=1&b=2', 'a www without its dot'],
    ['https://example.com/guide?a=1&b=2&utmx=1', 'a parameter that only starts like utm'],
  ];
  for (const [url, what] of different)
    it(`does not match ${what}`, () => assert.notEqual(normaliseUrl(url), normaliseUrl(TARGET)));

  it('takes an empty path as /', () =>
    assert.equal(normaliseUrl('https://example.com'), normaliseUrl('http://www.example.com/')));
  it('resolves against a base', () =>
    assert.equal(normaliseUrl('../guide/?a=1&b=2', 'https://example.com/x/y'), normaliseUrl(TARGET)));
  it('never matches what is not an http(s) URL', async () => {
    assert.equal(normaliseUrl('mailto:a@example.com'), null);
    assert.equal(normaliseUrl('javascript:void(0)'), null);
    assert.equal(normaliseUrl('http://'), null);
  });
});

describe('LinkScanner', () => {
  const page = 'https://blog.test/posts/1';
  it('reports the first match in document order, its text collapsed and its rel sorted', async () => {
    const scan = await scanHtml(
      `<p><a href="https://other.test/">x</a> <a href="http://example.com/guide?a=1&amp;b=2#x" rel="UGC nofollow ugc">  the
        <b>best</b>   guide </a><a href="${TARGET}">second</a></p>`,
      TARGET,
      page,
    );
    assert.deepEqual(scan.match, {
      observedTargetUrl: 'http://example.com/guide?a=1&b=2#x',
      observedAnchor: 'the best guide',
      rel: ['nofollow', 'ugc'],
    });
    assert.equal(scan.metaNofollow, false);
  });
  it("keeps a NUL (U+0000) of the page's anchor text as U+FFFD, which either store can hold (issue #28)", async () => {
    const scan = await scanHtml(`<a href="${TARGET}">the\u0000guide</a>`, TARGET, page);
    assert.equal(scan.match?.observedAnchor, 'the\uFFFDguide');
    const alt = await scanHtml(`<a href="${TARGET}"><img alt="\u0000logo"></a>`, TARGET, page);
    assert.equal(alt.match?.observedAnchor, '\uFFFDlogo');
  });
  it('resolves relative links against the page, and against <base href>', async () => {
    assert.equal(
      (await scanHtml('<a href="/target">t</a>', 'https://blog.test/target', page)).match?.observedTargetUrl,
      'https://blog.test/target',
    );
    const based = await scanHtml(
      '<head><base href="https://example.com/guide/"></head><a href="./?a=1&b=2">t</a>',
      TARGET,
      page,
    );
    assert.equal(based.match?.observedTargetUrl, 'https://example.com/guide/?a=1&b=2');
    assert.equal(
      (await scanHtml('<base href="https://elsewhere.test/"><a href="/target">t</a>', 'https://blog.test/target', page))
        .match,
      null,
    );
  });
  it('takes the alt of the first image when the link has no text, else ""', async () => {
    assert.equal(
      (await scanHtml(`<a href="${TARGET}"> <img src="a.png" alt=" Logo  A "><img alt="B"></a>`, TARGET, page)).match
        ?.observedAnchor,
      'Logo A',
    );
    assert.equal((await scanHtml(`<a href="${TARGET}"><img src="a.png"></a>`, TARGET, page)).match?.observedAnchor, '');
    assert.equal(
      (await scanHtml(`<map><area href="${TARGET}" alt="x"></map>`, TARGET, page)).match?.observedAnchor,
      '',
    );
  });
  it('reads meta robots and googlebot nofollow/none anywhere on the page', async () => {
    for (const meta of ['<meta name="robots" content="noindex, nofollow">', '<meta name="GoogleBot" content="none">']) {
      assert.equal((await scanHtml(`<a href="${TARGET}">t</a>${meta}`, TARGET, page)).metaNofollow, true, meta);
    }
    assert.equal(
      (await scanHtml(`<meta name="robots" content="noindex"><meta name="bingbot" content="nofollow">`, TARGET, page))
        .metaNofollow,
      false,
    );
  });
  it('finds a link split across written pieces', async () => {
    const html = `<html><body>${'x'.repeat(1000)}<a href="${TARGET}">anchor</a></body></html>`;
    const scanner = new LinkScanner(TARGET, page);
    for (let i = 0; i < html.length; i += 7) await scanner.write(html.slice(i, i + 7));
    assert.equal(scanner.end().match?.observedAnchor, 'anchor');
  });
});

describe('headerNofollow (X-Robots-Tag)', () => {
  it('reads unscoped and googlebot or monitor scoped directives, not other crawlers', async () => {
    assert.equal(headerNofollow('noindex, nofollow'), true);
    assert.equal(headerNofollow(['noarchive', 'none']), true);
    assert.equal(headerNofollow('googlebot: nofollow'), true);
    assert.equal(headerNofollow('outreach-api-monitor: noindex, nofollow'), true);
    assert.equal(headerNofollow('bingbot: nofollow'), false);
    assert.equal(headerNofollow('unavailable_after: 25 Jun 2010 15:00:00 PST, noindex'), false);
    assert.equal(headerNofollow(undefined), false);
  });
});
