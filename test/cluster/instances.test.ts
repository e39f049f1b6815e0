/**
 * The multi-instance topology of decisions.md §16 (issue #20), all of it real: three `serve`
 * processes (the bundle, as test/helpers/cli.ts starts it) on one PostgreSQL database and one
 * Redis, behind a real nginx running the shipped deploy/nginx.conf (test/helpers/nginx.ts), with
 * `providers.mail: smtp` to a local SMTP sink and every instance's workers running.
 *
 * On the shared servers (a database and a Redis key prefix of this file's own):
 * - the three start at once on the empty database: one migrates, the others wait, all come up;
 * - the §9 limit holds across them: of 150 concurrent requests with one token through nginx,
 *   spread over the three, exactly 100 are served, each with its own place in the one window;
 * - concurrent requests with one idempotency key through nginx run once (one reply queued and
 *   delivered once); the others are 409 while it runs or its stored answer after;
 * - a token revoked with `outreach-api tokens revoke` is refused by every instance at its next
 *   request;
 * - each reply is delivered once with the outbox workers of all three polling;
 * - one instance killed with `kill -9` mid-load while it is sending a reply: requests go on
 *   through nginx, the reply it held is sent by another once its lease (`workers.leaseMs`, short
 *   here) ran out, and every reply acknowledged (202) is delivered, once.
 *
 * On a PostgreSQL cluster and a redis-server of this file's own (the shared ones are never
 * stopped): Redis stopped (requests still served, each instance on its own window) and started
 * again (back on Redis by itself); PostgreSQL stopped (503 `SERVICE_UNAVAILABLE` with
 * `Retry-After` within `db.statementTimeoutMs`, `/readyz` 503 `NOT_READY`, no crash) and started
 * again (serving, and delivering, by itself).
 *
 * Skipped in one line each where PostgreSQL, Redis or nginx is missing (failing under `CI`).
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ROOT } from '../../build/bundle.js';
import { openStore, type Store } from '../../src/db/connection.js';
import { importDocument } from '../../src/import/index.js';
import { createToken } from '../../src/repos/tokens.js';
import { cliProcess, serveProcess, type ServeProcess } from '../helpers/cli.js';
import { startNginx, type Nginx } from '../helpers/nginx.js';
import { until } from '../helpers/ports.js';
import {
  createTestDatabase,
  REDIS_URL,
  redisKeyPrefix,
  serviceSkip,
  startThrowawayPostgres,
  startThrowawayRedis,
  type TestDatabase,
  type ThrowawayPostgres,
  type ThrowawayRedis,
} from '../helpers/services.js';
import { sqlAll } from '../helpers/sql.js';
import { startSmtp, type TestSmtp, writesFixture } from '../writes/helpers.js';

const API = '/api/public/v1';
const REPLIES = `${API}/projects/prj_a1/sites/site_a1/threads/thr_a1/replies`;
/**
 * `workers.leaseMs` here: short, so that a killed instance's reply is taken over within the test.
 * The config wants it at least twice every provider timeout (`PROVIDER_TIMEOUT_MS`).
 */
const LEASE_MS = 6000;
const PROVIDER_TIMEOUT_MS = LEASE_MS / 2;
/** `db.statementTimeoutMs` here: the bound on an answer while PostgreSQL is down. */
const STATEMENT_TIMEOUT_MS = 2000;

/** The first service of `services` that is missing, as `serviceSkip` words it, or false. */
async function missing(...services: ('postgres' | 'redis' | 'nginx')[]): Promise<string | false> {
  for (const service of services) {
    const reason = await serviceSkip(service);
    if (reason) return reason;
  }
  return false;
}

interface Cluster {
  instances: ServeProcess[];
  nginx: Nginx;
  /** The test's own connection to the database, for the fixture and for assertions. */
  store: Store;
  smtp: TestSmtp;
  /** The instances that have exited (none should, but the one the test kills). */
  exited: Set<ServeProcess>;
  /** Tokens of acct_a (outreach:send, projects:read) by name, and their ids. */
  tokens: Record<string, { token: string; id: string }>;
  stop(): Promise<void>;
}

/**
 * Three `serve` processes on `dbUrl` (empty: they migrate it, all started at once) and the Redis
 * at `redisUrl` under `keyPrefix`, sending mail to a new SMTP sink, behind nginx; then the write
 * tests' dataset imported (test/writes/helpers.ts) and one token per name of `tokenNames`.
 */
async function startCluster(
  dbUrl: string,
  redisUrl: string,
  keyPrefix: string,
  tokenNames: string[],
): Promise<Cluster> {
  const smtp = await startSmtp();
  const env = {
    OUTREACH_API_LIMITS_STORE: 'redis',
    OUTREACH_API_REDIS_URL: redisUrl,
    OUTREACH_API_REDIS_KEY_PREFIX: keyPrefix,
    // A loaded machine must not turn a slow answer into a fallback (a stopped Redis refuses at once).
    OUTREACH_API_REDIS_TIMEOUT_MS: '5000',
    OUTREACH_API_DB_POOL_SIZE: '4',
    OUTREACH_API_DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    OUTREACH_API_WORKERS_LEASE_MS: String(LEASE_MS),
    OUTREACH_API_SMTP_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
    OUTREACH_API_OPENAI_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
    OUTREACH_API_VERIFIER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
    OUTREACH_API_CRAWL_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
    OUTREACH_API_MONITOR_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
    OUTREACH_API_OUTBOX_POLL_INTERVAL_MS: '200',
    OUTREACH_API_PROVIDERS_MAIL: 'smtp',
    OUTREACH_API_SMTP_HOST: '127.0.0.1',
    OUTREACH_API_SMTP_PORT: String(smtp.port),
    OUTREACH_API_METRICS_ENABLED: 'true',
    OUTREACH_API_SERVER_TRUST_PROXY: '127.0.0.1',
    OUTREACH_API_LOG_LEVEL: 'info',
  };
  const started = await Promise.allSettled(
    [1, 2, 3].map(() => serveProcess(['--db', dbUrl, 'serve', '--port', '0'], env)),
  );
  const instances = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  const exited = new Set<ServeProcess>();
  for (const instance of instances) void instance.exited.then(() => exited.add(instance));
  let nginx: Nginx | undefined;
  let store: Store | undefined;
  const stop = async () => {
    await nginx?.stop();
    await Promise.all(instances.map((instance) => instance.close()));
    await store?.close();
    await smtp.close();
  };
  try {
    if (failed) throw (failed as PromiseRejectedResult).reason;
    nginx = await startNginx(instances.map((instance) => new URL(instance.origin).host));
    store = await openStore(dbUrl, { poolSize: 2 });
    const now = new Date().toISOString();
    await importDocument(store, writesFixture(), { nowIso: now });
    const tokens: Cluster['tokens'] = {};
    for (const name of tokenNames) {
      const { row, token } = await createToken(
        store.db,
        { accountId: 'acct_a', name, scopes: ['outreach:send', 'projects:read'], expiresAt: null },
        now,
      );
      tokens[name] = { token, id: row.id };
    }
    return { instances, nginx, store, smtp, exited, tokens, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** `GET path` at `origin` with `token`, timed; the body parsed when JSON. */
async function get(origin: string, path: string, token?: string, agent = 'cluster-test') {
  const started = performance.now();
  const res = await fetch(`${origin}${path}`, {
    headers: { 'user-agent': agent, ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  const text = await res.text();
  const ms = performance.now() - started;
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body, ms };
}

/** A reply to thr_a1 with `text` and idempotency key `key`, through `origin`. */
async function reply(origin: string, token: string, text: string, key: string) {
  const res = await fetch(`${origin}${REPLIES}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ body: text, idempotencyKey: key }),
  });
  const body = (await res.json().catch(() => null)) as any;
  return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', body };
}

/** The access-log lines of `instance` whose user agent is `agent`. */
function accessLines(instance: ServeProcess, agent: string): { status: number }[] {
  return instance
    .stdout()
    .split('\n')
    .filter((line) => line.includes(`"userAgent":"${agent}"`))
    .map((line) => JSON.parse(line) as { status: number });
}

/** How many accepted messages of the sink contain `text`. */
const deliveries = (smtp: TestSmtp, text: string) => smtp.received.filter((mail) => mail.raw.includes(text)).length;

/** `status` and `attempts` of the outbound messages whose body starts with `prefix`, by body. */
async function outboundRows(store: Store, prefix: string): Promise<Map<string, { status: string; attempts: number }>> {
  const rows = await sqlAll<{ body: string; status: string; attempts: number }>(
    store,
    "SELECT body, status, attempts FROM thread_messages WHERE direction = 'outbound' AND body LIKE ?",
    `${prefix}%`,
  );
  return new Map(rows.map((r) => [r.body, { status: r.status, attempts: Number(r.attempts) }]));
}

/** Resolves once every message of `bodies` is `sent` in the database (nothing of them is left to send). */
async function allSent(store: Store, prefix: string, bodies: Iterable<string>, timeoutMs: number): Promise<void> {
  const wanted = [...bodies];
  await until(
    async () => {
      const rows = await outboundRows(store, prefix);
      return wanted.every((body) => rows.get(body)?.status === 'sent');
    },
    `${wanted.length} replies sent`,
    timeoutMs,
    100,
  );
}

/** A counter's value in the Prometheus text of `instance`'s /metrics (0 when absent). */
async function metric(instance: ServeProcess, series: string): Promise<number> {
  const { body } = await get(instance.origin, '/metrics');
  const line = (body as string).split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('three instances on one PostgreSQL database and one Redis, behind nginx', () => {
  let skip: string | false = false;
  let database: TestDatabase;
  let cluster: Cluster;
  const keyPrefix = redisKeyPrefix('cluster');
  before(async () => {
    skip = await missing('postgres', 'redis', 'nginx');
    if (skip) return;
    database = await createTestDatabase('cluster');
    cluster = await startCluster(database.url, REDIS_URL, keyPrefix, [
      'limiter',
      'writes',
      'revoked',
      'load-writes',
      'load-reads',
      'resends',
    ]);
  });
  after(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  it('comes up with all three started at once on the empty database, migrated once', async (t) => {
    if (skip) return t.skip(skip);
    const versions = await sqlAll<{ version: number }>(cluster.store, 'SELECT version FROM schema_migrations');
    const files = readdirSync(join(ROOT, 'sql/postgres')).filter((f) => f.endsWith('.sql'));
    assert.deepEqual(
      versions.map((v) => Number(v.version)).sort((a, b) => a - b),
      files.map((f) => Number(f.slice(0, 4))).sort((a, b) => a - b),
      'every migration applied, each once',
    );
    for (const instance of cluster.instances) assert.equal((await get(instance.origin, '/readyz')).status, 200);
  });

  it('serves exactly 100 of 150 concurrent requests of one token spread over the three by nginx', async (t) => {
    if (skip) return t.skip(skip);
    const { token } = cluster.tokens.limiter!;
    const answers = await Promise.all(
      Array.from({ length: 150 }, () => get(cluster.nginx.origin, `${API}/me`, token, 'limiter')),
    );
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    assert.deepEqual([served.length, refused.length], [100, 50], `statuses: ${answers.map((a) => a.status)}`);
    assert.deepEqual(
      served.map((a) => Number(a.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i),
      'each served request had its own place in the one window',
    );
    for (const a of answers) {
      assert.equal(a.headers.get('x-ratelimit-limit'), '100');
      assert.equal(a.headers.get('ratelimit-policy'), '"default";q=100;w=60');
    }
    for (const a of refused) {
      assert.equal(a.body.error.code, 'RATE_LIMIT_EXCEEDED');
      assert.equal(a.headers.get('x-ratelimit-remaining'), '0');
      assert.match(a.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    }
    // Each instance logs its requests after answering them.
    await until(
      () => cluster.instances.reduce((n, instance) => n + accessLines(instance, 'limiter').length, 0) === 150,
      'the 150 access-log lines',
    );
    const spread = cluster.instances.map((instance) => {
      const lines = accessLines(instance, 'limiter');
      return { all: lines.length, served: lines.filter((l) => l.status === 200).length };
    });
    t.diagnostic(`requests (served) per instance: ${spread.map((s) => `${s.all} (${s.served})`).join(', ')}`);
    // Which of them met the full window depends on the order their checks reached Redis.
    assert.ok(
      spread.every((s) => s.all > 0),
      'nginx spread the token’s requests over the three',
    );
    assert.ok(spread.filter((s) => s.served > 0).length >= 2, 'the 100 served came from more than one instance');
    for (const instance of cluster.instances)
      assert.doesNotMatch(instance.stdout(), /rate limiter:/, 'no instance fell back to its own window');
  });

  it('runs concurrent requests with one idempotency key once, whichever instance each reaches', async (t) => {
    if (skip) return t.skip(skip);
    const { token } = cluster.tokens.writes!;
    const text = 'One reply for one key, on three instances.';
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => reply(cluster.nginx.origin, token, text, 'cluster-one-key')),
    );
    const statuses = answers.map((a) => a.status);
    assert.ok(
      statuses.every((s) => s === 202 || s === 409),
      `only the run, its replays and 409 while it ran: ${statuses}`,
    );
    assert.equal(answers.filter((a) => a.status === 202 && !a.replayed).length, 1, 'one execution');
    for (const a of answers.filter((a) => a.status === 409)) assert.equal(a.body.error.code, 'IDEMPOTENCY_CONFLICT');
    const later = await reply(cluster.nginx.origin, token, text, 'cluster-one-key');
    assert.deepEqual([later.status, later.replayed], [202, true], 'the stored answer after');
    assert.deepEqual([...(await outboundRows(cluster.store, text)).keys()], [text], 'one reply queued');
    await allSent(cluster.store, text, [text], 20_000);
    assert.equal(deliveries(cluster.smtp, text), 1, 'delivered once');
  });

  it('refuses a token revoked with `tokens revoke` on every instance from the next request', async (t) => {
    if (skip) return t.skip(skip);
    const { token, id } = cluster.tokens.revoked!;
    // Each instance has served the token (anything it might keep of it is warm).
    for (const instance of cluster.instances)
      assert.equal((await get(instance.origin, `${API}/me`, token)).status, 200);
    const revoked = await cliProcess(['--db', database.url, 'tokens', 'revoke', id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    for (const instance of cluster.instances) {
      const after = await get(instance.origin, `${API}/me`, token);
      assert.equal(after.status, 401, `${instance.origin} after the revocation`);
      assert.equal(after.body.error.code, 'UNAUTHORIZED');
    }
    for (let i = 0; i < 3; i++) assert.equal((await get(cluster.nginx.origin, `${API}/me`, token)).status, 401);
  });

  it('delivers each reply once with the outbox workers of all three running', async (t) => {
    if (skip) return t.skip(skip);
    const { token } = cluster.tokens.writes!;
    const sentBefore = await Promise.all(
      cluster.instances.map((i) => metric(i, 'outreach_outbox_deliveries_total{result="sent"}')),
    );
    const bodies = Array.from({ length: 24 }, (_, i) => `Delivered once, reply ${i} of the cluster test.`);
    const answers = await Promise.all(
      bodies.map((text, i) => reply(cluster.nginx.origin, token, text, `cluster-once-${i}`)),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      bodies.map(() => 202),
    );
    await allSent(cluster.store, 'Delivered once, reply ', bodies, 30_000);
    assert.deepEqual(
      bodies.map((text) => deliveries(cluster.smtp, text)),
      bodies.map(() => 1),
      'each reply sent once',
    );
    const rows = await outboundRows(cluster.store, 'Delivered once, reply ');
    assert.deepEqual(
      bodies.map((text) => rows.get(text)?.attempts),
      bodies.map(() => 1),
      'each in one attempt',
    );
    const sentBy = (
      await Promise.all(cluster.instances.map((i) => metric(i, 'outreach_outbox_deliveries_total{result="sent"}')))
    ).map((n, i) => n - sentBefore[i]!);
    t.diagnostic(`replies sent per instance: ${sentBy.join(', ')}`);
    assert.equal(
      sentBy.reduce((a, b) => a + b, 0),
      bodies.length,
      'the instances counted one send per reply',
    );
  });

  it('goes on through nginx when an instance sending a reply is killed with kill -9; its reply is sent by another after the lease, and every acknowledged reply once', async (t) => {
    if (skip) return t.skip(skip);
    const { smtp, nginx, store } = cluster;
    const victim = cluster.instances[2]!;
    const prefix = 'Failover reply ';
    const acknowledged = new Map<string, string>(); // idempotency key → body
    const unanswered = new Map<string, { body: string; status: number }>();
    const reads: number[] = [];
    const afterKill: number[] = [];
    let dead = false;
    let n = 0;
    /** The reply the killed instance was sending when it died. */
    let victims: string | undefined;
    const post = async () => {
      const i = n++;
      const key = `cluster-failover-${i}`;
      const text = `${prefix}${i} of the cluster test.`;
      const diedBefore = dead;
      const { status } = await reply(nginx.origin, cluster.tokens['load-writes']!.token, text, key);
      if (status === 202) acknowledged.set(key, text);
      else unanswered.set(key, { body: text, status });
      if (diedBefore) afterKill.push(status);
    };
    const read = async () =>
      reads.push((await get(nginx.origin, `${API}/me`, cluster.tokens['load-reads']!.token)).status);

    // The relay holds every message: each instance's worker is soon mid-send on one reply.
    let release!: () => void;
    smtp.hold = new Promise((resolve) => (release = resolve));
    let stopAt = 30; // batches: at most 60 writes and 60 reads, under each token's 100 a minute
    let batches = 0;
    const load = (async () => {
      while (batches < stopAt) {
        await Promise.all([post(), post(), read(), read()]);
        batches++;
      }
    })();
    try {
      await until(() => smtp.held.length === 3, 'each of the three instances to be mid-send', 15_000);
      victim.kill('SIGKILL');
      await victim.exited;
      dead = true;
      await until(() => smtp.held.some((m) => m.abandoned), 'the killed instance’s connection to close', 5000);
      const abandoned = smtp.held.find((m) => m.abandoned)!;
      victims = new RegExp(`${prefix}\\d+ of the cluster test\\.`).exec(abandoned.raw)?.[0];
    } finally {
      smtp.hold = undefined;
      release();
    }
    assert.ok(victims, 'the message the killed instance was sending is one of the load’s replies');
    stopAt = Math.min(stopAt, batches + 5);
    await load;
    t.diagnostic(`load: ${n} writes, ${reads.length} reads; ${unanswered.size} writes unanswered`);

    assert.ok(
      reads.every((s) => s === 200),
      `every read answered, by another instance when needed: ${reads}`,
    );
    assert.ok(afterKill.length > 0, 'writes were sent after the kill');
    assert.ok(
      afterKill.every((s) => s === 202),
      `every write sent after the kill reached a live instance: ${afterKill}`,
    );
    // A write the killed instance had received when it died: nginx does not send it again (it
    // may have run), and answers its own 503; the client sends it again with its key.
    for (const { status } of unanswered.values()) assert.equal(status, 503);
    for (const [key, { body }] of unanswered) {
      await until(
        async () => (await reply(nginx.origin, cluster.tokens.resends!.token, body, key)).status === 202,
        `a 202 for ${key} sent again (409 while the killed instance's claim holds it: one lease)`,
        LEASE_MS * 3,
        500,
      );
      acknowledged.set(key, body);
    }

    await allSent(store, prefix, acknowledged.values(), LEASE_MS * 5);
    const rows = await outboundRows(store, prefix);
    assert.deepEqual(
      [...rows.keys()].sort(),
      [...acknowledged.values()].sort(),
      'a reply in the database for every acknowledged write, and no other',
    );
    assert.deepEqual(
      [...acknowledged.values()].filter((text) => deliveries(smtp, text) !== 1),
      [],
      'every acknowledged reply delivered once',
    );
    assert.equal(rows.get(victims)?.attempts, 2, 'the killed instance’s reply was taken over: a second attempt');
  });
});

describe('three instances behind nginx while PostgreSQL and Redis stop and start again', () => {
  let skip: string | false = false;
  let postgres: ThrowawayPostgres | undefined;
  let redis: ThrowawayRedis | undefined;
  let cluster: Cluster;
  const keyPrefix = redisKeyPrefix('cluster-outage');
  before(async () => {
    skip = await missing('postgres', 'redis', 'nginx');
    if (skip) return;
    [postgres, redis] = await Promise.all([startThrowawayPostgres(), startThrowawayRedis()]);
    cluster = await startCluster(postgres.url, redis.url, keyPrefix, ['reads', 'writes']);
  });
  after(async () => {
    await cluster?.stop();
    await redis?.stop();
    await postgres?.destroy();
  });

  /** The instances' limiter keys in the test's Redis (a check on Redis adds one; a fallback check none). */
  const limiterKeys = async () => {
    const client = new Redis(redis!.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      return (await client.keys(`${keyPrefix}ratelimit:*`)).length;
    } finally {
      client.disconnect();
    }
  };

  it('serves while Redis is down, each instance on its own window, and goes back to Redis by itself', async (t) => {
    if (skip) return t.skip(skip);
    const { token } = cluster.tokens.reads!;
    const origins = [cluster.nginx.origin, ...cluster.instances.map((i) => i.origin)];
    for (const origin of origins) assert.equal((await get(origin, `${API}/me`, token)).status, 200);
    assert.equal(await limiterKeys(), 1, 'the window is in Redis');

    await redis!.stop();
    for (let round = 0; round < 2; round++)
      for (const origin of origins) {
        const res = await get(origin, `${API}/me`, token);
        assert.equal(res.status, 200, `${origin} with Redis down`);
        assert.equal(res.headers.get('x-ratelimit-limit'), '100', 'the headers as always');
      }
    for (const instance of cluster.instances) {
      assert.equal(
        instance.stdout().match(/Redis cannot be reached/g)?.length,
        1,
        'the fallback logged once per instance',
      );
      assert.ok((await metric(instance, 'outreach_rate_limit_fallback_checks_total')) >= 2, 'and counted');
      assert.equal(await metric(instance, 'outreach_rate_limit_redis_up'), 0);
    }

    await redis!.start(); // empty, on the same port
    await until(
      () => cluster.instances.every((instance) => instance.stdout().includes('Redis answers again')),
      'every instance back on Redis',
      15_000,
      50,
    );
    for (const instance of cluster.instances) {
      assert.equal((await get(instance.origin, `${API}/me`, token)).status, 200);
      assert.equal(await metric(instance, 'outreach_rate_limit_redis_up'), 1);
    }
    assert.equal(await limiterKeys(), 1, 'their checks counted in Redis again');
  });

  it('answers 503 with Retry-After within db.statementTimeoutMs while PostgreSQL is down, and serves again by itself', async (t) => {
    if (skip) return t.skip(skip);
    const { token } = cluster.tokens.reads!;
    const writer = cluster.tokens.writes!.token;
    assert.equal((await get(cluster.nginx.origin, `${API}/projects`, token)).status, 200);

    await postgres!.stop();
    const stoppedAt = performance.now();
    const answers: { where: string; ms: number }[] = [];
    for (const instance of cluster.instances) {
      for (const path of [`${API}/projects`, `${API}/me`]) {
        const res = await get(instance.origin, path, token);
        assert.equal(res.status, 503, `${path} on ${instance.origin}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error.code, 'SERVICE_UNAVAILABLE');
        assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
        answers.push({ where: `${instance.origin}${path}`, ms: res.ms });
      }
      const posted = await reply(instance.origin, writer, 'Sent while PostgreSQL is down.', `down-${instance.origin}`);
      assert.equal(posted.status, 503, JSON.stringify(posted.body));
      const ready = await get(instance.origin, '/readyz');
      assert.deepEqual([ready.status, ready.body.error?.code], [503, 'NOT_READY']);
      assert.doesNotMatch(JSON.stringify(ready.body), /127\.0\.0\.1|ECONN|postgres/i, 'no internals');
      answers.push({ where: `${instance.origin}/readyz`, ms: ready.ms });
      assert.equal((await get(instance.origin, '/healthz')).status, 200, 'the process is alive');
    }
    for (let i = 0; i < 3; i++) {
      const res = await get(cluster.nginx.origin, `${API}/projects`, token);
      assert.equal(res.status, 503, 'through nginx: an instance’s 503, or nginx’s own once it gave up on them');
      assert.equal(res.body.error.code, 'SERVICE_UNAVAILABLE');
      assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      answers.push({ where: 'nginx', ms: res.ms });
    }
    const slowest = answers.reduce((a, b) => (b.ms > a.ms ? b : a));
    t.diagnostic(`slowest answer while down: ${Math.round(slowest.ms)} ms (${slowest.where})`);
    assert.ok(
      slowest.ms < STATEMENT_TIMEOUT_MS,
      `every answer within db.statementTimeoutMs: ${slowest.where} ${slowest.ms} ms`,
    );
    t.diagnostic(`down for ${Math.round(performance.now() - stoppedAt)} ms`);

    await postgres!.start();
    const restarted = performance.now();
    await until(
      async () => (await get(cluster.nginx.origin, `${API}/projects`, token)).status === 200,
      'nginx to serve again',
      30_000,
      200,
    );
    for (const instance of cluster.instances) {
      await until(async () => (await get(instance.origin, '/readyz')).status === 200, 'ready again', 15_000, 100);
      assert.equal((await get(instance.origin, `${API}/projects`, token)).status, 200);
    }
    t.diagnostic(`all serving ${Math.round(performance.now() - restarted)} ms after the restart`);
    const text = 'Sent once PostgreSQL is back.';
    assert.equal((await reply(cluster.nginx.origin, writer, text, 'after-restart')).status, 202);
    await allSent(cluster.store, text, [text], 20_000);
    assert.equal(deliveries(cluster.smtp, text), 1, 'the workers deliver again');
    assert.equal(cluster.exited.size, 0, 'no instance crashed');
  });
});
