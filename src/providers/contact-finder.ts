/**
 * Contact finders: `builtin` (offline: the prospect's stored page data) and `crawl` (fetches the
 * prospect's page and contact paths under the SSRF guards of `./safe-fetch.ts`).
 *
 * Everything here reads text that other people wrote, in time linear in its size and without
 * holding the event loop for long: pages go through `./bounded-html.ts` (sliced, nesting bounded),
 * and addresses are found by `AddressScanner`, a single left-to-right pass with no regular
 * expression, in slices with a turn of the event loop between them.
 */
import { BoundedHtmlParser, nextTurn, SLICE_CHARS, storedText } from './bounded-html.js';
import { safeFetch, type FetchedPage, type SafeFetchOptions } from './safe-fetch.js';
import { domainOf } from './verifier.js';
import { ProviderError, type ContactCandidate, type ContactFinder, type ProspectFacts } from './types.js';

/** `logo@2x.png` and friends look like addresses in page text. */
const NOT_AN_ADDRESS = /\.(?:png|jpe?g|gif|webp|svg|avif|css|js)$/i;
const MAX_CRAWL_PAGES = 5;
/** Longest JSON-LD block read for addresses, characters; a longer one is skipped. */
const MAX_JSON_LD_CHARS = 256 * 1024;
/** Deepest JSON-LD nesting walked for addresses. */
const MAX_JSON_LD_DEPTH = 32;
/** Elements whose text is not visible text. */
const HIDDEN_ELEMENTS = new Set(['script', 'style', 'noscript', 'template', 'head']);
/** Elements that do not break the text around them (the rest start and end a line). */
const INLINE_ELEMENTS = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'cite',
  'code',
  'data',
  'dfn',
  'em',
  'font',
  'i',
  'kbd',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
]);

const underDomain = (domain: string, parent: string) => domain === parent || domain.endsWith(`.${parent}`);
const str = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : null);
/** A name or job title from a page: its stored form (`storedText`: at most 500 characters), null when empty. */
const remoteText = (value: unknown) => (typeof value === 'string' ? storedText(value) || null : null);

const isAlphanumeric = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** `[A-Za-z0-9._%+-]`: a character of an address's local part, as page text is read. */
const isLocalChar = (c: number) => isAlphanumeric(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
/** `[A-Za-z0-9-]`: a character of a domain label. */
const isLabelChar = (c: number) => isAlphanumeric(c) || c === 45;
const DOT = 46;
/** Longest local part of an address (RFC 5321 §4.5.3.1.1), characters. */
const MAX_LOCAL_CHARS = 64;
/** Longest top-level domain the scan takes, letters. */
const MAX_TLD_CHARS = 24;

/**
 * Finds addresses in plain text in one left-to-right pass, without a regular expression, so the
 * time is linear in the text whatever it holds (a backtracking pattern took time in the square
 * of the length: 6.8 s for 80,000 `a`). An address is, at each `@`:
 * - before it, the run of local-part characters (`[A-Za-z0-9._%+-]`, leading dots dropped) that
 *   does not reach back into the previous address; none when that run is longer than 64;
 * - after it, one or more labels (`[A-Za-z0-9-]+`) each followed by a dot, then 2–24 letters:
 *   as many labels as there are, else fewer, as `(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}` would match.
 *
 * Each character is read a bounded number of times: the search for `@` reads it once, the look
 * back at most 65 characters, the look ahead reads the labels after one `@` only (they hold no
 * `@`). `step(chars)` reads on by about that many characters, so a caller can take turns.
 */
export class AddressScanner {
  /** Where the search for the next `@` starts. */
  private next = 0;
  /** The end of the last address found: the next one starts no earlier. */
  private floor = 0;
  /** The addresses found so far, in text order (they may still fail `domainOf`). */
  readonly found: string[] = [];

  constructor(private readonly text: string) {}

  /** True once the whole text is read. */
  get done(): boolean {
    return this.next >= this.text.length;
  }

  /** Reads on until every `@` before `next + chars` is handled. */
  step(chars: number): void {
    const { text } = this;
    const until = Math.min(text.length, this.next + chars);
    while (this.next < until) {
      const at = text.indexOf('@', this.next);
      if (at === -1 || at >= until) {
        this.next = at === -1 ? text.length : at;
        return;
      }
      this.next = at + 1;
      let start = at;
      while (start > this.floor && at - start <= MAX_LOCAL_CHARS && isLocalChar(text.charCodeAt(start - 1))) start--;
      if (at - start > MAX_LOCAL_CHARS) continue;
      while (start < at && text.charCodeAt(start) === DOT) start++;
      if (start === at) continue;
      const end = this.domainEnd(at + 1);
      if (end === -1) continue;
      this.found.push(text.slice(start, end));
      this.next = this.floor = end;
    }
  }

  /** Where the domain that starts at `from` ends, or -1 when there is none there. */
  private domainEnd(from: number): number {
    const { text } = this;
    const dots: number[] = [];
    let at = from;
    for (;;) {
      const labelStart = at;
      while (at < text.length && isLabelChar(text.charCodeAt(at))) at++;
      if (at === labelStart || text.charCodeAt(at) !== DOT) break;
      dots.push(at);
      at++;
    }
    for (let i = dots.length - 1; i >= 0; i--) {
      const tld = dots[i]! + 1;
      let end = tld;
      while (end < text.length && end - tld < MAX_TLD_CHARS && isLetter(text.charCodeAt(end))) end++;
      if (end - tld >= 2) return end;
    }
    return -1;
  }
}

/** The addresses in `text` (see `AddressScanner`), a turn of the event loop after each `SLICE_CHARS`. */
export async function addressesIn(text: string): Promise<string[]> {
  const scanner = new AddressScanner(text);
  for (;;) {
    scanner.step(SLICE_CHARS);
    if (scanner.done) return scanner.found;
    await nextTurn();
  }
}

/** Addresses of a `mailto:` URL (`mailto:a@x.com,b@x.com?subject=…`). */
function mailtoAddresses(href: string): string[] {
  const rest = href.replace(/^mailto:/i, '').split('?')[0] ?? '';
  let decoded = rest;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    // keep the raw text: a malformed escape is not worth failing the page for
  }
  return decoded
    .split(',')
    .map((a) => a.trim())
    .filter((a) => domainOf(a) !== null);
}

async function fromText(text: string | null, sourceUrl: string | null, reference: string): Promise<ContactCandidate[]> {
  if (!text) return [];
  return (await addressesIn(text))
    .filter((email) => !NOT_AN_ADDRESS.test(email) && domainOf(email) !== null)
    .map((email) => ({ email, fullName: null, role: null, sourceUrl, sourceReference: reference }));
}

/** Candidates from the prospect's stored `contactPaths`: an `email` key, or a `mailto:` `url`. */
function fromContactPaths(prospect: ProspectFacts): ContactCandidate[] {
  return prospect.contactPaths.flatMap((item, index) => {
    if (typeof item !== 'object' || item === null) return [];
    const record = item as Record<string, unknown>;
    const url = str(record.url);
    const emails = [
      str(record.email),
      ...(url?.toLowerCase().startsWith('mailto:') ? mailtoAddresses(url) : []),
    ].filter((e): e is string => e !== null && domainOf(e) !== null);
    return emails.map((email) => ({
      email,
      fullName: str(record.fullName) ?? str(record.name),
      role: str(record.role) ?? str(record.jobTitle),
      sourceUrl: url && /^https?:/i.test(url) ? url : null,
      sourceReference: `contactPaths[${index}]`,
    }));
  });
}

/**
 * Text that arrives in many small pieces, joined every `SLICE_CHARS` characters so that no single
 * join (or the flattening of a long string of pieces) holds the event loop for long.
 */
class TextCollector {
  private readonly parts: string[] = [];
  private pending: string[] = [];
  private pendingChars = 0;

  add(piece: string): void {
    this.pending.push(piece);
    this.pendingChars += piece.length;
    if (this.pendingChars >= SLICE_CHARS) this.flush();
  }

  joined(): string {
    this.flush();
    return this.parts.join('');
  }

  private flush(): void {
    this.parts.push(this.pending.join(''));
    this.pending = [];
    this.pendingChars = 0;
  }
}

/**
 * Addresses on an HTML page: `mailto:` links, schema.org JSON-LD `email` (a block up to
 * 256 KiB, 32 levels deep), and visible text (not `script`, `style`, `noscript`, `template`,
 * `head`). The page is parsed as a stream (`./bounded-html.ts`): a turn of the event loop after
 * each 16 KiB, and nothing past 512 nested elements.
 */
export async function extractFromHtml(html: string, pageUrl: string): Promise<ContactCandidate[]> {
  const found: ContactCandidate[] = [];
  const text = new TextCollector();
  let hidden = 0;
  /** The text of the JSON-LD `<script>` being read; null outside one or once it is too long. */
  let jsonLd: { chars: string[]; length: number } | null = null;
  const parser = new BoundedHtmlParser({
    onopentag(name, attributes) {
      if (name === 'a' && /^\s*mailto:/i.test(attributes.href ?? ''))
        for (const email of mailtoAddresses(attributes.href!.trim()))
          found.push({ email, fullName: null, role: null, sourceUrl: pageUrl, sourceReference: 'mailto' });
      if (name === 'script' && /ld\+json/i.test(attributes.type ?? '')) jsonLd = { chars: [], length: 0 };
      if (HIDDEN_ELEMENTS.has(name)) hidden++;
      else if (!INLINE_ELEMENTS.has(name)) text.add('\n');
    },
    ontext(data) {
      if (jsonLd) {
        jsonLd.length += data.length;
        if (jsonLd.length <= MAX_JSON_LD_CHARS) jsonLd.chars.push(data);
      } else if (hidden === 0) text.add(data);
    },
    onclosetag(name) {
      if (name === 'script' && jsonLd) {
        if (jsonLd.length <= MAX_JSON_LD_CHARS) {
          try {
            walkJsonLd(JSON.parse(jsonLd.chars.join('')), pageUrl, found, 0);
          } catch {
            // invalid JSON-LD is common on the web; the rest of the page still counts
          }
        }
        jsonLd = null;
      }
      if (HIDDEN_ELEMENTS.has(name)) hidden--;
      else if (!INLINE_ELEMENTS.has(name)) text.add('\n');
    },
  });
  await parser.write(html);
  parser.end();
  return found.concat(await fromText(text.joined(), pageUrl, 'text'));
}

function walkJsonLd(node: unknown, pageUrl: string, out: ContactCandidate[], depth: number): void {
  if (depth > MAX_JSON_LD_DEPTH) return;
  if (Array.isArray(node)) {
    for (const n of node) walkJsonLd(n, pageUrl, out, depth + 1);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  const types = ([] as unknown[]).concat(record['@type'] ?? []);
  const isPerson = types.includes('Person');
  for (const value of ([] as unknown[]).concat(record.email ?? [])) {
    const email = typeof value === 'string' ? value.replace(/^mailto:/i, '').trim() : '';
    if (domainOf(email) === null) continue;
    out.push({
      email,
      fullName: isPerson ? remoteText(record.name) : null,
      role: isPerson ? remoteText(record.jobTitle) : null,
      sourceUrl: pageUrl,
      sourceReference: 'json-ld',
    });
  }
  for (const [key, value] of Object.entries(record)) if (key !== 'email') walkJsonLd(value, pageUrl, out, depth + 1);
}

/**
 * Unique by address (case-insensitive), best first: an address at the prospect's own domain
 * before others, then a deliberate one (contact paths, mailto, JSON-LD) before one in text.
 * A later duplicate fills in a name or role the first lacked.
 */
export function rankCandidates(candidates: ContactCandidate[], prospectDomain: string): ContactCandidate[] {
  const site = prospectDomain.toLowerCase().replace(/^www\./, '');
  const byEmail = new Map<string, ContactCandidate>();
  for (const c of candidates) {
    const key = c.email.toLowerCase();
    const seen = byEmail.get(key);
    if (!seen) byEmail.set(key, { ...c });
    else {
      seen.fullName ??= c.fullName;
      seen.role ??= c.role;
    }
  }
  const score = (c: ContactCandidate) => {
    const domain = domainOf(c.email) ?? '';
    return (
      (underDomain(domain, site) || underDomain(site, domain) ? 2 : 0) +
      (c.sourceReference === 'text' || c.sourceReference === 'description' || c.sourceReference === 'contentExcerpt'
        ? 0
        : 1)
    );
  };
  return [...byEmail.values()]
    .map((c, i) => ({ c, i, s: score(c) }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.c);
}

/** The stored candidates of a prospect: contact paths, then its content excerpt and description. */
async function storedCandidates(prospect: ProspectFacts): Promise<ContactCandidate[]> {
  return [
    ...fromContactPaths(prospect),
    ...(await fromText(prospect.contentExcerpt, null, 'contentExcerpt')),
    ...(await fromText(prospect.description, null, 'description')),
  ];
}

/**
 * The offline finder: reads only what the store holds about the prospect, so it answers at once.
 * Magic domains (see `./index.ts`): `*.queued.test` defers to a background job, and
 * `*.notfound.test` never finds anything.
 */
export function createBuiltinFinder(): ContactFinder {
  return {
    name: 'builtin',
    defers: (prospect) => underDomain(prospect.domain.toLowerCase(), 'queued.test'),
    async find(prospect) {
      if (underDomain(prospect.domain.toLowerCase(), 'notfound.test')) return [];
      return rankCandidates(await storedCandidates(prospect), prospect.domain);
    },
  };
}

/**
 * The crawling finder: always deferred to a discovery job (the request never waits on the
 * network). Fetches the prospect's `url` and the http(s) `url`s of its contact paths (relative
 * ones against the prospect's url; at most 5 pages) and adds their addresses to the stored ones.
 * @throws ProviderError when no page could be fetched: retryable when some failure was (a timeout,
 * a 5xx); when every failure was final (a refused private address) only if nothing is stored either.
 */
export function createCrawlFinder(
  options: SafeFetchOptions,
  fetchPage: (url: string, o: SafeFetchOptions) => Promise<FetchedPage> = safeFetch,
): ContactFinder {
  return {
    name: 'crawl',
    defers: () => true,
    async find(prospect) {
      const urls = new Set<string>();
      for (const candidate of [
        prospect.url,
        ...prospect.contactPaths.map((p) =>
          typeof p === 'object' && p !== null ? (p as Record<string, unknown>).url : null,
        ),
      ]) {
        if (typeof candidate !== 'string' || /^mailto:/i.test(candidate)) continue;
        try {
          const url = new URL(candidate, prospect.url);
          if (url.protocol === 'http:' || url.protocol === 'https:') urls.add(url.href.replace(/#.*$/, ''));
        } catch {
          // not a URL: nothing to fetch
        }
      }
      let found = await storedCandidates(prospect);
      const failures: ProviderError[] = [];
      let fetched = 0;
      for (const url of [...urls].slice(0, MAX_CRAWL_PAGES)) {
        try {
          const page = await fetchPage(url, options);
          fetched++;
          if (page.status >= 200 && page.status < 300 && /html|text\/plain|^$/i.test(page.contentType))
            found = found.concat(await extractFromHtml(page.body, page.url));
        } catch (error) {
          failures.push(error instanceof ProviderError ? error : new ProviderError('fetching a page failed'));
        }
      }
      if (fetched === 0 && failures.length > 0) {
        // Nothing could be read: try again later if that may help, else settle for what is stored.
        const retryable = failures.find((f) => f.retryable);
        if (retryable || found.length === 0)
          throw new ProviderError((retryable ?? failures[0]!).message, retryable !== undefined);
      }
      return rankCandidates(found, prospect.domain);
    },
  };
}
