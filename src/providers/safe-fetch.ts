/**
 * An HTTP(S) GET for crawling addresses that other people supplied, with SSRF guards:
 *
 * - the host is resolved and every address is checked: only global unicast targets are allowed
 *   unless `allowPrivateNetworks` (see `isForbiddenAddress`). The check runs inside the socket's
 *   own `lookup`, so the address checked is the address connected to (no DNS-rebinding window);
 *   IP literals are checked first;
 * - redirects are followed by hand, at most `maxRedirects`, each hop checked the same way;
 * - the body is read up to `maxBytes` and refused beyond;
 * - one `timeoutMs` budget covers the whole fetch, redirects included.
 *
 * `safeFetch` reads a page whole (the crawl contact finder); `safeOpen` stops at the final
 * response's headers and `readBody` streams the body chunk by chunk under the same limits, so a
 * caller that parses as it reads (the backlink monitor) never holds a page.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { TextDecoder } from 'node:util';
import ipaddr from 'ipaddr.js';
import { ProviderError } from './types.js';

export interface SafeFetchOptions {
  allowPrivateNetworks: boolean;
  maxRedirects: number;
  maxBytes: number;
  timeoutMs: number;
  /** The address policy when private networks are not allowed; default `isForbiddenAddress`. */
  isForbidden?: (address: string) => boolean;
}

export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  contentType: string;
  body: string;
}

/** IPv6 global unicast space (RFC 4291 §2.4): everything outside `2000::/3` is unassigned or special. Parsed at first use. */
let globalUnicastV6: [ipaddr.IPv6, number] | undefined;

/**
 * True for an address a crawler must not reach by default: anything that is not global unicast.
 * The ranges are `ipaddr.js`'s reading of the IANA IPv4 and IPv6 special-purpose address
 * registries (private, loopback, link-local, CGNAT, documentation, benchmarking, multicast,
 * reserved, unspecified, broadcast, AS112, AMT; IPv4-mapped, NAT64, 6to4, Teredo, ORCHID,
 * discard, segment routing, unique-local, site-local …); an IPv6 address must in addition lie in
 * `2000::/3`. Addresses that embed an IPv4 target (IPv4-mapped, NAT64, 6to4, Teredo) are refused
 * whatever they embed. Anything that is not an IP address is refused too.
 */
export function isForbiddenAddress(address: string): boolean {
  if (!isIP(address.replace(/%.*$/, ''))) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.range() !== 'unicast') return true;
  return (
    parsed.kind() === 'ipv6' &&
    !parsed.match((globalUnicastV6 ??= ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number]))
  );
}

const refused = (host: string) =>
  new ProviderError(`refused to fetch ${host}: a private, loopback or reserved address`, false);

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request that refuses forbidden targets. */
function guardedLookup(forbidden: (address: string) => boolean) {
  return (hostname: string, options: { all?: boolean; family?: number } | number, callback: LookupCallback) => {
    const opts = typeof options === 'number' ? { family: options } : options;
    dnsLookup(hostname, { family: opts.family ?? 0, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (addresses.some((a) => forbidden(a.address))) return callback(refused(hostname) as NodeJS.ErrnoException, []);
      if (opts.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** Options of `safeOpen`: the guards, plus request headers and connection reuse. */
export interface SafeOpenOptions extends SafeFetchOptions {
  /** Request headers, over the defaults (`accept` for HTML, `user-agent` of the contact finder). */
  headers?: Record<string, string>;
  /** Agents to reuse connections with (keep-alive); default: Node's global agents. */
  agents?: { http?: http.Agent; https?: https.Agent };
}

/** A final (non-redirect) response whose body is not read yet: read it with `readBody` or `discard` it. */
export interface SafeResponse {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  body: http.IncomingMessage;
  /** Aborts when the fetch's `timeoutMs` budget (redirects and body included) runs out. */
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * GETs `url` under the guards above and resolves at the final response's headers: every redirect
 * hop is checked as the first request is, and the `timeoutMs` budget goes on covering the body.
 * @throws ProviderError (`retryable` false) for a refused target, a non-http(s) URL or too many
 * redirects; (`retryable` true) for network failures and timeouts.
 */
export async function safeOpen(url: string, options: SafeOpenOptions): Promise<SafeResponse> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const forbidden = options.allowPrivateNetworks ? () => false : (options.isForbidden ?? isForbiddenAddress);
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:')
      throw new ProviderError(`refused to fetch a ${current.protocol} URL`, false);
    const host = current.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && forbidden(host)) throw refused(host);
    const response = await get(current, forbidden, options, signal);
    const location = response.headers.location;
    if (response.statusCode && response.statusCode >= 300 && response.statusCode < 400 && location) {
      response.resume();
      if (hop >= options.maxRedirects) throw new ProviderError(`more than ${options.maxRedirects} redirects`, false);
      current = new URL(location, current);
      continue;
    }
    return {
      url: current.href,
      status: response.statusCode ?? 0,
      headers: response.headers,
      body: response,
      signal,
      timeoutMs: options.timeoutMs,
    };
  }
}

/**
 * GETs `url` under the guards above and reads the whole body.
 * @throws ProviderError: `retryable` false for a refused target, a non-http(s) URL, too many
 * redirects or an over-large body; true for network failures, timeouts and 5xx answers.
 */
export async function safeFetch(url: string, options: SafeFetchOptions): Promise<FetchedPage> {
  const response = await safeOpen(url, options);
  const chunks: Buffer[] = [];
  await readBody(response, options.maxBytes, (chunk) => {
    chunks.push(chunk);
  });
  const { status } = response;
  if (status >= 500 || status === 429) throw new ProviderError(`${new URL(response.url).host} answered HTTP ${status}`);
  const contentType = String(response.headers['content-type'] ?? '');
  return { url: response.url, status, contentType, body: decode(Buffer.concat(chunks), contentType) };
}

/**
 * One GET. A request sent on a reused keep-alive connection that the server had just closed
 * fails with ECONNRESET before any answer; it is sent once more on a new connection (the retry
 * Node's documentation advises for `reusedSocket`), as a GET may be.
 */
function get(
  target: URL,
  forbidden: (address: string) => boolean,
  options: SafeOpenOptions,
  signal: AbortSignal,
  retried = false,
): Promise<http.IncomingMessage> {
  const client = target.protocol === 'https:' ? https : http;
  const agent = target.protocol === 'https:' ? options.agents?.https : options.agents?.http;
  return new Promise((resolve, reject) => {
    const request = client.get(
      target,
      {
        lookup: guardedLookup(forbidden) as unknown as http.RequestOptions['lookup'],
        signal,
        ...(agent ? { agent } : {}),
        headers: {
          accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
          'user-agent': 'outreach-api contact finder',
          ...options.headers,
        },
      },
      resolve,
    );
    request.on('error', (error) => {
      if (
        !retried &&
        request.reusedSocket &&
        (error as NodeJS.ErrnoException).code === 'ECONNRESET' &&
        !signal.aborted
      ) {
        resolve(get(target, forbidden, options, signal, true));
      } else reject(toProviderError(error, target, signal, options.timeoutMs));
    });
  });
}

function toProviderError(error: Error, target: URL, signal: AbortSignal, timeoutMs: number): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal.aborted) return new ProviderError(`fetching ${target.host} took longer than ${timeoutMs} ms`);
  return new ProviderError(`fetching ${target.host} failed (${(error as NodeJS.ErrnoException).code ?? error.name})`);
}

/**
 * Reads `response`'s body chunk by chunk into `onChunk`, at most `maxBytes` bytes (a declared
 * `Content-Length` over it fails at once), within the fetch's time budget. Nothing is kept here:
 * memory is what `onChunk` keeps. When `onChunk` returns a promise, the body is paused until it
 * settles (a rejection fails the read), so a slow consumer is never handed more.
 * @throws ProviderError (`retryable` false) for a body over `maxBytes`; (true) for a timeout or a
 * connection closed before the body was complete; whatever `onChunk` throws or rejects with.
 */
export function readBody(
  response: SafeResponse,
  maxBytes: number,
  onChunk: (chunk: Buffer) => void | Promise<void>,
): Promise<void> {
  const { body, signal, timeoutMs } = response;
  const tooLarge = () => new ProviderError(`the page is larger than ${maxBytes} bytes`, false);
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    body.destroy();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    let size = 0;
    /** Settles when the chunks handed to `onChunk` so far are consumed. */
    let consumed: Promise<void> = Promise.resolve();
    const fail = (error: unknown) => {
      body.destroy();
      reject(error);
    };
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return fail(tooLarge());
      let result: void | Promise<void>;
      try {
        result = onChunk(chunk);
      } catch (error) {
        return fail(error);
      }
      if (result instanceof Promise) {
        body.pause();
        consumed = result.then(() => void body.resume());
        consumed.catch(fail);
      }
    });
    const failed = () =>
      reject(
        new ProviderError(
          signal.aborted
            ? `fetching the page took longer than ${timeoutMs} ms`
            : 'the connection closed before the page was complete',
        ),
      );
    body.on('end', () => consumed.then(resolve, () => {}));
    body.on('error', failed);
    body.on('close', () => {
      if (!body.complete) failed();
    });
  });
}

/** Drops a response's body unread (closing its connection rather than downloading it). */
export function discard(response: SafeResponse): void {
  response.body.destroy();
}

/** A text decoder for the charset of a `Content-Type` (UTF-8 when it names none or an unknown one). */
export function decoderFor(contentType: string | undefined): TextDecoder {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}

function decode(body: Buffer, contentType: string | undefined): string {
  return decoderFor(contentType).decode(body);
}
