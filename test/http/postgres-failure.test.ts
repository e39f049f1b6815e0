/**
 * PostgreSQL out of reach (decisions.md §16 "Failures"): the server reaches a real PostgreSQL
 * through a TCP relay that the test cuts and restores. While it is cut, `/readyz` answers 503
 * `NOT_READY` and requests 503 `SERVICE_UNAVAILABLE` with `Retry-After`, each within a bound set
 * by `db.statementTimeoutMs` (never a hang, a 500 or a crash); once it is restored, the instance
 * serves again by itself.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/logger.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { serviceSkip, type TestDatabase } from '../helpers/services.js';
import { smallPostgresDatabase } from '../helpers/stores.js';
/** The store's statement limit here, ms; the bounds below leave several times that for a busy machine. */
const STATEMENT_TIMEOUT_MS = 1000;
const BOUND_MS = 15_000;

/** A TCP relay to `target` that the test can cut (open connections reset, new ones left hanging) and restore. */
function relay(target: { host: string; port: number }) {
  let cut = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (cut) return; // a black hole: accepted, never answered
    const upstream = connect(target);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  return {
    server,
    listen: () =>
      new Promise<number>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
      ),
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// No top-level await: it can resume outside the file's suite when the unit shards load several
// files at once (node:test finds the suite from the async context). The check runs in \`before\`.
describe('PostgreSQL out of reach', () => {
  let skip: string | false = false;
  let database: TestDatabase;
  let link: ReturnType<typeof relay>;
  let server: RunningServer;
  let token: string;
  before(async () => {
    skip = await serviceSkip('postgres');
    if (skip) return;
    const clock = new FakeClock();
    ({ database, token } = await smallPostgresDatabase('failure', ['projects:read'], isoAt(clock.now())));
    const url = new URL(database.url);
    link = relay({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${await link.listen()}`;
    const config = loadConfig(
      undefined,
      {},
      {
        db: url.toString(),
        'db.statementTimeoutMs': STATEMENT_TIMEOUT_MS,
        'db.poolSize': 4,
        'server.port': 0,
        'limits.requestsPerMinute': 0,
      },
    );
    server = await startServer({ config, clock, logger: silentLogger });
  });
  after(async () => {
    await server?.close();
    await link?.close();
    await database?.drop();
  });

  const timed = async (path: string, headers: Record<string, string> = {}) => {
    const started = performance.now();
    const res = await fetch(`${server.origin}${path}`, { headers });
    return { res, body: (await res.json()) as any, ms: performance.now() - started };
  };
  const projects = () => timed('/api/public/v1/projects', { authorization: `Bearer ${token}` });

  it('answers 503 within its bound while the server is out of reach, and serves again once it is back', async (t) => {
    if (skip) return t.skip(skip);
    assert.equal((await timed('/readyz')).res.status, 200);
    assert.equal((await projects()).res.status, 200);

    link.cut();
    for (let i = 0; i < 3; i++) {
      const { res, body, ms } = await projects();
      assert.equal(res.status, 503, JSON.stringify(body));
      assert.equal(body.error.code, 'SERVICE_UNAVAILABLE');
      assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.ok(ms < BOUND_MS, `answered in ${Math.round(ms)} ms`);
      assert.doesNotMatch(JSON.stringify(body), /127\.0\.0\.1|ECONN|timeout exceeded|postgres/i, 'no internals');
    }
    const notReady = await timed('/readyz');
    assert.equal(notReady.res.status, 503);
    assert.equal(notReady.body.error.code, 'NOT_READY');
    assert.ok(notReady.ms < BOUND_MS, `readyz answered in ${Math.round(notReady.ms)} ms`);
    assert.equal((await timed('/healthz')).res.status, 200, 'the process is alive');

    link.restore();
    const deadline = performance.now() + 30_000;
    let ready = 0;
    while (performance.now() < deadline && (ready = (await timed('/readyz')).res.status) !== 200)
      await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(ready, 200, 'ready again by itself');
    assert.equal((await projects()).res.status, 200);
  });
});
