/**
 * The client of a request with `server.trustProxy` (decisions.md §18, src/http/client.ts): the
 * address, HTTPS and origin, believing `X-Forwarded-*` only from a trusted proxy. The peer is
 * faked through the Node adapter's `incoming` for the address rules; the access log's
 * `remoteAddr` is checked over real HTTP from 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { clientReader, type ClientInfo } from '../../src/http/client.js';
import { createLogger } from '../../src/logger.js';
import { API, startTestServer } from '../helpers/harness.js';

/** What `clientReader(trustProxy)` reads of a request from `peer` with `headers` to `url`. */
async function clientOf(
  trustProxy: string[],
  peer: string,
  headers: Record<string, string> = {},
  url = 'http://api.test/x',
): Promise<ClientInfo> {
  const read = clientReader(trustProxy);
  const app = new Hono();
  app.get('/x', (c) => c.json(read(c)));
  const res = await app.fetch(new Request(url, { headers }), { incoming: { socket: { remoteAddress: peer } } });
  return (await res.json()) as ClientInfo;
}

const FORWARDED = {
  'x-forwarded-for': '198.51.100.1, 203.0.113.9',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'outreach.example.com',
};

describe('client address, HTTPS and origin', () => {
  it('ignores forwarded headers when no proxy is trusted (the default) or the peer is not one', async () => {
    for (const trust of [[], ['10.0.0.0/8']]) {
      assert.deepEqual(await clientOf(trust, '192.0.2.4', FORWARDED), {
        address: '192.0.2.4',
        https: false,
        origin: 'http://api.test',
      });
    }
  });

  it('believes a trusted proxy: the first untrusted address from the right, its scheme and host', async () => {
    assert.deepEqual(await clientOf(['10.0.0.0/8'], '10.1.2.3', FORWARDED), {
      address: '203.0.113.9',
      https: true,
      origin: 'https://outreach.example.com',
    });
    // Two trusted hops: the load balancer appended the client, the inner proxy the balancer.
    const chain = { 'x-forwarded-for': '6.6.6.6, 203.0.113.9, 10.0.0.9' };
    assert.equal((await clientOf(['10.0.0.0/8'], '10.1.2.3', chain)).address, '203.0.113.9');
    // Only the client's own (leftmost) entries, whatever they say, are never reached.
    assert.equal((await clientOf(['10.1.2.3'], '10.1.2.3', chain)).address, '10.0.0.9');
    // Ports and brackets are dropped; a mapped IPv4 peer matches an IPv4 range.
    assert.equal(
      (await clientOf(['10.0.0.0/8'], '::ffff:10.0.0.1', { 'x-forwarded-for': '203.0.113.9:4431' })).address,
      '203.0.113.9',
    );
    assert.equal(
      (await clientOf(['fd00::/8'], 'fd00::1', { 'x-forwarded-for': '[2001:db8::7]:443' })).address,
      '2001:db8::7',
    );
    // A trusted proxy that forwards nothing usable is itself the nearest client known.
    assert.equal((await clientOf(['10.0.0.1'], '10.0.0.1', { 'x-forwarded-for': 'garbage' })).address, '10.0.0.1');
    assert.equal((await clientOf(['10.0.0.1'], '10.0.0.1')).address, '10.0.0.1');
  });

  it('takes the rightmost proto and host (the nearest proxy wrote it) and the Host header without one', async () => {
    const appended = { 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'evil.test, outreach.example.com' };
    assert.deepEqual(await clientOf(['127.0.0.1'], '127.0.0.1', appended), {
      address: '127.0.0.1',
      https: false,
      origin: 'http://outreach.example.com',
    });
    // Default ports are dropped as a browser's Origin drops them; a host that is no host gives no origin.
    assert.equal(
      (await clientOf(['127.0.0.1'], '127.0.0.1', { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'A.test:443' }))
        .origin,
      'https://a.test',
    );
    assert.equal((await clientOf([], '127.0.0.1', {}, 'https://b.test:8443/x')).https, true);
    assert.equal((await clientOf(['127.0.0.1'], '127.0.0.1', { 'x-forwarded-host': 'a b/c' })).origin, null);
  });

  it('writes the client address in the access log: the peer, or the forwarded client behind a trusted proxy', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    const remoteAddrOf = (res: Response) =>
      lines.map((l) => JSON.parse(l)).find((e) => e.requestId === res.headers.get('x-request-id'))?.remoteAddr;
    for (const [trustProxy, expected] of [
      [[], '127.0.0.1'],
      [['127.0.0.0/8'], '203.0.113.9'],
    ] as const) {
      const t = await startTestServer({ logger, config: { 'server.trustProxy': trustProxy } });
      try {
        const res = await fetch(`${t.origin}${API}/me`, {
          headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' },
        });
        await res.text();
        assert.equal(remoteAddrOf(res), expected, `trustProxy ${JSON.stringify(trustProxy)}`);
      } finally {
        await t.close();
      }
    }
  });
});
