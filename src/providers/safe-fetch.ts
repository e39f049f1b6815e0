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
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
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

/** IPv6 global unicast space (RFC 4291 §2.4): everything outside `2000::/3` is unassigned or special. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

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
  return parsed.kind() === 'ipv6' && !parsed.match(GLOBAL_UNICAST_V6);
}

const refused = (host: string) => new ProviderError(`refused to fetch ${host}: a private, loopback or reserved address`, false);

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

/**
 * GETs `url` under the guards above.
 * @throws ProviderError: `retryable` false for a refused target, a non-http(s) URL, too many
 * redirects or an over-large body; true for network failures, timeouts and 5xx answers.
 */
export async function safeFetch(url: string, options: SafeFetchOptions): Promise<FetchedPage> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const forbidden = options.allowPrivateNetworks ? () => false : (options.isForbidden ?? isForbiddenAddress);
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:') throw new ProviderError(`refused to fetch a ${current.protocol} URL`, false);
    const host = current.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && forbidden(host)) throw refused(host);
    const response = await get(current, forbidden, options.timeoutMs, signal);
    const location = response.headers.location;
    if (response.statusCode && response.statusCode >= 300 && response.statusCode < 400 && location) {
      response.resume();
      if (hop >= options.maxRedirects) throw new ProviderError(`more than ${options.maxRedirects} redirects`, false);
      current = new URL(location, current);
      continue;
    }
    const body = await readLimited(response, options.maxBytes, signal, options.timeoutMs);
    const status = response.statusCode ?? 0;
    if (status >= 500 || status === 429) throw new ProviderError(`${current.host} answered HTTP ${status}`);
    return { url: current.href, status, contentType: String(response.headers['content-type'] ?? ''), body: decode(body, response.headers['content-type']) };
  }
}

function get(target: URL, forbidden: (address: string) => boolean, timeoutMs: number, signal: AbortSignal): Promise<http.IncomingMessage> {
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(
      target,
      {
        lookup: guardedLookup(forbidden) as unknown as http.RequestOptions['lookup'],
        signal,
        headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5', 'user-agent': 'outreach-api contact finder' },
      },
      resolve,
    );
    request.on('error', (error) => reject(toProviderError(error, target, signal, timeoutMs)));
  });
}

function toProviderError(error: Error, target: URL, signal: AbortSignal, timeoutMs: number): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal.aborted) return new ProviderError(`fetching ${target.host} took longer than ${timeoutMs} ms`);
  return new ProviderError(`fetching ${target.host} failed (${(error as NodeJS.ErrnoException).code ?? error.name})`);
}

function readLimited(response: http.IncomingMessage, maxBytes: number, signal: AbortSignal, timeoutMs: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    return Promise.reject(new ProviderError(`the page is larger than ${maxBytes} bytes`, false));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        response.destroy();
        reject(new ProviderError(`the page is larger than ${maxBytes} bytes`, false));
      } else chunks.push(chunk);
    });
    const failed = () =>
      reject(new ProviderError(signal.aborted ? `fetching the page took longer than ${timeoutMs} ms` : 'the connection closed before the page was complete'));
    response.on('end', () => resolve(Buffer.concat(chunks)));
    response.on('error', failed);
    response.on('close', () => {
      if (!response.complete) failed();
    });
  });
}

function decode(body: Buffer, contentType: string | undefined): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
