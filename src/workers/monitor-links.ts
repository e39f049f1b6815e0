/**
 * Finding a backlink on a page (decisions.md §13 "Finding the link"): the URL normalisation that
 * decides whether an href is the backlink's `targetUrl`, and a streaming scan of an HTML body
 * (htmlparser2 under the bounds of `../providers/bounded-html.ts`) that reports the first
 * matching `<a href>` / `<area href>` in document order, its anchor text and `rel`, and whether
 * the page's robots directives say `nofollow`.
 */
import { BoundedHtmlParser, MAX_STORED_CHARS, storedText, storedUrl } from '../providers/bounded-html.js';

/**
 * The form two URLs are compared in (decisions.md §13): `http` and `https` alike, host
 * lower-cased without a leading `www.`, the scheme's default port dropped, an empty path as `/`
 * and a trailing `/` ignored, the fragment dropped, the query as its parameters sorted (by name,
 * then value) with every `utm_*` parameter removed.
 *
 * `href` is resolved against `base` when given (WHATWG URL rules).
 * @returns the comparison key, e.g. `//example.com/a?b=1&c=2`; null for an unparsable URL or a
 * scheme other than http(s) (`mailto:`, `javascript:`…), which never match.
 */
export function normaliseUrl(href: string, base?: string | URL): string | null {
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const host = url.hostname.replace(/^www\./, '');
  const port = url.port ? `:${url.port}` : '';
  const path = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
  const params = [...url.searchParams].filter(([name]) => !name.toLowerCase().startsWith('utm_'));
  params.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  const query = params.length ? `?${new URLSearchParams(params).toString()}` : '';
  return `//${host}${port}${path || ''}${query}`;
}

/** What a page says about the backlink (decisions.md §13 "The check record"). */
export interface LinkScan {
  /** The first `<a href>`/`<area href>` whose resolved URL matches the target, or null. */
  match: { observedTargetUrl: string; observedAnchor: string; rel: string[] } | null;
  /** `<meta name="robots|googlebot">` on the page says `nofollow` or `none`. */
  metaNofollow: boolean;
  /** The page nested elements deeper than `MAX_OPEN_ELEMENTS` and was not read past that point. */
  truncated: boolean;
}

/** The tokens of a `rel`-like list, lower-cased and deduplicated, in document order. */
const tokensOf = (value: string | undefined | null): string[] => [
  ...new Set(
    (value ?? '')
      .toLowerCase()
      .split(/[\s,]+/)
      .filter(Boolean),
  ),
];

/** `rel`-like token lists: lower-cased, deduplicated, sorted. */
export const relTokens = (value: string | undefined | null): string[] => tokensOf(value).sort();

/**
 * The stored form of a link's `rel` (issue #19): its tokens as `relTokens` gives them, but only
 * those, in document order, that fit in `MAX_STORED_CHARS` (500) characters joined by spaces.
 */
export function storedRel(value: string | undefined | null): string[] {
  const kept: string[] = [];
  let length = -1;
  for (const token of tokensOf(value)) {
    if (length + 1 + token.length > MAX_STORED_CHARS) break;
    kept.push(token);
    length += 1 + token.length;
  }
  return kept.sort();
}

const saysNofollow = (directives: string[]) => directives.includes('nofollow') || directives.includes('none');

/** Directives of X-Robots-Tag that carry a value after a colon, so the colon names no crawler. */
const VALUED_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);

/**
 * Whether `X-Robots-Tag` header values say `nofollow` or `none` for every crawler, for
 * `googlebot` or for our token `outreach-api-monitor` (a `name:` prefix scopes the directives
 * after it to that crawler, as search engines read it).
 */
export function headerNofollow(values: string | string[] | undefined): boolean {
  for (const value of typeof values === 'string' ? [values] : (values ?? [])) {
    let scope: string | null = null;
    for (const item of value.split(',')) {
      let directive = item.trim().toLowerCase();
      const scoped = /^([a-z0-9_.-]+)\s*:\s*(.*)$/.exec(directive);
      if (scoped && !VALUED_DIRECTIVES.has(scoped[1]!)) {
        scope = scoped[1]!;
        directive = scoped[2]!;
      }
      if ((scope === null || scope === 'googlebot' || scope === 'outreach-api-monitor') && saysNofollow([directive]))
        return true;
    }
  }
  return false;
}

/** Characters of a matching link's text that are collected, before `storedText` makes its stored form. */
const MAX_CAPTURED_CHARS = 64 * 1024;

/**
 * A streaming scan of one HTML page for `targetUrl`: `write` the decoded text as it arrives
 * (awaiting each write: a long piece is read in slices, with turns of the event loop between),
 * then `end()` for the result. Memory is the parser's small buffer plus the matching link's text,
 * whatever the size of the page.
 *
 * Links resolve against `pageUrl`, or against the first `<base href>` once it has been seen (HTML
 * puts `<base>` in `<head>`, before any link). The anchor text is the match's text with
 * whitespace collapsed and trimmed, else the `alt` of the first `<img>` inside it, else `""`.
 * What a page controls is stored bounded (issue #19): the anchor text at most 500 characters
 * (`storedText`, from the first 64 Ki characters of the link's text), the rel tokens that fit in
 * 500 characters (`storedRel`), the href at most 2,048 characters (`storedUrl`): an unclosed link
 * no longer makes its anchor text as large as the page.
 */
export class LinkScanner {
  private readonly target: string | null;
  private base: URL;
  private baseSeen = false;
  private match: LinkScan['match'] = null;
  private metaNofollow = false;
  /**
   * While inside the matching `<a>`: its nesting depth, its text as collected (no more than
   * `MAX_CAPTURED_CHARS` of it) and the alt of its first image.
   */
  private capture: { depth: number; text: string[]; length: number; alt: string | null } | null = null;
  private readonly parser: BoundedHtmlParser;

  constructor(targetUrl: string, pageUrl: string) {
    this.target = normaliseUrl(targetUrl);
    this.base = new URL(pageUrl);
    this.parser = new BoundedHtmlParser({
      onopentag: (name, attributes) => this.open(name, attributes),
      ontext: (text) => {
        const capture = this.capture;
        if (!capture || capture.length >= MAX_CAPTURED_CHARS) return;
        capture.text.push(text.slice(0, MAX_CAPTURED_CHARS - capture.length));
        capture.length += text.length;
      },
      onclosetag: (name) => {
        if (name !== 'a' || !this.capture) return;
        if (--this.capture.depth === 0) this.finishCapture();
      },
    });
  }

  private open(name: string, attributes: Record<string, string>): void {
    if (this.capture) {
      if (name === 'a') this.capture.depth++;
      else if (name === 'img' && this.capture.alt === null && attributes.alt !== undefined)
        this.capture.alt = attributes.alt;
      return;
    }
    if (name === 'base' && !this.baseSeen && attributes.href !== undefined) {
      this.baseSeen = true;
      try {
        this.base = new URL(attributes.href, this.base);
      } catch {
        // an unusable <base href> leaves the page URL as the base, as browsers do
      }
    } else if (name === 'meta' && !this.metaNofollow) {
      const metaName = (attributes.name ?? '').trim().toLowerCase();
      if ((metaName === 'robots' || metaName === 'googlebot') && saysNofollow(relTokens(attributes.content)))
        this.metaNofollow = true;
    } else if (
      (name === 'a' || name === 'area') &&
      this.match === null &&
      this.target !== null &&
      attributes.href !== undefined
    ) {
      const href = attributes.href.trim();
      if (normaliseUrl(href, this.base) !== this.target) return;
      this.match = {
        observedTargetUrl: storedUrl(new URL(href, this.base).href),
        observedAnchor: '',
        rel: storedRel(attributes.rel),
      };
      if (name === 'a') this.capture = { depth: 1, text: [], length: 0, alt: null };
    }
  }

  private finishCapture(): void {
    const capture = this.capture!;
    this.capture = null;
    this.match!.observedAnchor = storedText(capture.text.join('')) || storedText(capture.alt ?? '');
  }

  /** Feeds the next piece of the page's text; resolves once it is read. */
  write(text: string): Promise<void> {
    return this.parser.write(text);
  }

  /** Ends the page (an unclosed matching `<a>` ends with it) and returns what was found. */
  end(): LinkScan {
    this.parser.end();
    if (this.capture) this.finishCapture();
    return { match: this.match, metaNofollow: this.metaNofollow, truncated: this.parser.truncated };
  }
}

/** Scans a whole page held in memory (tests, small pages). */
export async function scanHtml(html: string, targetUrl: string, pageUrl: string): Promise<LinkScan> {
  const scanner = new LinkScanner(targetUrl, pageUrl);
  await scanner.write(html);
  return scanner.end();
}
