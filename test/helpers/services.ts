/**
 * The real servers some tests need beyond SQLite: PostgreSQL, Redis, Dovecot (IMAP), nginx and
 * Chromium. Tests talk to them for real (no mocks); where one cannot be had, the tests that need
 * it are skipped and the suite says so in one line per service, so a fresh laptop still passes.
 * With `CI` set (`.ci/run` sets it, and installs or starts every one of them), a missing service
 * fails instead: CI never skips.
 *
 *   const skip = await serviceSkip('postgres');
 *   describe('on PostgreSQL', { skip }, () => { … });
 *
 * Addresses: `OUTREACH_TEST_PG_URL` (default `postgres://postgres@127.0.0.1:5432/test`) and
 * `OUTREACH_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { freePort, sleep } from './ports.js';

export const PG_URL = process.env.OUTREACH_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.OUTREACH_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

type Service =
  | 'postgres'
  | 'redis'
  | 'dovecot'
  | 'nginx'
  | 'chromium'
  | 'buildah'
  | 'podman'
  | 'runc'
  | 'qemu-aarch64-static'
  | 'aarch64-linux-gnu-g++';

/** Where each program is looked for; `CHROMIUM_PATH` overrides Chromium's. */
const PROGRAMS = {
  dovecot: '/usr/sbin/dovecot',
  nginx: '/usr/sbin/nginx',
  chromium: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  buildah: '/usr/bin/buildah',
  podman: '/usr/bin/podman',
  runc: '/usr/sbin/runc',
  'qemu-aarch64-static': '/usr/bin/qemu-aarch64-static',
  'aarch64-linux-gnu-g++': '/usr/bin/aarch64-linux-gnu-g++',
} as const;

/** Debian's Chromium, or `CHROMIUM_PATH` (never a downloaded browser). */
export const CHROMIUM_PATH = PROGRAMS.chromium;

/**
 * How the browser tests start Chromium headless, with a profile of their own (playwright gives
 * each launch a fresh `--user-data-dir`) and nothing that reaches the network by itself.
 */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const HOW = {
  postgres: `start PostgreSQL at ${redactUrl(PG_URL)} or set OUTREACH_TEST_PG_URL`,
  redis: `start Redis at ${REDIS_URL} or set OUTREACH_TEST_REDIS_URL`,
  dovecot: "install Debian's dovecot-imapd",
  nginx: "install Debian's nginx-light",
  chromium: "install Debian's chromium, or set CHROMIUM_PATH",
  buildah: "install Debian's buildah",
  podman: "install Debian's podman",
  runc: "install Debian's runc",
  'qemu-aarch64-static': "install Debian's qemu-user-static",
  'aarch64-linux-gnu-g++': "install Debian's g++-aarch64-linux-gnu",
} satisfies Record<Service, string>;

/** `url` without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * Whether a TCP connection to `url`'s host and port opens within 10 s (PostgreSQL's client waits
 * as long). A server that is not there refuses at once; the long wait is for a shard
 * (test/helpers/shards.ts), which starts loading all of its files at once and keeps the event
 * loop busy meanwhile: with 1 s (2 s for PostgreSQL's client), shards of the unit suite on the
 * loaded 2-core machine reported the running Redis, and in another run PostgreSQL, missing.
 */
function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || defaultPort) });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(10_000, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

async function present(service: Service): Promise<boolean> {
  switch (service) {
    case 'postgres': {
      if (!(await reachable(PG_URL, 5432))) return false;
      const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 10_000 });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return true;
      } catch {
        return false;
      } finally {
        await client.end().catch(() => {});
      }
    }
    case 'redis':
      return reachable(REDIS_URL, 6379);
    default:
      return existsSync(PROGRAMS[service]);
  }
}

const checked = new Map<Service, Promise<string | false>>();

/**
 * `false` when `service` can be used, else the reason to skip (for `describe`'s `skip` option),
 * printed once per process as `SKIPPED: …`.
 * @throws Error when the service is missing and `CI` is set.
 */
export function serviceSkip(service: Service): Promise<string | false> {
  let result = checked.get(service);
  if (!result) {
    result = present(service).then((ok) => {
      if (ok) return false;
      const reason = `no ${service} (${HOW[service]})`;
      if (process.env.CI) throw new Error(`${reason}; CI is set, so this is a failure`);
      process.stdout.write(`SKIPPED: the tests that need ${service}: ${reason}\n`);
      return reason;
    });
    checked.set(service, result);
  }
  const found = result;
  // A fresh promise settled from a timer of the caller's own: awaiting the shared one directly at
  // a module's top level (in a shard, test/helpers/shards.ts) lets the second file's describe()
  // run in the first file's suite, which has finished by then.
  return new Promise((resolve, reject) => setImmediate(() => found.then(resolve, reject)));
}

/**
 * A Redis key prefix no other test (of this file, another file or another checkout's suite
 * running at once) uses: `outreach-test:<label>:<pid>:<random>:`. Keys under it expire by
 * themselves (the limiter sets PEXPIRE on each).
 */
export function redisKeyPrefix(label = 'test'): string {
  return `outreach-test:${label}:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

/**
 * A `redis-server` child process of one test's own on a free port, for outages the shared Redis
 * must never see (other engineers' suites use it): `stop()` kills it (SIGKILL), `start()` starts
 * an empty one again on the same port, `pause()`/`resume()` freeze it (SIGSTOP/SIGCONT) to make
 * it hang. Needs `redis-server` on PATH (it comes with the Redis that `serviceSkip('redis')` finds).
 */
export interface ThrowawayRedis {
  /** `redis://127.0.0.1:PORT` */
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  pause(): void;
  resume(): void;
}

/**
 * Starts a throwaway Redis (see ThrowawayRedis) and resolves once it answers PING. The server
 * that answers must be this child (its `process_id`): a free port can be taken by another process
 * (two test runs at once, e.g. Stryker's workers) between `freePort` and the bind, and then the
 * first start tries another port, and a restart fails rather than share that process's server.
 */
export async function startThrowawayRedis(): Promise<ThrowawayRedis> {
  let port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    const own = spawn('redis-server', args, { stdio: 'ignore' });
    child = own;
    process.once('exit', () => own.kill('SIGKILL'));
    const deadline = Date.now() + 15_000;
    for (;;) {
      const probe = new Redis(port, '127.0.0.1', {
        lazyConnect: true,
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
      });
      probe.on('error', () => {});
      const pid = await probe.connect().then(
        async () => /^process_id:(\d+)/m.exec(await probe.info('server'))?.[1],
        () => undefined,
      );
      probe.disconnect();
      if (pid === String(own.pid)) return;
      if (pid !== undefined || own.exitCode !== null) throw new PortTaken(port);
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start`);
      await sleep(20);
    }
  };
  const stop = async () => {
    const stopping = child;
    child = undefined;
    if (!stopping || stopping.exitCode !== null) return;
    const exited = new Promise((done) => stopping.once('exit', done));
    stopping.kill('SIGCONT');
    stopping.kill('SIGKILL');
    await exited;
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (error) {
      await stop();
      if (!(error instanceof PortTaken) || attempt === 5) throw error;
      port = await freePort();
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
  };
}

/** Another process holds the port a throwaway server was to listen on. */
class PortTaken extends Error {
  constructor(port: number) {
    super(`port ${port} is taken by another process`);
  }
}

/** Debian's PostgreSQL 15 server programs (the ones the shared server runs). */
const PG_BIN = process.env.OUTREACH_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL cluster of one test's own, on a free port in a temporary directory, for outages
 * the shared server must never see (other engineers' suites and CI's parallel shards use it):
 * `stop()` shuts it down (a fast shutdown: every connection is cut at once), `start()` starts it
 * again on the same port with the same data, `destroy()` stops it and removes its directory.
 * Made with `initdb` (trust authentication, user `postgres`, UTF-8, locale C.UTF-8 as the shared
 * server's) and run without durability (`fsync=off`): a test's data need not survive a crash.
 * PostgreSQL refuses to run as root: as root, it runs as the `postgres` user.
 */
export interface ThrowawayPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

/** Resolves once a `pg` client can run `SELECT 1` at `url`; rejects after `timeoutMs`. */
async function answers(url: string, timeoutMs: number, exited: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = exited();
    if (why !== null) throw new Error(`postgres exited: ${why}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    client.on('error', () => {});
    const ok = await client.connect().then(
      () => client.query('SELECT 1').then(() => true),
      () => false,
    );
    await client.end().catch(() => {});
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`throwaway PostgreSQL at ${url} did not answer in ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Creates a throwaway PostgreSQL cluster (see ThrowawayPostgres) and resolves once it answers. */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-pg-'));
  const data = join(dir, 'data');
  let ids: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    ids = {
      uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
      gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
    };
    chownSync(dir, ids.uid, ids.gid);
  }
  execFileSync(
    join(PG_BIN, 'initdb'),
    ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'],
    { stdio: 'ignore', cwd: dir, ...ids },
  );
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;
  let output = '';
  const kill = () => child?.kill('SIGKILL');
  process.once('exit', kill);
  const start = async () => {
    const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1'];
    args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
    const started = spawn(join(PG_BIN, 'postgres'), args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir, ...ids });
    child = started;
    started.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    await answers(url, 30_000, () =>
      started.exitCode !== null || started.signalCode !== null
        ? `${started.exitCode ?? started.signalCode}: ${output}`
        : null,
    );
  };
  const stop = async () => {
    const stopping = child;
    child = undefined;
    if (!stopping || stopping.exitCode !== null || stopping.signalCode !== null) return;
    const exited = new Promise((done) => stopping.once('exit', done));
    stopping.kill('SIGINT');
    await exited;
  };
  try {
    await start();
  } catch (error) {
    kill();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    start,
    stop,
    async destroy() {
      await stop();
      process.off('exit', kill);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A PostgreSQL database of one test file's own, created empty; `drop()` removes it. */
export interface TestDatabase {
  /** `postgres://…/<name>` */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * Creates an empty database with a unique name on the server of `OUTREACH_TEST_PG_URL`, so test
 * files (and several checkouts' suites) running at once never share one.
 * @throws when PostgreSQL refuses (check `serviceSkip('postgres')` first).
 */
export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  const name = `outreach_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
