/**
 * Starting and stopping the HTTP server (`outreach-api serve`): opens and migrates the store,
 * builds the app and listens. Background workers (outbox, discovery) start here too.
 */
import { systemClock, type Clock } from './domain/clock.js';
import type { ScryptQueue } from './domain/passwords.js';
import { assembleApp, type App } from './app.js';
import { storeLocation, type Config } from './config.js';
import { openStore, type Store } from './db/connection.js';
import { migrate } from './db/migrate.js';
import { createFixture, type Fixture } from './fixture/index.js';
import { listen, type Listener } from './http/listen.js';
import { settlesWithin } from './http/shutdown.js';
import { openLimiter, perInstanceLimitNotice, type RedisLimiterEvents } from './limiter/index.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { createProviders, type Providers } from './providers/index.js';
import { installId } from './repos/install.js';
import { countOutboxMessagesByStatus } from './repos/outbox.js';
import { createWorkers, type Workers } from './workers/index.js';

/**
 * How long an idle keep-alive connection stays open, ms. Node's default (5 s) is shorter than the
 * idle timeout of common reverse proxies and HTTP client pools, and a connection the server closes
 * just as a client reuses it fails that client's request with ECONNRESET (seen in the test suite
 * whenever the event loop was busy for 5 s between two requests). 65 s outlasts a 60 s proxy idle
 * timeout.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * How long `shutdown()` waits after the grace for the requests it cut to answer, then for the
 * connections to close before it cuts them (a client still sending a request or slowly reading a
 * long answer), and at least for a worker's item in hand, ms.
 */
export const SETTLE_MS = 1000;

export interface RunningServer {
  /** e.g. `http://127.0.0.1:8080` */
  origin: string;
  port: number;
  app: App;
  store: Store;
  /** The background workers (outbox, discovery, key purge), running on their timers. */
  workers: Workers;
  /** The Prometheus series, when `metrics.enabled`. */
  metrics?: Metrics;
  /** The fixture control plane (`fixture.enabled`, decisions.md §14). */
  fixture?: Fixture;
  /**
   * Graceful stop (decisions.md §15; SIGTERM/SIGINT in `serve`): stops accepting connections and
   * closes the idle ones at once; lets the requests in flight finish for up to `graceMs`, then
   * answers those still running 503 `SERVICE_UNAVAILABLE` and releases their idempotency keys
   * (./http/shutdown.ts); meanwhile each worker finishes the item in hand (within the grace, or
   * `SETTLE_MS` if longer; one still busy then is left, and its item is taken up again at the
   * next start); then
   * closes the mail transport, the store's upkeep (WAL checkpoints) and (when it opened it) the store.
   * @param graceMs default `server.shutdownGraceMs`, ms.
   */
  shutdown(graceMs?: number): Promise<void>;
  /** `shutdown(0)`: requests in flight are answered 503 at once. */
  close(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  clock?: Clock;
  logger?: Logger;
  /** Use this already-open store instead of opening `config.db`. */
  store?: Store;
  /** Replace some of the providers the config names (embedding, tests). */
  providers?: Partial<Providers>;
  /** The queue the sign-ins' scrypt waits in (default: the process's; a test holds its own). */
  scrypt?: ScryptQueue;
}

/**
 * Opens the store the configuration names (`storeLocation`: a SQLite file or a PostgreSQL URL)
 * with its settings. Does not migrate.
 * @throws when it cannot be opened (a SQLite file that is not a database, a directory that cannot be made).
 */
export function openStoreOf(config: Config): Promise<Store> {
  const { synchronous, poolSize, statementTimeoutMs, searchConnections, searchWaitMs, preparedStatements } = config.db;
  return openStore(storeLocation(config), {
    synchronous,
    poolSize,
    statementTimeoutMs,
    searchConnections,
    searchWaitMs,
    preparedStatements,
  });
}

/** Opens the store, migrates it, and listens on `config.server.host:port` (port 0: any free port). */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.log);
  const store = options.store ?? (await openStoreOf(config));
  await migrate(store);
  // The store's upkeep off the request path (SQLite: WAL checkpoints in a worker thread, never
  // inside a request's commit).
  const maintenance = store.startMaintenance(logger);
  // After migrate and any import: the data now is what a reset restores.
  const fixture = config.fixture.enabled
    ? await createFixture({ config, store, clock: options.clock ?? systemClock })
    : undefined;
  const clock = fixture?.clock ?? options.clock ?? systemClock;
  const metrics = config.metrics.enabled
    ? createMetrics({
        outboxMessagesByStatus: () => countOutboxMessagesByStatus(store.db),
        rateLimitRedisUp: config.limits.store === 'redis' ? () => limiter?.shared ?? false : undefined,
      })
    : undefined;
  const limiter = await openLimiter({
    store: config.limits.store,
    requestsPerMinute: config.limits.requestsPerMinute,
    clock,
    redis: await redisSettings(config, store, logger),
    events: fallbackEvents(logger, metrics),
  });
  // A `postgres://` database is shared by every instance (decisions.md §16), a memory limiter is not.
  const notice = perInstanceLimitNotice(config.limits.store, store.sharedByInstances);
  if (notice) logger.log('info', notice);
  const providers: Providers = { ...createProviders(config, logger), ...options.providers };
  if (fixture) providers.mail = fixture.captureMail(providers.mail);
  const workers = createWorkers({ store, clock, config, providers, logger, metrics });
  if (fixture)
    for (const worker of [workers.outbox, workers.discovery, workers.purge, workers.monitor, workers.inbox])
      worker.runInside((pass) => fixture.gate.run(pass));
  const app = assembleApp({
    config,
    store,
    clock,
    logger,
    providers,
    metrics,
    limiter,
    fixture,
    workersRunning: () => workers.running,
    notify: (name) => workers[name].wake(),
    scrypt: options.scrypt,
  });
  // Before the first request: recovery of interrupted work must not touch a new request's.
  await workers.start();
  // Deno.serve under Deno, @hono/node-server under Node: the same app either way.
  const server: Listener = await listen(app.app.fetch, config.server.host, config.server.port, logger, {
    headersTimeoutMs: config.server.headersTimeoutMs,
    requestTimeoutMs: config.server.requestTimeoutMs,
  }).catch(async (error: unknown) => {
    await workers.stop();
    await maintenance?.stop();
    await limiter?.close();
    providers.mail.close();
    throw error;
  });
  if (server.node) (server.node as import('node:http').Server).keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const port = server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  let stopped: Promise<void> | undefined;
  const shutdown = async (graceMs: number) => {
    const deadline = performance.now() + graceMs;
    const closed = server.close();
    const workersStopped = workers.stop();
    const cut = await app.deps.shutdown.drain(graceMs, SETTLE_MS);
    if (cut)
      logger.log('warn', 'requests still running at the end of the shutdown grace were answered 503', {
        count: cut,
        graceMs,
      });
    // Every request is answered: a connection whose answer went out before the drain began
    // (without Connection: close) is idle now.
    server.closeIdle();
    if (!(await settlesWithin(closed, SETTLE_MS))) server.closeAll();
    if (!(await settlesWithin(workersStopped, Math.max(SETTLE_MS, deadline - performance.now()))))
      logger.log(
        'warn',
        'a worker was still busy at the end of the shutdown grace; its item is taken up at the next start',
        {
          graceMs,
        },
      );
    providers.mail.close();
    await limiter?.close();
    await maintenance?.stop();
    if (!options.store) await store.close();
  };
  const running: RunningServer = {
    origin: `http://${host}:${port}`,
    port,
    app,
    store,
    workers,
    metrics,
    fixture,
    shutdown(graceMs = config.server.shutdownGraceMs) {
      stopped ??= shutdown(graceMs);
      return stopped;
    },
    close: () => running.shutdown(0),
  };
  return running;
}

/**
 * `redis.*` with the key prefix the limiter uses: `redis.keyPrefix` when set, otherwise
 * `outreach:<install id>:` (decisions.md §16), the id this database was given by its migration,
 * so every instance of this install shares the windows and no other install does. The database
 * is read only for `limits.store: redis`.
 */
async function redisSettings(config: Config, store: Store, logger: Logger): Promise<Config['redis']> {
  if (config.limits.store !== 'redis' || config.redis.keyPrefix !== '') return config.redis;
  const keyPrefix = `outreach:${await installId(store.db)}:`;
  logger.log('info', 'limits are counted in Redis under the key prefix of this install', { keyPrefix });
  return { ...config.redis, keyPrefix };
}

/** The limiter's fallback (decisions.md §16) in the log, once per outage each way, and in the metrics. */
function fallbackEvents(logger: Logger, metrics: Metrics | undefined): RedisLimiterEvents {
  return {
    fallback: (reason) =>
      logger.log('warn', 'rate limiter: Redis cannot be reached; limits are counted per instance until it answers', {
        reason,
      }),
    recovered: () => logger.log('info', 'rate limiter: Redis answers again; limits are shared by every instance'),
    fallbackCheck: () => metrics?.rateLimitFallbackChecks.inc(),
  };
}
