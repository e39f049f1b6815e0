/**
 * An HTTP(S) GET for crawling addresses that other people supplied, with SSRF guards:
 *
 * - the host is resolved and every address is checked; private (RFC 1918, CGNAT), loopback,
 *   link-local, unique-local, multicast, reserved and unspecified targets are refused unless
 *   `allowPrivateNetworks`. The check runs inside the socket's own `lookup`, so the address
 *   checked is the address connected to (no DNS-rebinding window); IP literals are checked first;
 * - redirects are followed by hand, at most `maxRedirects`, each hop checked the same way;
 * - the body is read up to `maxBytes` and refused beyond;
 * - one `timeoutMs` budget covers the whole fetch, redirects included.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
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

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => parseInt(g, 16));
}

/** True for an address a crawler must not reach by default (see the module comment). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  const g = ipv6Groups(address);
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  // IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96) and NAT64 (64:ff9b::/96) addresses carry an IPv4 target.
  const embedsIpv4 = (zeroUpTo(5) && g[5] === 0xffff) || (zeroUpTo(6) && (g[6] ?? 0) > 0) || (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0));
  if (embedsIpv4) return BLOCKED.check(`${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`, 'ipv4');
  return BLOCKED.check(address.replace(/%.*$/, ''), 'ipv6');
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
