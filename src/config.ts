/**
 * Configuration: defaults, then `config.json` (or `--config PATH`), then `OUTREACH_API_*`
 * environment variables, then command-line flags. Parsed once with zod, strictly
 * (decisions.md §15 "Configuration is strict"): an unknown key in the file, a value of the wrong
 * type, or an environment variable that does not parse stops the start with a message naming
 * the key or the variable.
 *
 * Every leaf key has an environment variable: its path in SCREAMING_SNAKE_CASE joined by `_`
 * under `OUTREACH_API_`, e.g. `limits.requestsPerMinute` → `OUTREACH_API_LIMITS_REQUESTS_PER_MINUTE`;
 * `db.path` keeps the shorter `OUTREACH_API_DB`. An environment value is read by the key's type:
 * a boolean is `true`/`false`/`1`/`0`, a number is decimal, anything else stays a string (so
 * `OUTREACH_API_SMTP_USER=false` is the user "false"). An `OUTREACH_API_*` variable that is no key's
 * (a misspelling: `OUTREACH_API_SERVER_PROT`) stops the start too, named with the closest known one.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigKeys, POSTGRES_URL } from './config-keys.js';
import { closestName, resemblanceLimit } from './domain/closest.js';

/** Every key (ConfigKeys), and the rules between keys. */
export const ConfigSchema = ConfigKeys.superRefine((config, context) => {
  // decisions.md §16: a lease outlives any attempt, so a slow send is never taken over while it runs.
  const timeouts = {
    'openai.timeoutMs': config.openai.timeoutMs,
    'smtp.timeoutMs': config.smtp.timeoutMs,
    'verifier.timeoutMs': config.verifier.timeoutMs,
    'crawl.timeoutMs': config.crawl.timeoutMs,
    'monitor.timeoutMs': config.monitor.timeoutMs,
  };
  const [longestKey, longest] = Object.entries(timeouts).reduce((a, b) => (b[1] > a[1] ? b : a));
  // Searches get a share of the pool, never all of it: the rest serves every cheap request.
  const { poolSize, searchConnections } = config.db;
  if (
    POSTGRES_URL.test(config.db.url || config.db.path) &&
    searchConnections !== undefined &&
    searchConnections >= poolSize &&
    poolSize > 1
  )
    context.addIssue({
      code: 'custom',
      path: ['db', 'searchConnections'],
      message: `must be less than db.poolSize (${poolSize}), so that cheap requests always find a connection`,
    });
  if (config.workers.leaseMs < 2 * longest)
    context.addIssue({
      code: 'custom',
      path: ['workers', 'leaseMs'],
      message: `must be at least twice the longest provider timeout (${longestKey} ${longest} ms): at least ${2 * longest}`,
    });
  if (config.limits.store !== 'redis') return;
  if (!config.redis.url)
    context.addIssue({ code: 'custom', path: ['redis', 'url'], message: 'must be set when limits.store is redis' });
  // The fixture is one instance (SQLite only, decisions.md §16) with a clock and a reset of its
  // own: a fake clock would write its times into windows other instances read by theirs, and a
  // reset would have to delete windows other instances share.
  if (config.fixture.enabled)
    context.addIssue({
      code: 'custom',
      path: ['limits', 'store'],
      message: 'must be memory with the fixture (--fixture): its clock and reset are of one instance',
    });
});

export type Config = z.infer<typeof ConfigSchema>;

/**
 * Where the data is (decisions.md §16): `db.url` when set, else `db.path` (a SQLite file, or a
 * PostgreSQL URL given as `db`, `--db` or `OUTREACH_API_DB`). May hold a password: print
 * `describeLocation` of it, never it.
 */
export const storeLocation = (config: Config): string => config.db.url || config.db.path;

export class ConfigError extends Error {}

const snake = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Keys whose environment variable is not the plain spelling of their path. */
const ENV_NAMES: Record<string, string> = { 'db.path': 'OUTREACH_API_DB' };

/** How an environment value of a key is read. */
type EnvKind = 'boolean' | 'number' | 'string';

interface Leaf {
  path: string[];
  name: string;
  kind: EnvKind;
}

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
};
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The leaf keys of `schema`, walked through defaults, optionals and pipes (a `db` string is a pipe). */
function leaves(schema: z.ZodType, path: string[] = []): Leaf[] {
  const def = defOf(schema);
  if (def.type === 'object' && def.shape)
    return Object.entries(def.shape).flatMap(([key, child]) => leaves(child, [...path, key]));
  const inner = def.innerType ?? def.out;
  if (inner) return leaves(inner, path);
  const key = path.join('.');
  const types = def.type === 'union' ? (def.options ?? []).map((o) => defOf(o).type) : [def.type];
  const kind: EnvKind = types.includes('boolean') ? 'boolean' : types.includes('number') ? 'number' : 'string';
  return [{ path, name: ENV_NAMES[key] ?? `OUTREACH_API_${path.map(snake).join('_')}`, kind }];
}

let configLeaves: Leaf[] | undefined;
/** `leaves(ConfigSchema)`, walked once per process (every `--help` line and every start asks for it). */
const allLeaves = (): Leaf[] => (configLeaves ??= leaves(ConfigSchema));

/** Every leaf key path of the configuration, with its environment variable name (keys without a default too). */
export function envVariables(): { path: string[]; name: string }[] {
  return allLeaves().map(({ path, name }) => ({ path, name }));
}

/** The typed value of an environment variable, or the reason it does not parse. */
function fromEnv(value: string, kind: EnvKind): { value: unknown } | { error: string } {
  if (kind === 'boolean') {
    if (value === 'true' || value === '1') return { value: true };
    if (value === 'false' || value === '0') return { value: false };
    return { error: `must be true, false, 1 or 0, not ${JSON.stringify(value)}` };
  }
  if (kind === 'number') {
    if (/^-?\d+(\.\d+)?$/.test(value)) return { value: Number(value) };
    return { error: `must be a decimal number, not ${JSON.stringify(value)}` };
  }
  return { value };
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown) {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

/** The prefix of every environment variable of the configuration. */
const ENV_PREFIX = 'OUTREACH_API_';

/** `serve --ready-file PATH` from the environment (src/cli/ready-file.ts); not a configuration key. */
export const READY_FILE_VARIABLE = 'OUTREACH_API_READY_FILE';
/** The executable the npm package's launcher runs instead of its platform's (bin/platform.js); not a configuration key. */
const BINARY_VARIABLE = 'OUTREACH_API_BINARY';

/**
 * `OUTREACH_API_*` variables that are read elsewhere than the configuration, and what reads them:
 * the misspelling check knows them (and proposes them for a misspelt one), `loadConfig` never
 * reads them as keys. The launcher passes its environment on, so the server sees `OUTREACH_API_BINARY`.
 */
const OTHER_VARIABLES: Record<string, string> = {
  [READY_FILE_VARIABLE]: 'serve --ready-file',
  [BINARY_VARIABLE]: "the npm package's launcher",
};

/** The keys the schema knows beside an unknown one at `at` (`server.prot` → `host`, `port`, …). */
function siblingKeys(at: string[]): string[] {
  const keys = new Set<string>();
  for (const { path } of allLeaves())
    if (path.length > at.length && at.every((key, i) => path[i] === key)) keys.add(path[at.length]!);
  return [...keys];
}

/** `key: unknown key`, with the known key beside it that it resembles, where one does. */
function unknownKey(at: string[], key: string): string {
  const near = closestName(key, siblingKeys(at), resemblanceLimit(key));
  return `${[...at, key].join('.')}: unknown key${near ? ` (did you mean ${[...at, near].join('.')}?)` : ''}`;
}

/**
 * Every `OUTREACH_API_*` variable of `env` that is no key's variable, each named with the closest
 * known variable, so a misspelt one stops the start as an unknown key in the file does. A variable
 * the configuration names as holding a secret (`smtp.passwordEnv`, …) is not a key's, and is fine;
 * so are `OTHER_VARIABLES` (`OUTREACH_API_READY_FILE`, `OUTREACH_API_BINARY`).
 */
function unknownVariables(env: Record<string, string | undefined>, config: Config): string[] {
  const known = new Map([
    ...allLeaves().map((leaf) => [leaf.name, leaf.path.join('.')] as const),
    ...Object.entries(OTHER_VARIABLES),
  ]);
  const secrets = new Set(
    allLeaves()
      .filter((leaf) => leaf.path[leaf.path.length - 1]!.endsWith('Env'))
      .map((leaf) => leaf.path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], config)),
  );
  return Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && !known.has(name) && !secrets.has(name))
    .sort()
    .map((name) => {
      const near = closestName(name, known.keys())!;
      return `${name}: unknown variable (the closest known one is ${near}, for ${known.get(near)})`;
    });
}

/** The zod issues as `key: message`, one per unknown key, with a key set by the environment named by its variable. */
function describeIssues(issues: z.core.$ZodIssue[], fromEnvironment: Map<string, string>): string[] {
  return issues.flatMap((issue) => {
    const at = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => unknownKey(at, key));
    const key = at.join('.') || '(root)';
    // An item of a list set by a variable (`server.trustProxy.1`) names that variable too.
    const variable = at.map((_, i) => fromEnvironment.get(at.slice(0, at.length - i).join('.'))).find(Boolean);
    return [`${variable ? `${variable} (${key})` : key}: ${issue.message}`];
  });
}

/**
 * Loads the configuration.
 * @param file explicit `--config` path (must exist); without it `./config.json` is used if present.
 * @param env the environment to read `OUTREACH_API_*` from.
 * @param overrides values from command-line flags, applied last, by key path (`db` is `db.path`).
 * @throws ConfigError naming the file, and every key or environment variable that is wrong.
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
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new ConfigError(`config file ${path} must hold a JSON object`);
    if (typeof raw.db === 'string') raw.db = { path: raw.db };
  }
  const problems: string[] = [];
  const fromEnvironment = new Map<string, string>();
  for (const { path: keyPath, name, kind } of allLeaves()) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    const read = fromEnv(text, kind);
    if ('error' in read) problems.push(`${name} (${keyPath.join('.')}): ${read.error}`);
    else {
      setPath(raw, keyPath, read.value);
      fromEnvironment.set(keyPath.join('.'), name);
    }
  }
  // `db.path` set by a later source than `db.url` (the environment over the file) names the store.
  const dropUrl = () => {
    if (typeof raw.db === 'object' && raw.db !== null) delete (raw.db as Record<string, unknown>).url;
  };
  if (fromEnvironment.has('db.path') && !fromEnvironment.has('db.url')) dropUrl();
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    const keyPath = key === 'db' ? 'db.path' : key;
    if (keyPath === 'db.path') dropUrl(); // the flag --db over any db.url
    setPath(raw, keyPath.split('.'), value);
    fromEnvironment.delete(keyPath);
  }
  // Parsed once per process: zod's compiled fast path (built on an object schema's first parse)
  // would cost more than it saves here.
  const parsed = ConfigSchema.safeParse(raw, { jitless: true });
  if (!parsed.success) problems.push(...describeIssues(parsed.error.issues, fromEnvironment));
  problems.push(...unknownVariables(env, parsed.success ? parsed.data : ConfigSchema.parse({})));
  if (problems.length)
    throw new ConfigError(`invalid configuration${path ? ` (${path})` : ''}: ${problems.join('; ')}`);
  return parsed.data!;
}

/**
 * Checks that every provider the configuration chooses has the settings it needs
 * (decisions.md §15), reading the secrets' environment variables the configuration names:
 * - `providers.generator: openai`: the variable named by `openai.apiKeyEnv` is set;
 * - `providers.mail: smtp`: `smtp.host` is set (it has no default), and with `smtp.user` the
 *   variable named by `smtp.passwordEnv` (a relay without authentication needs no user);
 * - `providers.verifier: http`: `verifier.httpUrl` and the variable named by `verifier.httpApiKeyEnv`.
 * @throws ConfigError naming every missing key or variable.
 */
export function requireProviderSettings(config: Config, env: Record<string, string | undefined> = process.env): void {
  const missing: string[] = [];
  const variable = (name: string, key: string) => {
    if (!name) missing.push(`${key} is empty`);
    else if (!env[name]) missing.push(`the environment variable ${name} (named by ${key}) is not set`);
  };
  const { providers } = config;
  if (providers.generator === 'openai') variable(config.openai.apiKeyEnv, 'openai.apiKeyEnv');
  if (providers.mail === 'smtp') {
    if (!config.smtp.host) missing.push('smtp.host is not set (it has no default)');
    if (config.smtp.user) variable(config.smtp.passwordEnv, 'smtp.passwordEnv');
  }
  if (providers.verifier === 'http') {
    if (!config.verifier.httpUrl) missing.push('verifier.httpUrl is empty');
    variable(config.verifier.httpApiKeyEnv, 'verifier.httpApiKeyEnv');
  }
  if (missing.length) {
    const chosen = [
      providers.generator === 'openai' && 'generator: openai',
      providers.mail === 'smtp' && 'mail: smtp',
      providers.verifier === 'http' && 'verifier: http',
    ].filter(Boolean);
    throw new ConfigError(`the providers chosen (${chosen.join(', ')}) lack settings: ${missing.join('; ')}`);
  }
}

/**
 * With `inbox.enabled`, checks that every mailbox of `inbox.connections` has its password: the
 * variable its `passwordEnv` names is set (decisions.md §17). Without it, `serve` would start and
 * mark the connection `error` at every pass.
 * @throws ConfigError naming every variable that is not set.
 */
export function requireInboxSettings(config: Config, env: Record<string, string | undefined> = process.env): void {
  if (!config.inbox.enabled) return;
  const missing = Object.entries(config.inbox.connections)
    .filter(([, mailbox]) => !env[mailbox.passwordEnv])
    .map(
      ([id, mailbox]) =>
        `the environment variable ${mailbox.passwordEnv} (inbox.connections.${id}.passwordEnv) is not set`,
    );
  if (missing.length) throw new ConfigError(`inbox.enabled is true but ${missing.join('; ')}`);
}
