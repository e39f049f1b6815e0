/**
 * Configuration: defaults, then `config.json` (or `--config PATH`), then `OUTREACH_API_*`
 * environment variables, then command-line flags. Parsed once with zod; a bad value fails fast
 * with a message naming the key.
 *
 * Every leaf key has an environment variable: its path in SCREAMING_SNAKE_CASE joined by `_`
 * under `OUTREACH_API_`, e.g. `limits.requestsPerMinute` → `OUTREACH_API_LIMITS_REQUESTS_PER_MINUTE`,
 * `db` → `OUTREACH_API_DB`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const ms = z.coerce.number().int().min(1);
/** `true`/`false` (JSON), or the strings `true`/`false`/`1`/`0` (environment); nothing else. */
const bool = z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')]);

export const ConfigSchema = z.object({
  /** Path of the SQLite database file. */
  db: z.string().min(1).default('./data/outreach.db'),
  server: z
    .object({
      host: z.string().min(1).default('127.0.0.1'),
      port: port.default(8080),
      /** On SIGTERM/SIGINT, how long requests in flight may run on before they are cut (decisions.md §15). */
      shutdownGraceMs: ms.default(10000),
    })
    .prefault({}),
  limits: z
    .object({
      /** Requests per sliding 60 s window per token; 0 turns the limiter off. */
      requestsPerMinute: z.coerce.number().int().min(0).default(100),
      /** Largest accepted request body, bytes. */
      maxBodyBytes: z.coerce.number().int().min(1024).default(1024 * 1024),
    })
    .prefault({}),
  providers: z
    .object({
      generator: z.enum(['template', 'openai']).default('template'),
      mail: z.enum(['log', 'smtp']).default('log'),
      verifier: z.enum(['builtin', 'http']).default('builtin'),
      contactFinder: z.enum(['builtin', 'crawl']).default('builtin'),
    })
    .prefault({}),
  openai: z
    .object({
      baseUrl: z.string().url().default('https://api.openai.com/v1'),
      model: z.string().min(1).default('gpt-4o-mini'),
      /** Name of the environment variable holding the API key (the key never goes in the file). */
      apiKeyEnv: z.string().default('OPENAI_API_KEY'),
      timeoutMs: ms.default(30000),
    })
    .prefault({}),
  smtp: z
    .object({
      host: z.string().default('127.0.0.1'),
      port: port.default(587),
      /** true: TLS from the start (port 465); false: STARTTLS when offered. */
      secure: z.coerce.boolean().default(false),
      user: z.string().default(''),
      passwordEnv: z.string().default('OUTREACH_API_SMTP_PASSWORD_VALUE'),
      timeoutMs: ms.default(15000),
    })
    .prefault({}),
  verifier: z
    .object({
      dnsTimeoutMs: ms.default(3000),
      httpUrl: z.string().default(''),
      httpApiKeyEnv: z.string().default('VERIFIER_API_KEY'),
      timeoutMs: ms.default(10000),
    })
    .prefault({}),
  crawl: z
    .object({
      allowPrivateNetworks: z.coerce.boolean().default(false),
      maxRedirects: z.coerce.number().int().min(0).default(3),
      maxBytes: z.coerce.number().int().min(1024).default(1024 * 1024),
      timeoutMs: ms.default(10000),
    })
    .prefault({}),
  /** The reply outbox; the contact-discovery worker uses the same poll interval and backoff. */
  outbox: z
    .object({
      pollIntervalMs: ms.default(500),
      maxAttempts: z.coerce.number().int().min(1).default(5),
      /** First retry delay; doubles on each further attempt. */
      backoffMs: ms.default(2000),
    })
    .prefault({}),
  /** The backlink monitor (decisions.md §13). */
  monitor: z
    .object({
      enabled: bool.default(false),
      /** A backlink is due when its lastCheckedAt is null or older than this. */
      intervalHours: z.coerce.number().positive().default(24),
      /** Default `outreach-api-monitor/<version>` (filled in by the monitor when empty). */
      userAgent: z.string().default(''),
      maxRedirects: z.coerce.number().int().min(0).default(5),
      /** Largest body read per page, bytes. */
      maxBytes: z.coerce.number().int().min(1024).default(5 * 1024 * 1024),
      timeoutMs: ms.default(15000),
      allowPrivateNetworks: bool.default(false),
      /** Fetches at once, over all hosts. */
      concurrency: z.coerce.number().int().min(1).default(8),
      /** Least time between two fetches from one host. */
      perHostDelayMs: z.coerce.number().int().min(0).default(1000),
      respectRobotsTxt: bool.default(true),
    })
    .prefault({}),
  /** The CI-fixture control plane under /__admin (decisions.md §14). */
  fixture: z
    .object({
      enabled: bool.default(false),
      /** When set, every admin request needs `Authorization: Bearer <adminToken>`; else loopback only. */
      adminToken: z.string().default(''),
      /** Requests kept in the request journal. */
      journalSize: z.coerce.number().int().min(1).default(1000),
      /** Seed of the id generator of writes; empty: random ids. */
      seed: z.string().default(''),
    })
    .prefault({}),
  /** Prometheus metrics at /metrics (decisions.md §15). */
  metrics: z
    .object({
      enabled: bool.default(false),
      /** When set, /metrics needs `Authorization: Bearer <token>`. */
      token: z.string().default(''),
    })
    .prefault({}),
  /** Logs on stdout (decisions.md §15). */
  log: z
    .object({
      level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
      format: z.enum(['json', 'pretty']).default('json'),
    })
    .prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {}

const snake = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Every leaf key path of the configuration, with its environment variable name. */
export function envVariables(): { path: string[]; name: string }[] {
  const out: { path: string[]; name: string }[] = [];
  const walk = (value: unknown, path: string[]) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, child] of Object.entries(value)) walk(child, [...path, key]);
    } else out.push({ path, name: `OUTREACH_API_${path.map(snake).join('_')}` });
  };
  walk(ConfigSchema.parse({}), []);
  return out;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown) {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

/**
 * Loads the configuration.
 * @param file explicit `--config` path (must exist); without it `./config.json` is used if present.
 * @param env the environment to read `OUTREACH_API_*` from.
 * @param overrides values from command-line flags, applied last.
 * @throws ConfigError naming the file or key that is wrong.
 */
export function loadConfig(
  file: string | undefined,
  env: Record<string, string | undefined> = process.env,
  overrides: Record<string, unknown> = {},
): Config {
  let raw: Record<string, unknown> = {};
  const path = file ?? (existsSync('config.json') ? 'config.json' : undefined);
  if (path) {
    if (!existsSync(path)) throw new ConfigError(`config file not found: ${path}`);
    try {
      raw = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError(`config file ${path} is not valid JSON: ${(error as Error).message}`);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(`config file ${path} must hold a JSON object`);
  }
  for (const { path: keyPath, name } of envVariables()) {
    const value = env[name];
    if (value !== undefined && value !== '') setPath(raw, keyPath, value === 'false' ? false : value === 'true' ? true : value);
  }
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) setPath(raw, key.split('.'), value);
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${issues}`);
  }
  return parsed.data;
}
