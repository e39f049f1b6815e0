/**
 * The shipped deploy/nginx.conf (decisions.md §16 "What ships"), run by a real nginx in front of
 * real instances: what the load balancer itself does. (What the instances share through
 * PostgreSQL and Redis behind it is test/cluster/instances.test.ts.)
 *
 * - Round robin, and the X-Forwarded-* headers it sets: an echo server behind it shows the headers
 *   and that its connections are reused (keep-alive); two `serve` processes show the requests
 *   alternating and the client's address in the access log, believed from `server.trustProxy`.
 * - Passive failover: with one instance killed (`kill -9`), GETs and a POST all reach the other;
 *   with none left, the API's own 503 envelope with `Retry-After`, not nginx's HTML page.
 * - A body over the API's limit is refused by the instance (its 413 envelope), not by nginx.
 *
 * Each `serve` serves its own in-memory demo data: the balancer is what is tested here.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { DEMO_PROJECT_ID, DEMO_SITE_ID, DEMO_TOKEN } from '../../src/seed/demo.js';
import { serveProcess, type ServeProcess } from '../helpers/cli.js';
import { startNginx, type Nginx } from '../helpers/nginx.js';
import { until } from '../helpers/ports.js';
import { serviceSkip } from '../helpers/services.js';

const skip = await serviceSkip('nginx');
const auth = { authorization: `Bearer ${DEMO_TOKEN}` };

/** Access-log lines of `instance` whose user agent is `agent` (written after the answer: see `until`). */
function accessLines(instance: ServeProcess, agent: string): { remoteAddr: string; status: number }[] {
  return instance
    .stdout()
    .split('\n')
    .filter((line) => line.includes(`"userAgent":"${agent}"`))
    .map((line) => JSON.parse(line) as { remoteAddr: string; status: number });
}

describe('deploy/nginx.conf in front of an echo server', { skip }, () => {
  let echo: Server;
  let nginx: Nginx;
  const seen: { headers: Record<string, string | string[] | undefined>; socket: unknown }[] = [];
  before(async () => {
    echo = createServer((req, res) => {
      seen.push({ headers: req.headers, socket: req.socket });
      res.end('ok');
    });
    await new Promise<void>((done) => echo.listen(0, '127.0.0.1', done));
    nginx = await startNginx([`127.0.0.1:${(echo.address() as { port: number }).port}`]);
  });
  after(async () => {
    await nginx?.stop();
    echo?.close();
  });

  it('sets X-Forwarded-For (appended), -Proto and -Host, and keeps its connections to the instance open', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${nginx.origin}/api/public/v1/me`, { headers: { 'x-forwarded-for': '203.0.113.7' } });
      assert.equal(await res.text(), 'ok');
    }
    const host = new URL(nginx.origin).host;
    for (const { headers } of seen) {
      assert.equal(headers['x-forwarded-for'], '203.0.113.7, 127.0.0.1', 'the client’s value, then the peer nginx saw');
      assert.equal(headers['x-forwarded-proto'], 'http');
      assert.equal(headers['x-forwarded-host'], host);
      assert.equal(headers.host, host);
      assert.equal(headers.connection, undefined, 'HTTP/1.1 keep-alive, no Connection: close');
    }
    assert.equal(new Set(seen.map((s) => s.socket)).size, 1, 'five requests over one upstream connection');
  });
});

describe('deploy/nginx.conf in front of two serve processes', { skip }, () => {
  const instances: ServeProcess[] = [];
  let nginx: Nginx;
  before(async () => {
    const env = { OUTREACH_API_SERVER_TRUST_PROXY: '127.0.0.1', OUTREACH_API_LOG_LEVEL: 'info' };
    const args = ['serve', '--db', ':memory:', '--demo', '--port', '0'];
    instances.push(...(await Promise.all([1, 2].map(() => serveProcess(args, env)))));
    nginx = await startNginx(instances.map((i) => new URL(i.origin).host));
  });
  after(async () => {
    await nginx?.stop();
    await Promise.all(instances.map((instance) => instance.close()));
  });

  it('sends requests to the instances in turn, and each logs the client nginx forwarded for', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${nginx.origin}/api/public/v1/me`, {
        headers: { ...auth, 'user-agent': 'round-robin', 'x-forwarded-for': '198.51.100.23' },
      });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    const logged = () => instances.reduce((n, instance) => n + accessLines(instance, 'round-robin').length, 0);
    await until(() => logged() === 6, 'the six access-log lines');
    for (const instance of instances) {
      const lines = accessLines(instance, 'round-robin');
      assert.equal(lines.length, 3, 'three of the six requests each');
      for (const line of lines) assert.equal(line.remoteAddr, '198.51.100.23', 'X-Forwarded-For believed from nginx');
    }
  });

  it('leaves a body over limits.maxBodyBytes to the instance: its 413 envelope', async () => {
    const res = await fetch(
      `${nginx.origin}/api/public/v1/projects/${DEMO_PROJECT_ID}/sites/${DEMO_SITE_ID}/threads/thr_demo_003/replies`,
      {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ body: 'x'.repeat(1_200_000), idempotencyKey: 'nginx-too-large-1' }),
      },
    );
    assert.equal(res.status, 413);
    const body = (await res.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'PAYLOAD_TOO_LARGE');
  });

  it('passes over an instance killed with kill -9, for reads and writes; with none left answers 503 in the envelope', async () => {
    const [victim, survivor] = instances;
    victim!.kill('SIGKILL');
    await victim!.exited;
    const earlier = accessLines(survivor!, 'failover').length;
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${nginx.origin}/api/public/v1/me`, { headers: { ...auth, 'user-agent': 'failover' } });
      assert.equal(res.status, 200, 'a refused connection is retried on the other instance');
      await res.arrayBuffer();
    }
    for (let i = 0; i < 2; i++) {
      const res = await fetch(
        `${nginx.origin}/api/public/v1/projects/${DEMO_PROJECT_ID}/sites/${DEMO_SITE_ID}/threads/thr_demo_003/replies`,
        {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', 'user-agent': 'failover' },
          body: JSON.stringify({ body: `Thanks, here is the link (${i}).`, idempotencyKey: `nginx-failover-${i}` }),
        },
      );
      assert.equal(res.status, 202, 'a POST the dead instance never received goes to the other');
      await res.arrayBuffer();
    }
    await until(() => accessLines(survivor!, 'failover').length - earlier === 8, 'the survivor to log all eight');

    survivor!.kill('SIGKILL');
    await survivor!.exited;
    const res = await fetch(`${nginx.origin}/api/public/v1/me`, { headers: auth });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '5');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await res.json()) as { ok: boolean; error: { code: string } };
    assert.deepEqual([body.ok, body.error.code], [false, 'SERVICE_UNAVAILABLE']);
  });
});
