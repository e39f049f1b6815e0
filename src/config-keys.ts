/**
 * Every key of the configuration (docs/configuration.md): its type, bounds and default, as one
 * strict zod object (decisions.md §15 "Configuration is strict"). The rules between keys, and how
 * the file, the environment and the flags are read, are `./config.ts`'s.
 */
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const port = z.number().int().min(0).max(65535);
const ms = z.number().int().min(1);
/** A JSON `true`/`false`; the environment's `true`/`false`/`1`/`0` are read by `loadConfig`. */
const bool = z.boolean();

/**
 * `server.trustProxy`: addresses (`10.0.0.5`, `::1`) and CIDR ranges (`10.0.0.0/8`) of the proxies
 * whose `X-Forwarded-*` headers are believed (decisions.md §18). In the environment, one
 * comma-separated list.
 */
const trustProxy = z.preprocess(
  (value) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean)
      : value,
  z
    .array(
      z
        .string()
        .refine((entry) => ipaddr.isValid(entry) || ipaddr.isValidCIDR(entry), 'not an IP address or CIDR range'),
    )
    .default([]),
);

/** A PostgreSQL URL (decisions.md §16). */
export const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** `db` as an object; a string in the file is its `path`. */
const DbSchema = z.strictObject({
  /**
   * The SQLite database file's path, or a `postgres://`/`postgresql://` URL (`--db` and
   * `OUTREACH_API_DB` set this key).
   */
  path: z.string().min(1).default('./data/outreach.db'),
  /** A `postgres://` or `postgresql://` URL; when set, the store is that PostgreSQL database. */
  url: z
    .string()
    .default('')
    .refine((url) => url === '' || POSTGRES_URL.test(url), 'must be a postgres:// or postgresql:// URL'),
  /**
   * SQLite: `full` (default): every acknowledged write survives a power loss; `normal`: faster
   * writes, the last commits may roll back after a power loss (decisions.md §7).
   */
  synchronous: z.enum(['full', 'normal']).default('full'),
  /** PostgreSQL: connections of one instance at most. */
  poolSize: z.number().int().min(1).default(10),
  /** PostgreSQL: a statement's time limit, ms; a request that meets it answers 503. */
  statementTimeoutMs: ms.default(5000),
  /**
   * Searches that run at once (issue #28): PostgreSQL connections of the pool (default a third of
   * `poolSize`, at least 1; fewer than `poolSize`), SQLite reader threads (default 1).
   */
  searchConnections: z.number().int().min(1).optional(),
  /** How long a search waits for its turn before it answers 503 `SERVICE_UNAVAILABLE`, ms. */
  searchWaitMs: ms.default(1000),
  /**
   * PostgreSQL: send the statements requests repeat as named prepared statements, parsed once per
   * connection (src/db/postgres/prepared.ts). false behind a pooler that hands a session's
   * statements to other server connections (PgBouncer's transaction mode without
   * `max_prepared_statements`).
   */
  preparedStatements: bool.default(true),
});

/** A JSON text's value, or the text itself when it is not JSON (zod then says what it expected). */
const parseJsonOr = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** One mailbox of `inbox.connections` (decisions.md §17). */
const InboxConnectionSchema = z.strictObject({
  host: z.string().min(1),
  port: port.default(993),
  /** true: TLS from the start (993); false: STARTTLS when the server offers it, else plain. */
  secure: bool.default(true),
  /** The login; default: the connection's `accountEmail`. */
  user: z.string().min(1).optional(),
  /** Name of the environment variable holding the password (never the password itself). */
  passwordEnv: z.string().min(1),
  mailbox: z.string().min(1).default('INBOX'),
});

/** Every key, with its default; `./config.ts` adds the rules between keys (`ConfigSchema`). */
export const ConfigKeys = z.strictObject({
  /** The database: a path or URL, or `{ path, url, synchronous, poolSize, statementTimeoutMs }`. */
  db: z.preprocess((value) => (typeof value === 'string' ? { path: value } : value), DbSchema).prefault({}),
  /** Background work across instances (decisions.md §16). */
  workers: z
    .strictObject({
      /**
       * How long an instance holds a leased item (a reply being sent, a job being run, an
       * idempotency key in flight) before another may take it over, ms. At least twice the
       * longest provider timeout, so a slow attempt is never taken over while it runs.
       */
      leaseMs: ms.default(60000),
    })
    .prefault({}),
  server: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: port.default(8080),
      /** On SIGTERM/SIGINT, how long requests in flight may run on before they are cut (decisions.md §15). */
      shutdownGraceMs: ms.default(10000),
      /**
       * V8's `--optimize-for-size` for the `serve` and `inbox sync` processes, set as they start
       * (`applyMemorySettings`, src/cli/memory.ts): V8 keeps its young generation and heap small
       * instead of letting garbage pile up. Off by default: on the full bench it saved 28 MiB of
       * peak RSS but cost 7–20 % more CPU per response and lengthened tails (docs/configuration.md,
       * docs/performance.md); `true` is for hosts short of memory.
       */
      optimizeForSize: bool.default(false),
      /**
       * V8's `--heap-growing-percent` for the `serve` process, set once it serves (after a
       * `--import`, which keeps V8's own growth), and for `inbox sync` as it starts
       * (`applySteadyMemorySettings`, src/cli/memory.ts): after each full collection V8 lets the old
       * generation grow to (1 + this/100) times what was live, so garbage that outlived the young
       * generation (requests in flight across a few ms of I/O, such as a write waiting for its
       * `fsync`) is collected sooner. 0 keeps V8's own factor (up to 4). Not a cap: the heap
       * still grows to whatever is live. 20 by default: under `PATCH` at the bench's peak it took
       * the peak RSS from 224/252 to 174/175 MiB, and an inbox pass of 10,000 messages from
       * 220 to 153 MB, at the same CPU (docs/configuration.md).
       */
      heapGrowingPercent: z.number().int().min(0).max(300).default(20),
      /**
       * The largest size of each of V8's two semi-spaces (the young generation), MiB, for the
       * `serve` process once it serves and for `inbox sync` (`capSemiSpace`, src/cli/memory.ts):
       * what `--max-semi-space-size` does, which the single executable cannot be given. V8 grows
       * a semi-space from 1 MiB by doubling, up to 16; a young generation that big holds up to
       * 32 MiB of garbage between scavenges. 0 (the default) keeps V8's own growth: with 4 the
       * whole bench's peak RSS went from 190 to 166–169 MiB, but a reply cost 5–21 % more CPU
       * (docs/configuration.md); a host short of memory may set 4. Not a cap on the heap: what
       * survives moves to the old generation, which grows to whatever is live.
       */
      maxSemiSpaceMb: z.number().int().min(0).max(16).default(0),
      /**
       * How long a client may take to send a request's headers, ms (Node's `headersTimeout`);
       * at most `requestTimeoutMs`. A client still sending them then is answered 400 and cut off.
       */
      headersTimeoutMs: ms.default(10000),
      /**
       * How long a client may take to send a whole request, headers and body, ms (Node's
       * `requestTimeout`). The time the service takes to answer is not counted.
       */
      requestTimeoutMs: ms.default(30000),
      /**
       * The proxies (addresses, CIDR ranges) whose `X-Forwarded-For`, `-Proto` and `-Host` are
       * believed, for the client address (access log, sign-in limits) and the settings area's
       * origin and `Secure` cookies (decisions.md §18). Default none: those headers are ignored.
       */
      trustProxy,
    })
    .refine((server) => server.headersTimeoutMs <= server.requestTimeoutMs, {
      message: 'headersTimeoutMs must be at most requestTimeoutMs',
      path: ['headersTimeoutMs'],
    })
    .prefault({}),
  limits: z
    .strictObject({
      /** Requests per sliding 60 s window per token; 0 turns the limiter off. */
      requestsPerMinute: z.number().int().min(0).default(100),
      /** Largest accepted request body, bytes. */
      maxBodyBytes: z
        .number()
        .int()
        .min(1024)
        .default(1024 * 1024),
      /**
       * Where the windows are counted (decisions.md §16): `memory`, in this process (each instance
       * its own); `redis`, in the Redis at `redis.url`, shared by every instance.
       */
      store: z.enum(['memory', 'redis']).default('memory'),
    })
    .prefault({}),
  /** The Redis of `limits.store: redis` (decisions.md §16). */
  redis: z
    .strictObject({
      /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS); never logged. */
      url: z
        .string()
        .refine((url) => url === '' || /^rediss?:\/\/./.test(url), 'must start with redis:// or rediss://')
        .default(''),
      /**
       * Put before every key, so several installs can share one Redis. Empty (the default): this
       * install's own, `outreach:<install id>:`, the id stored in its database (decisions.md §16).
       */
      keyPrefix: z.string().default(''),
      /** Longest wait for one Redis call, ms; a slower answer counts as Redis being down (the limiter falls back). */
      timeoutMs: ms.default(500),
    })
    .prefault({}),
  providers: z
    .strictObject({
      generator: z.enum(['template', 'openai']).default('template'),
      mail: z.enum(['log', 'smtp']).default('log'),
      verifier: z.enum(['builtin', 'http']).default('builtin'),
      contactFinder: z.enum(['builtin', 'crawl']).default('builtin'),
    })
    .prefault({}),
  openai: z
    .strictObject({
      baseUrl: z.string().url().default('https://api.openai.com/v1'),
      model: z.string().min(1).default('gpt-4o-mini'),
      /** Name of the environment variable holding the API key (the key never goes in the file). */
      apiKeyEnv: z.string().default('OPENAI_API_KEY'),
      timeoutMs: ms.default(30000),
    })
    .prefault({}),
  smtp: z
    .strictObject({
      /** The relay's host name or address. No default: `mail: smtp` without it stops the start. */
      host: z.string().default(''),
      port: port.default(587),
      /** true: TLS from the start (port 465); false: STARTTLS when offered. */
      secure: bool.default(false),
      /**
       * With `secure` false: true makes STARTTLS a must, so nothing (credentials included) is sent
       * before the connection is encrypted. Unset: true when a user or a password is set.
       */
      requireTLS: bool.optional(),
      user: z.string().default(''),
      passwordEnv: z.string().default('OUTREACH_API_SMTP_PASSWORD_VALUE'),
      timeoutMs: ms.default(15000),
    })
    .prefault({}),
  verifier: z
    .strictObject({
      dnsTimeoutMs: ms.default(3000),
      httpUrl: z.string().default(''),
      httpApiKeyEnv: z.string().default('VERIFIER_API_KEY'),
      timeoutMs: ms.default(10000),
    })
    .prefault({}),
  crawl: z
    .strictObject({
      allowPrivateNetworks: bool.default(false),
      maxRedirects: z.number().int().min(0).default(3),
      maxBytes: z
        .number()
        .int()
        .min(1024)
        .default(1024 * 1024),
      timeoutMs: ms.default(10000),
    })
    .prefault({}),
  /** The reply outbox; the contact-discovery worker uses the same poll interval and backoff. */
  outbox: z
    .strictObject({
      pollIntervalMs: ms.default(500),
      maxAttempts: z.number().int().min(1).default(5),
      /** First retry delay; doubles on each further attempt. */
      backoffMs: ms.default(2000),
    })
    .prefault({}),
  /** The backlink monitor (decisions.md §13). */
  monitor: z
    .strictObject({
      enabled: bool.default(false),
      /** A backlink is due when its lastCheckedAt is null or older than this. */
      intervalHours: z.number().positive().default(24),
      /** Default `outreach-api-monitor/<version>` (filled in by the monitor when empty). */
      userAgent: z.string().default(''),
      maxRedirects: z.number().int().min(0).default(5),
      /** Largest body read per page, bytes. */
      maxBytes: z
        .number()
        .int()
        .min(1024)
        .default(5 * 1024 * 1024),
      timeoutMs: ms.default(15000),
      allowPrivateNetworks: bool.default(false),
      /** Fetches at once, over all hosts. */
      concurrency: z.number().int().min(1).default(8),
      /** Least time between two fetches from one host. */
      perHostDelayMs: z.number().int().min(0).default(1000),
      respectRobotsTxt: bool.default(true),
    })
    .prefault({}),
  /** The inbox sync (decisions.md §17): replies read over IMAP and recorded in their threads. */
  inbox: z
    .strictObject({
      /** Run the sync in `serve` (default false: a demo or a fixture never touches the network). */
      enabled: bool.default(false),
      /** Between two passes of `serve`'s sync, ms. */
      intervalMs: ms.default(60000),
      /** Largest message read, bytes; a larger one is skipped. */
      maxBytes: z
        .number()
        .int()
        .min(1024)
        .default(10 * 1024 * 1024),
      /** How far back the first read of a mailbox (and a read after a UIDVALIDITY change) goes, days. */
      initialDays: z.number().int().min(1).default(30),
      /** Connecting, the greeting and each wait for the server's answer, ms. */
      timeoutMs: ms.default(30000),
      /**
       * The longest one message may take to read (parse, and its HTML turned into text), ms; one
       * that takes longer is skipped as unreadable and never read again (docs/security.md).
       */
      parseTimeoutMs: ms.default(10000),
      /**
       * Email connection id → its mailbox. In the environment (`OUTREACH_API_INBOX_CONNECTIONS`),
       * the same map as a JSON object.
       */
      connections: z
        .preprocess(
          (value) => (typeof value === 'string' ? parseJsonOr(value) : value),
          z.record(z.string().min(1), InboxConnectionSchema),
        )
        .default({}),
    })
    .prefault({}),
  /** The CI-fixture control plane under /__admin (decisions.md §14). */
  fixture: z
    .strictObject({
      enabled: bool.default(false),
      /** When set, every admin request needs `Authorization: Bearer <adminToken>`; else loopback only. */
      adminToken: z.string().default(''),
      /** Requests kept in the request journal. */
      journalSize: z.number().int().min(1).default(1000),
      /** Seed of the id generator of writes; empty: random ids. */
      seed: z.string().default(''),
    })
    .prefault({}),
  /** Prometheus metrics at /metrics (decisions.md §15). */
  metrics: z
    .strictObject({
      enabled: bool.default(false),
      /** When set, /metrics needs `Authorization: Bearer <token>`. */
      token: z.string().default(''),
    })
    .prefault({}),
  /** The settings area under /settings: API tokens in a browser (decisions.md §18). */
  settings: z
    .strictObject({
      /** false: no settings area (its paths answer 404). */
      enabled: bool.default(true),
      /** A session ends after this many minutes without a request (and after 12 hours in any case). */
      sessionIdleMinutes: z.number().int().min(1).max(720).default(60),
    })
    .prefault({}),
  /** Logs on stdout (decisions.md §15). */
  log: z
    .strictObject({
      level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
      format: z.enum(['json', 'pretty']).default('json'),
    })
    .prefault({}),
});
