/**
 * Contact finders: `builtin` (offline: the prospect's stored page data) and `crawl` (fetches the
 * prospect's page and contact paths under the SSRF guards of `./safe-fetch.ts`).
 */
import { parse as parseHtml, type HTMLElement } from 'node-html-parser';
import { safeFetch, type FetchedPage, type SafeFetchOptions } from './safe-fetch.js';
import { domainOf } from './verifier.js';
import { ProviderError, type ContactCandidate, type ContactFinder, type ProspectFacts } from './types.js';

const EMAIL_IN_TEXT = /[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}/g;
/** `logo@2x.png` and friends look like addresses in page text. */
const NOT_AN_ADDRESS = /\.(?:png|jpe?g|gif|webp|svg|avif|css|js)$/i;
const MAX_CRAWL_PAGES = 5;

const underDomain = (domain: string, parent: string) => domain === parent || domain.endsWith(`.${parent}`);
const str = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : null);

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

function fromText(text: string | null, sourceUrl: string | null, reference: string): ContactCandidate[] {
  if (!text) return [];
  return [...text.matchAll(EMAIL_IN_TEXT)]
    .map((m) => m[0].replace(/^\.+|\.+$/g, ''))
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

/** Addresses on an HTML page: `mailto:` links, schema.org JSON-LD `email`, and visible text. */
export function extractFromHtml(html: string, pageUrl: string): ContactCandidate[] {
  const root = parseHtml(html, {
    comment: false,
    blockTextElements: { script: true, style: true, noscript: true, pre: true },
  });
  const found: ContactCandidate[] = [];
  for (const link of root.querySelectorAll('a[href]')) {
    const href = link.getAttribute('href') ?? '';
    if (!/^mailto:/i.test(href.trim())) continue;
    for (const email of mailtoAddresses(href.trim()))
      found.push({ email, fullName: null, role: null, sourceUrl: pageUrl, sourceReference: 'mailto' });
  }
  for (const script of root.querySelectorAll('script')) {
    if (!/ld\+json/i.test(script.getAttribute('type') ?? '')) continue;
    try {
      walkJsonLd(JSON.parse(script.rawText), pageUrl, found);
    } catch {
      // invalid JSON-LD is common on the web; the rest of the page still counts
    }
  }
  for (const hidden of root.querySelectorAll('script, style, noscript, template, head')) hidden.remove();
  found.push(...fromText((root as HTMLElement).structuredText, pageUrl, 'text'));
  return found;
}

function walkJsonLd(node: unknown, pageUrl: string, out: ContactCandidate[]): void {
  if (Array.isArray(node)) {
    for (const n of node) walkJsonLd(n, pageUrl, out);
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
      fullName: isPerson ? str(record.name) : null,
      role: isPerson ? str(record.jobTitle) : null,
      sourceUrl: pageUrl,
      sourceReference: 'json-ld',
    });
  }
  for (const [key, value] of Object.entries(record)) if (key !== 'email') walkJsonLd(value, pageUrl, out);
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
function storedCandidates(prospect: ProspectFacts): ContactCandidate[] {
  return [
    ...fromContactPaths(prospect),
    ...fromText(prospect.contentExcerpt, null, 'contentExcerpt'),
    ...fromText(prospect.description, null, 'description'),
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
      return rankCandidates(storedCandidates(prospect), prospect.domain);
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
      const found = storedCandidates(prospect);
      const failures: ProviderError[] = [];
      let fetched = 0;
      for (const url of [...urls].slice(0, MAX_CRAWL_PAGES)) {
        try {
          const page = await fetchPage(url, options);
          fetched++;
          if (page.status >= 200 && page.status < 300 && /html|text\/plain|^$/i.test(page.contentType))
            found.push(...extractFromHtml(page.body, page.url));
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
