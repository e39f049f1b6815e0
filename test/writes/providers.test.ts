/**
 * The provider adapters on their own, against local servers: the OpenAI-compatible generator
 * (format, key, timeout), the SSRF-guarded fetch and the crawling contact finder, the builtin
 * verifier's DNS branches (with an injected resolver) and the http verifier's GET form.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createBuiltinFinder, createCrawlFinder, extractFromHtml } from '../../src/providers/contact-finder.js';
import { createOpenAiGenerator, createTemplateGenerator } from '../../src/providers/generator.js';
import { ProviderError, type GenerationInput, type ProspectFacts } from '../../src/providers/index.js';
import { isForbiddenAddress, safeFetch, type SafeFetchOptions } from '../../src/providers/safe-fetch.js';
import { createBuiltinVerifier, createHttpVerifier } from '../../src/providers/verifier.js';
import { gate, sendJson, startHttp, type TestHttp } from './helpers.js';

const INPUT: GenerationInput = {
  site: { name: 'Trail Gear', domain: 'trailgear.example', url: 'https://trailgear.example/' },
  prospect: {
    title: 'The 10 best hiking backpacks',
    url: 'https://hikingblog.example/backpacks',
    domain: 'hikingblog.example',
    description: null,
    contentExcerpt: 'We tested ten packs.',
    opportunityType: 'resource_page',
    suggestedPlacement: null,
  },
  contact: { fullName: 'Eve Editor', email: 'eve@hikingblog.example', role: 'Editor', company: null },
  purpose: 'link_insertion',
  instruction: 'Keep it short',
  previous: null,
};

describe('template generator', () => {
  it('is deterministic, grounded and within the length limits', async () => {
    const generator = createTemplateGenerator();
    const a = await generator.generate(INPUT);
    assert.deepEqual(await generator.generate(INPUT), a);
    assert.equal(a.provider, 'template');
    assert.equal(a.model, 'template-v1');
    assert.match(a.body, /^Hi Eve,/);
    assert.match(a.body, /hikingblog\.example/);
    assert.match(a.body, /Trail Gear/);
    assert.match(a.groundingSummary, /Eve Editor.*Trail Gear.*Keep it short/);
    const formal = await generator.generate({
      ...INPUT,
      instruction: 'Make it formal',
      contact: { ...INPUT.contact, fullName: null },
    });
    assert.match(formal.body, /^Dear editor,/);
    const long = await generator.generate({ ...INPUT, prospect: { ...INPUT.prospect, title: 'T'.repeat(5000) } });
    assert.ok(long.subject.length <= 300 && long.body.length <= 10000);
  });
});

describe('openai generator', () => {
  let server: TestHttp;
  let reply: (res: import('node:http').ServerResponse) => void | Promise<void>;
  before(async () => {
    server = await startHttp((_req, res) => reply(res));
  });
  after(() => server.close());
  const options = () => ({
    baseUrl: `${server.url}/v1/`,
    model: 'gpt-test',
    apiKeyEnv: 'TEST_OPENAI_KEY',
    timeoutMs: 2000,
  });

  it('POSTs a chat completion with the model and key, and reads a JSON (even fenced) answer', async () => {
    reply = (res) =>
      sendJson(res, 200, {
        id: 'c1',
        object: 'chat.completion',
        model: 'gpt-test-0613',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content:
                '```json\n{"subject":"A pack for your list","body":"Hi Eve, we make a pack that would fit your roundup."}\n```',
            },
          },
        ],
      });
    const message = await createOpenAiGenerator(options(), { TEST_OPENAI_KEY: 'sk-test' }).generate(INPUT);
    assert.equal(message.subject, 'A pack for your list');
    assert.equal(message.body, 'Hi Eve, we make a pack that would fit your roundup.');
    assert.equal(message.provider, 'openai');
    assert.equal(message.model, 'gpt-test-0613');
    assert.match(message.groundingSummary, /hikingblog\.example/);
    const request = server.requests.at(-1)!;
    assert.equal(request.url, '/v1/chat/completions');
    assert.equal(request.headers.authorization, 'Bearer sk-test');
    const sent = JSON.parse(request.body);
    assert.equal(sent.model, 'gpt-test');
    assert.deepEqual(
      sent.messages.map((m: { role: string }) => m.role),
      ['system', 'user'],
    );
    assert.equal(JSON.parse(sent.messages[1].content).instruction, 'Keep it short');
  });

  it('accepts a "Subject:" text answer and sends no key when none is set', async () => {
    reply = (res) =>
      sendJson(res, 200, {
        choices: [{ message: { content: 'Subject: Quick idea\n\nHello Eve, a short note about your backpack list.' } }],
      });
    const message = await createOpenAiGenerator(options(), {}).generate(INPUT);
    assert.equal(message.subject, 'Quick idea');
    assert.equal(message.model, 'gpt-test');
    assert.equal(server.requests.at(-1)!.headers.authorization, undefined);
  });

  it('keeps a NUL (U+0000) of the answer as U+FFFD, which either store can hold (issue #28)', async () => {
    reply = (res) =>
      sendJson(res, 200, {
        choices: [
          {
            message: { content: '{"subject":"A\u0000B idea","body":"Hello Eve,\u0000 a short note about your list."}' },
          },
        ],
      });
    const message = await createOpenAiGenerator(options(), {}).generate(INPUT);
    assert.equal(message.subject, 'A\uFFFDB idea');
    assert.equal(message.body, 'Hello Eve,\uFFFD a short note about your list.');
  });

  it('fails with a ProviderError on a non-2xx answer, an unusable answer and a timeout', async () => {
    reply = (res) => sendJson(res, 429, { error: { message: 'rate limited' } });
    await assert.rejects(
      createOpenAiGenerator(options()).generate(INPUT),
      (e) => e instanceof ProviderError && /HTTP 429/.test(e.message),
    );
    reply = (res) => sendJson(res, 200, { choices: [{ message: { content: '{"subject":"x","body":"y"}' } }] });
    await assert.rejects(createOpenAiGenerator(options()).generate(INPUT), ProviderError);
    const hold = gate();
    reply = async (res) => {
      await hold.promise;
      res.end();
    };
    const started = Date.now();
    await assert.rejects(
      createOpenAiGenerator({ ...options(), timeoutMs: 150 }).generate(INPUT),
      (e) => e instanceof ProviderError && /within 150 ms/.test(e.message),
    );
    assert.ok(Date.now() - started < 2000);
    hold.open();
  });
});

describe('SSRF guards', () => {
  // Every entry of the IANA IPv4 and IPv6 special-purpose address registries that is not
  // global unicast, by its first address, one inside it and its last address.
  const SPECIAL: Array<[range: string, addresses: string[]]> = [
    ['0.0.0.0/8 this network', ['0.0.0.0', '0.1.2.3', '0.255.255.255']],
    ['10.0.0.0/8 private', ['10.0.0.0', '10.1.2.3', '10.255.255.255']],
    ['100.64.0.0/10 shared (CGNAT)', ['100.64.0.0', '100.100.1.1', '100.127.255.255']],
    ['127.0.0.0/8 loopback', ['127.0.0.0', '127.0.0.1', '127.255.255.255']],
    ['169.254.0.0/16 link-local (metadata)', ['169.254.0.0', '169.254.169.254', '169.254.255.255']],
    ['172.16.0.0/12 private', ['172.16.0.0', '172.20.1.1', '172.31.255.255']],
    ['192.0.0.0/24 IETF protocol assignments', ['192.0.0.0', '192.0.0.8', '192.0.0.170', '192.0.0.255']],
    ['192.0.2.0/24 TEST-NET-1', ['192.0.2.0', '192.0.2.1', '192.0.2.255']],
    ['192.31.196.0/24 AS112', ['192.31.196.1']],
    ['192.52.193.0/24 AMT', ['192.52.193.1']],
    ['192.88.99.0/24 6to4 relay anycast', ['192.88.99.0', '192.88.99.1', '192.88.99.255']],
    ['192.168.0.0/16 private', ['192.168.0.0', '192.168.1.1', '192.168.255.255']],
    ['192.175.48.0/24 AS112', ['192.175.48.1']],
    ['198.18.0.0/15 benchmarking', ['198.18.0.0', '198.19.1.1', '198.19.255.255']],
    ['198.51.100.0/24 TEST-NET-2', ['198.51.100.0', '198.51.100.7', '198.51.100.255']],
    ['203.0.113.0/24 TEST-NET-3', ['203.0.113.0', '203.0.113.9', '203.0.113.255']],
    ['224.0.0.0/4 multicast', ['224.0.0.0', '224.0.0.1', '239.255.255.255']],
    ['240.0.0.0/4 reserved', ['240.0.0.0', '250.1.2.3', '255.255.255.254']],
    ['255.255.255.255/32 limited broadcast', ['255.255.255.255']],
    ['::/128 unspecified', ['::']],
    ['::1/128 loopback', ['::1']],
    ['::/96 IPv4-compatible (deprecated)', ['::127.0.0.1', '::8.8.8.8']],
    [
      '::ffff:0:0/96 IPv4-mapped',
      ['::ffff:0.0.0.0', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:8.8.8.8', '::ffff:ffff:ffff'],
    ],
    ['::ffff:0:0:0/96 IPv4-translated', ['::ffff:0:7f00:1']],
    ['64:ff9b::/96 NAT64', ['64:ff9b::', '64:ff9b::a9fe:a9fe', '64:ff9b::8.8.8.8', '64:ff9b::ffff:ffff']],
    ['64:ff9b:1::/48 local NAT64', ['64:ff9b:1::', '64:ff9b:1::7f00:1', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff']],
    ['100::/64 discard-only', ['100::', '100::1', '100::ffff:ffff:ffff:ffff']],
    ['2001::/23 IETF protocol assignments', ['2001:100::1', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff']],
    [
      '2001::/32 Teredo',
      ['2001::', '2001:0::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff'],
    ],
    ['2001:1::1/128 port control anycast', ['2001:1::1', '2001:1::2', '2001:1::3']],
    ['2001:2::/48 benchmarking', ['2001:2::', '2001:2:0:ffff::1']],
    ['2001:3::/32 AMT', ['2001:3::1']],
    ['2001:4:112::/48 AS112-v6', ['2001:4:112::1']],
    ['2001:10::/28 ORCHID (deprecated)', ['2001:10::1']],
    ['2001:20::/28 ORCHIDv2', ['2001:20::1', '2001:2f:ffff::1']],
    ['2001:30::/28 drone remote ID', ['2001:30::1']],
    ['2001:db8::/32 documentation', ['2001:db8::', '2001:db8::1', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff']],
    [
      '2002::/16 6to4',
      ['2002::', '2002:7f00:1::1', '2002:a9fe:a9fe::1', '2002:808:808::1', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    ],
    ['2620:4f:8000::/48 direct AS112', ['2620:4f:8000::1']],
    ['3fff::/20 documentation', ['3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff']],
    ['5f00::/16 segment routing', ['5f00::', '5f00:ffff::1']],
    ['fc00::/7 unique-local', ['fc00::', 'fd00::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
    ['fe80::/10 link-local', ['fe80::', 'fe80::1', 'fe80::1%eth0', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
    ['fec0::/10 site-local (deprecated)', ['fec0::1']],
    ['ff00::/8 multicast', ['ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
    ['outside 2000::/3 (unassigned IPv6)', ['4000::1', '1::1', 'e000::1']],
    ['not an address', ['not an ip', '', 'example.com', '127.1', '0x7f000001']],
  ];
  for (const [range, addresses] of SPECIAL) {
    it(`refuses ${range}`, async () => {
      for (const a of addresses) assert.equal(isForbiddenAddress(a), true, a);
    });
  }

  it('allows global unicast addresses, at the edges of the special ranges too', async () => {
    for (const a of [
      '93.184.216.34',
      '8.8.8.8',
      '1.1.1.1',
      '9.255.255.255',
      '11.0.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.0.1.255',
      '192.0.3.0',
      '192.88.98.255',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '2001:200::1',
      '2003::1',
      '3ffe::1',
      '3fff:1000::1',
    ]) {
      assert.equal(isForbiddenAddress(a), false, a);
    }
  });

  let site: TestHttp;
  let base: SafeFetchOptions;
  before(async () => {
    site = await startHttp((req, res) => {
      const port = new URL(site.url).port;
      if (req.url === '/hop') return void res.writeHead(302, { location: '/page' }).end();
      if (req.url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
      if (req.url === '/to-other-loopback')
        return void res.writeHead(302, { location: `http://127.0.0.2:${port}/page` }).end();
      if (req.url === '/to-6to4')
        return void res.writeHead(302, { location: `http://[2002:7f00:1::1]:${port}/page` }).end();
      if (req.url === '/to-mapped')
        return void res.writeHead(301, { location: `http://[::ffff:127.0.0.1]:${port}/page` }).end();
      if (req.url === '/big') return void res.writeHead(200, { 'content-type': 'text/html' }).end('x'.repeat(5000));
      if (req.url === '/slow') return; // never answers
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<p>hello</p>');
    });
    base = { allowPrivateNetworks: true, maxRedirects: 3, maxBytes: 4096, timeoutMs: 5000 }; // generous: a loaded machine resolves localhost slowly
  });
  after(() => site.close());

  it('refuses loopback targets unless allowed, by literal and by name', async () => {
    const strict = { ...base, allowPrivateNetworks: false };
    await assert.rejects(
      safeFetch(`${site.url}/page`, strict),
      (e) => e instanceof ProviderError && !e.retryable && /refused/.test(e.message),
    );
    await assert.rejects(
      safeFetch(`${site.url.replace('127.0.0.1', 'localhost')}/page`, strict),
      (e) => e instanceof ProviderError && /refused/.test(e.message),
    );
    await assert.rejects(
      safeFetch('file:///etc/passwd', base),
      (e) => e instanceof ProviderError && /file:/.test(e.message),
    );
    const page = await safeFetch(`${site.url}/page`, base);
    assert.equal(page.status, 200);
    assert.equal(page.body, '<p>hello</p>');
  });

  it('follows redirects up to the limit and checks every hop', async () => {
    const page = await safeFetch(`${site.url}/hop`, base);
    assert.equal(page.url, `${site.url}/page`);
    await assert.rejects(safeFetch(`${site.url}/hop`, { ...base, maxRedirects: 0 }), /more than 0 redirects/);
    await assert.rejects(safeFetch(`${site.url}/loop`, base), /more than 3 redirects/);
    // 127.0.0.1 is let through by this policy, the redirect's 127.0.0.2 is not.
    const policy = { ...base, allowPrivateNetworks: false, isForbidden: (a: string) => a === '127.0.0.2' };
    assert.equal((await safeFetch(`${site.url}/page`, policy)).status, 200);
    await assert.rejects(safeFetch(`${site.url}/to-other-loopback`, policy), /refused to fetch 127\.0\.0\.2/);
    // The default classification, with only the test server's own address let through.
    const defaults = {
      ...base,
      allowPrivateNetworks: false,
      isForbidden: (a: string) => a !== '127.0.0.1' && isForbiddenAddress(a),
    };
    await assert.rejects(
      safeFetch(`${site.url}/to-6to4`, defaults),
      (e) => e instanceof ProviderError && !e.retryable && /refused to fetch 2002:7f00:1::1/.test(e.message),
    );
    await assert.rejects(
      safeFetch(`${site.url}/to-mapped`, defaults),
      (e) => e instanceof ProviderError && !e.retryable && /refused to fetch ::ffff:7f00:1/.test(e.message),
    );
  });

  it('limits the size and the time', async () => {
    await assert.rejects(
      safeFetch(`${site.url}/big`, base),
      (e) => e instanceof ProviderError && /larger than 4096/.test(e.message),
    );
    await assert.rejects(
      safeFetch(`${site.url}/slow`, { ...base, timeoutMs: 100 }),
      (e) => e instanceof ProviderError && e.retryable && /longer than 100 ms/.test(e.message),
    );
  });
});

describe('contact finders', () => {
  const prospect = (extra: Partial<ProspectFacts> = {}): ProspectFacts => ({
    id: 'pr_1',
    url: 'https://hikingblog.example/a',
    domain: 'www.hikingblog.example',
    title: null,
    description: null,
    contentExcerpt: null,
    contactPaths: [],
    ...extra,
  });

  it('extracts mailto links, JSON-LD and visible text, not scripts', async () => {
    const html = `<html><head><script type="application/ld+json">{"@context":"https://schema.org","@type":"Person","name":"Eve Editor","jobTitle":"Editor","email":"mailto:eve@hikingblog.example"}</script></head>
      <body><a href="mailto:desk@hikingblog.example?subject=Hi">Write</a><p>Or ping pat&#64;hikingblog.example.</p>
      <script>var x = "hidden@hikingblog.example";</script><img src="logo@2x.png"></body></html>`;
    const found = await extractFromHtml(html, 'https://hikingblog.example/contact');
    const byEmail = Object.fromEntries(found.map((c) => [c.email, c]));
    assert.equal(byEmail['desk@hikingblog.example']?.sourceReference, 'mailto');
    assert.equal(byEmail['eve@hikingblog.example']?.fullName, 'Eve Editor');
    assert.equal(byEmail['eve@hikingblog.example']?.role, 'Editor');
    assert.equal(byEmail['pat@hikingblog.example']?.sourceReference, 'text');
    assert.equal(byEmail['hidden@hikingblog.example'], undefined);
  });

  it('builtin: prefers an address at the prospect domain from a deliberate source', async () => {
    const finder = createBuiltinFinder();
    const found = await finder.find(
      prospect({
        description: 'Contact press@hikingblog.example',
        contactPaths: [{ email: 'someone@gmail.example' }, { url: 'mailto:editor@hikingblog.example', name: 'Ed' }],
      }),
    );
    assert.deepEqual(
      found.map((c) => c.email),
      ['editor@hikingblog.example', 'press@hikingblog.example', 'someone@gmail.example'],
    );
    assert.equal(found[0]!.fullName, 'Ed');
    assert.equal(finder.defers(prospect({ domain: 'a.queued.test' })), true);
    assert.deepEqual(
      await finder.find(prospect({ domain: 'a.notfound.test', contactPaths: [{ email: 'x@a.notfound.test' }] })),
      [],
    );
  });

  let site: TestHttp;
  before(async () => {
    site = await startHttp((req, res) => {
      if (req.url === '/article')
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<p>No address here.</p>');
      if (req.url === '/contact')
        return void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<a href="mailto:editor@hikingblog.example">Email</a>');
      res.writeHead(404).end();
    });
  });
  after(() => site.close());

  it('crawl: fetches the page and the contact paths (relative too) and always defers', async () => {
    const crawl = createCrawlFinder({ allowPrivateNetworks: true, maxRedirects: 2, maxBytes: 10_000, timeoutMs: 1000 });
    const p = prospect({ url: `${site.url}/article`, contactPaths: [{ url: '/contact' }, { url: '/missing' }] });
    assert.equal(crawl.defers(p), true);
    const found = await crawl.find(p);
    assert.equal(found[0]?.email, 'editor@hikingblog.example');
    assert.equal(found[0]?.sourceUrl, `${site.url}/contact`);
    const strict = createCrawlFinder({
      allowPrivateNetworks: false,
      maxRedirects: 2,
      maxBytes: 10_000,
      timeoutMs: 1000,
    });
    await assert.rejects(strict.find(p), (e) => e instanceof ProviderError && !e.retryable);
  });
});

describe('verifiers', () => {
  const dnsError = (code: string) => Object.assign(new Error(code), { code });

  it('builtin: magic domains, syntax, disposable domains, then DNS', async () => {
    const lookups: string[] = [];
    const answers: Record<string, () => Promise<{ exchange: string; priority: number }[]>> = {
      'mx.example': async () => [{ exchange: 'mail.mx.example', priority: 10 }],
      'nullmx.example': async () => [{ exchange: '', priority: 0 }],
      'nxdomain.example': async () => Promise.reject(dnsError('ENOTFOUND')),
      'a-only.example': async () => Promise.reject(dnsError('ENODATA')),
      'nothing.example': async () => Promise.reject(dnsError('ENODATA')),
      'servfail.example': async () => Promise.reject(dnsError('ESERVFAIL')),
      'silent.example': () => new Promise(() => {}),
    };
    const verifier = createBuiltinVerifier({
      dnsTimeoutMs: 50,
      resolveMx: (domain) => {
        lookups.push(domain);
        return answers[domain]!();
      },
      hasAddress: async (domain) => domain === 'a-only.example',
    });
    const expected: Record<string, string> = {
      'a@valid.test': 'valid',
      'a@sub.invalid.test': 'invalid',
      'a@risky.test': 'risky',
      'a@unknown.test': 'unknown',
      'no-at-sign': 'invalid',
      'a@b': 'invalid',
      'x@yopmail.com': 'risky',
      'a@mx.example': 'valid',
      'a@nullmx.example': 'invalid',
      'a@nxdomain.example': 'invalid',
      'a@a-only.example': 'risky',
      'a@nothing.example': 'invalid',
      'a@servfail.example': 'unknown',
      'a@silent.example': 'unknown',
    };
    for (const [email, status] of Object.entries(expected))
      assert.equal((await verifier.verify(email)).status, status, email);
    assert.ok(
      !lookups.some((d) => d.endsWith('.test') || d === 'yopmail.com'),
      'no DNS for magic or disposable domains',
    );
  });

  it('http: GETs with the address in the URL when it has {email}', async () => {
    const service = await startHttp((_req, res) => sendJson(res, 200, { result: 'undeliverable' }));
    try {
      const config = loadConfig(undefined, {}, { 'verifier.httpUrl': `${service.url}/check?address={email}` });
      const result = await createHttpVerifier(config.verifier, { VERIFIER_API_KEY: 'vk' }).verify('a+b@example.com');
      assert.equal(result.status, 'invalid');
      assert.equal(service.requests[0]!.method, 'GET');
      assert.equal(service.requests[0]!.url, '/check?address=a%2Bb%40example.com');
      assert.equal(service.requests[0]!.headers.authorization, 'Bearer vk');
    } finally {
      await service.close();
    }
  });
});
