/**
 * `outreach-api/testing`: outreach-api as a test fixture, one server process per call
 * (docs/testing.md). It talks to the server only by starting it and over HTTP, through the
 * fixture's documented admin API (`/__admin`, decisions.md §14; docs/fixture.md); it imports no
 * server code, only the types generated from the served documents.
 *
 *   await using fixture = await startFixture();          // the demo data, on a port of its own
 *   const { data } = await fixture.client.GET('/me');    // typed, with the demo token
 *   await fixture.reset();                               // between tests: every table back, ms
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, watch } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import createFetchClient from 'openapi-fetch';
import { createClient, type OutreachClient } from '../client/index.js';
import type { components, paths as AdminPaths } from './admin-openapi.js';
// Which program runs the server: the package's one place that decides it (the launcher's too),
// loaded from the installed package's bin/, never bundled (build/library.ts).
import platform from '../../bin/platform.cjs';

type Schemas = components['schemas'];
/** One request to the public API, as the journal keeps it (`GET /__admin/requests`). */
export type JournalEntry = Schemas['JournalEntry'];
/** One message the outbox handed to the mail transport (`GET /__admin/mail`). */
export type CapturedMail = Schemas['CapturedMail'];
/** A fault rule to add (`POST /__admin/faults`): what it matches, and the status and/or delay it forces. */
export type FaultInput = Schemas['FaultInput'];
/** A fault rule in place, with its `id`. */
export type FaultRule = Schemas['FaultRule'];
/** A message handed in as if the inbox sync had read it (`POST /__admin/inbound`): `{ raw }` or fields. */
export type InboundInput = Schemas['InboundInput'];
/** What became of an inbound message: `{ outcome, threadId, messageId, classification }`. */
export type InboundOutcome = Schemas['InboundOutcome'];
/** The service's time: `{ now, frozen }`. */
export type ClockState = Schemas['ClockState'];
/** The journal's filters: `method`, `route` (a template, `/api/public/v1/projects/:projectId/…`), `status`, `tokenId`, `since` (ISO). */
export type RequestFilter = NonNullable<AdminPaths['/requests']['get']['parameters']['query']>;

/** The demo data's token with every scope (docs/demo.md). */
export const DEMO_TOKEN = 'oapi_demo_all_scopes_0000000000000000000000000000';

/** What `serve --ready-file` writes once the server answers. */
export interface ReadyInfo {
  /** The origin, `http://127.0.0.1:<port>`. */
  url: string;
  /** The public API's base URL, `<url>/api/public/v1`. */
  apiUrl: string;
  /** The admin API's base URL, `<url>/__admin`. */
  adminUrl: string;
  pid: number;
  version: string;
  /** With `--demo`: the demo token. */
  token?: string;
}

/** An admin call the server refused: its status and the envelope's error code and message. */
export class FixtureError extends Error {
  override name = 'FixtureError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** The control plane of a running fixture, over its admin API. */
export interface FixtureControl {
  url: string;
  apiUrl: string;
  adminUrl: string;
  /** The API token `client` sends: the demo token with every scope on the demo data. */
  token: string | undefined;
  /** A typed client of the public API (`outreach-api/client`) sending `token`. */
  client: OutreachClient;
  /** Every table back to the snapshot; clears the journal, the mail, the faults, the clock and the limiter. Answers `{ ms }`. */
  reset(): Promise<{ ms: number }>;
  /** Makes the current data the one `reset()` restores. Answers `{ ms }`. */
  snapshot(): Promise<{ ms: number }>;
  /** The latest requests to the public API, newest first, matching `filter`. */
  requests(filter?: RequestFilter): Promise<JournalEntry[]>;
  /** Empties the journal; answers how many entries it held. */
  clearRequests(): Promise<number>;
  /** The mail handed to the transport since the start or the last reset, newest first. */
  mail(): Promise<CapturedMail[]>;
  /** Empties the captured mail; answers how many messages it held. */
  clearMail(): Promise<number>;
  /** Hands in one message as if the inbox sync had read it (docs/inbox.md). */
  inbound(message: InboundInput): Promise<InboundOutcome>;
  faults: {
    /** Adds a rule; answers it with its `id`. */
    add(rule: FaultInput): Promise<FaultRule>;
    list(): Promise<FaultRule[]>;
    /** @throws FixtureError 404 when no rule has that id. */
    remove(id: string): Promise<void>;
    /** Removes every rule; answers how many there were. */
    clear(): Promise<number>;
  };
  clock: {
    /** Sets the service's time to `iso`; `frozen`: it stays there (default: it runs on from there). */
    set(iso: string, options?: { frozen?: boolean }): Promise<ClockState>;
    /** Moves the service's time forward by `ms`. */
    advance(ms: number): Promise<ClockState>;
    get(): Promise<ClockState>;
    /** Back to the system clock. */
    reset(): Promise<ClockState>;
  };
}

/** A fixture this process started: its control plane, its process, and `stop()`. */
export interface Fixture extends FixtureControl, AsyncDisposable {
  /** The server's own process id. */
  pid: number;
  /** Ends the server (SIGTERM, then SIGKILL after 5 s) and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface FixtureOptions {
  /** `'demo'` (the default): the demo data (docs/demo.md); otherwise the path of an import document (docs/import-format.md). */
  dataset?: string;
  /** The seed of the ids that writes create (`serve --seed`): the same requests after a reset get the same ids. */
  seed?: number | string;
  /** The server's configuration, as a config file holds it (docs/configuration.md), e.g. `{ limits: { requestsPerMinute: 0 } }`. */
  config?: Record<string, unknown>;
  /** Environment variables of the server, over this process's (e.g. `OUTREACH_API_LOG_LEVEL`). */
  env?: Record<string, string>;
  /** How long the server may take to be ready, ms (default 30,000); then the start fails. */
  startTimeoutMs?: number;
  /** The API token `token` and `client` use; default: the demo token on the demo data, none on an import document. */
  token?: string;
}

const OPTION_NAMES = ['dataset', 'seed', 'config', 'env', 'startTimeoutMs', 'token'];
const DEFAULT_START_TIMEOUT_MS = 30_000;
/** How long `stop()` waits after SIGTERM before SIGKILL, ms. */
const STOP_GRACE_MS = 5_000;
/** How much of the server's last output a failed start reports, characters. */
const OUTPUT_KEPT = 8_192;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** @throws TypeError naming the first unknown or ill-typed option. */
function checkOptions(options: unknown): asserts options is FixtureOptions {
  if (!isRecord(options)) throw new TypeError('startFixture: options must be an object');
  for (const name of Object.keys(options))
    if (!OPTION_NAMES.includes(name))
      throw new TypeError(`startFixture: unknown option "${name}" (known: ${OPTION_NAMES.join(', ')})`);
  const { dataset, seed, config, env, startTimeoutMs, token } = options;
  const fail = (name: string, what: string) => {
    throw new TypeError(`startFixture: option "${name}" must be ${what}`);
  };
  if (dataset !== undefined && (typeof dataset !== 'string' || dataset === ''))
    fail('dataset', "'demo' or the path of an import document");
  if (seed !== undefined && typeof seed !== 'number' && typeof seed !== 'string') fail('seed', 'a number or a string');
  if (config !== undefined && !isRecord(config)) fail('config', 'an object');
  if (env !== undefined && (!isRecord(env) || Object.values(env).some((v) => typeof v !== 'string')))
    fail('env', 'an object of strings');
  if (startTimeoutMs !== undefined && !(typeof startTimeoutMs === 'number' && startTimeoutMs > 0))
    fail('startTimeoutMs', 'a positive number of milliseconds');
  if (token !== undefined && typeof token !== 'string') fail('token', 'a string');
}

/** Runs one admin call; answers the envelope's `data`. @throws FixtureError on an error envelope. */
async function unwrap<T>(call: Promise<{ data?: { data: T }; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (data) return data.data;
  const body = (isRecord(error) && isRecord(error.error) ? error.error : {}) as Record<string, unknown>;
  const code = typeof body.code === 'string' ? body.code : 'UNKNOWN';
  throw new FixtureError(
    response.status,
    code,
    `${response.url}: ${response.status} ${code}${typeof body.message === 'string' ? `: ${body.message}` : ''}`,
    body.details,
  );
}

/**
 * The control plane of a fixture already running (one started by `serve --fixture`, e.g. in a
 * runner's global setup, or described by the file `serve --ready-file` wrote): give its `url`
 * (and `apiUrl`/`adminUrl` when they are not the defaults under it), the API token `client`
 * sends, and `adminToken` when the server has `fixture.adminToken`.
 */
export function connectFixture(target: {
  url: string;
  apiUrl?: string;
  adminUrl?: string;
  token?: string;
  adminToken?: string;
}): FixtureControl {
  const url = target.url.replace(/\/$/, '');
  const apiUrl = target.apiUrl ?? `${url}/api/public/v1`;
  const adminUrl = target.adminUrl ?? `${url}/__admin`;
  // JSON on every call: the admin API refuses a state-changing call without it (docs/fixture.md).
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (target.adminToken) headers.Authorization = `Bearer ${target.adminToken}`;
  const admin = createFetchClient<AdminPaths>({ baseUrl: adminUrl, headers });
  return {
    url,
    apiUrl,
    adminUrl,
    token: target.token,
    client: createClient({ baseUrl: apiUrl, token: target.token }),
    reset: () => unwrap(admin.POST('/reset')),
    snapshot: () => unwrap(admin.POST('/snapshot')),
    requests: (filter) => unwrap(admin.GET('/requests', { params: { query: filter } })),
    clearRequests: async () => (await unwrap(admin.DELETE('/requests'))).deleted,
    mail: () => unwrap(admin.GET('/mail')),
    clearMail: async () => (await unwrap(admin.DELETE('/mail'))).deleted,
    inbound: (message) => unwrap(admin.POST('/inbound', { body: message })),
    faults: {
      add: (rule) => unwrap(admin.POST('/faults', { body: rule })),
      list: () => unwrap(admin.GET('/faults')),
      remove: async (id) => {
        await unwrap(admin.DELETE('/faults/{faultId}', { params: { path: { faultId: id } } }));
      },
      clear: async () => (await unwrap(admin.DELETE('/faults'))).deleted,
    },
    clock: {
      set: (iso, options = {}) =>
        unwrap(admin.PUT('/clock', { body: { now: iso, ...(options.frozen === undefined ? {} : options) } })),
      advance: (ms) => unwrap(admin.PUT('/clock', { body: { advanceMs: ms } })),
      get: () => unwrap(admin.GET('/clock')),
      reset: () => unwrap(admin.DELETE('/clock')),
    },
  };
}

/** Servers started by this process and not stopped yet: ended (and their directories removed) when it exits. */
const running = new Set<{ child: ChildProcess; dir: string }>();
let exitHookInstalled = false;

function track(entry: { child: ChildProcess; dir: string }): void {
  running.add(entry);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A forgotten stop(): the server would also stop by itself (--exit-with-parent), but its directory would stay.
  process.on('exit', () => {
    for (const { child, dir } of running) {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/**
 * Starts the server on its own port (0: the OS picks) in a temporary directory of its own, on an
 * in-memory copy of `dataset`, with the fixture's admin API on, and resolves once it is ready
 * (the file `--ready-file` writes). The server stops by itself when this process ends, however
 * it ends (`--exit-with-parent`: its standard input is a pipe from this process).
 *
 * @throws TypeError on an unknown or ill-typed option, naming it.
 * @throws Error when the server cannot start, exits, or is not ready within `startTimeoutMs`:
 *   the message ends with its last output; nothing is left running and the directory is removed.
 */
export async function startFixture(options: FixtureOptions = {}): Promise<Fixture> {
  checkOptions(options);
  const found = platform.serverCommand();
  if ('error' in found) throw new Error(`outreach-api/testing: ${found.error}`);
  const { command, args } = found;
  const dataset = options.dataset ?? 'demo';
  const dir = await mkdtemp(join(tmpdir(), 'outreach-api-fixture-'));
  const readyFile = join(dir, 'ready.json');
  const argv = [...args, '--db', ':memory:'];
  if (options.config) {
    const file = join(dir, 'config.json');
    await writeFile(file, JSON.stringify(options.config));
    argv.push('--config', file);
  }
  argv.push(
    'serve',
    '--fixture',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--ready-file',
    readyFile,
    '--exit-with-parent',
  );
  argv.push(...(dataset === 'demo' ? ['--demo'] : ['--import', resolve(dataset)]));
  if (options.seed !== undefined) argv.push('--seed', String(options.seed));

  const child = spawn(command, argv, {
    cwd: dir,
    env: { OUTREACH_API_LOG_LEVEL: 'warn', ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const entry = { child, dir };
  track(entry);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  // Our end of its standard input stays open for as long as this process lives.
  child.stdin!.on('error', () => {});

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(kill);
      }
      running.delete(entry);
      await rm(dir, { recursive: true, force: true });
    })());

  let ready: ReadyInfo;
  try {
    ready = await readyOf(child, dir, readyFile, options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  } catch (error) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await stop();
    throw new Error(`${(error as Error).message}; its last output:\n${output.trimEnd() || '(none)'}`);
  }
  // Nothing of the server's keeps this process alive: a runner that forgets stop() still exits,
  // and the server with it.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as unknown as { unref?: () => void } | null)?.unref?.();

  const token = options.token ?? (dataset === 'demo' ? (ready.token ?? DEMO_TOKEN) : undefined);
  const adminToken =
    options.env?.OUTREACH_API_FIXTURE_ADMIN_TOKEN ??
    (options.config?.fixture as { adminToken?: string } | undefined)?.adminToken ??
    process.env.OUTREACH_API_FIXTURE_ADMIN_TOKEN;
  return {
    ...connectFixture({ ...ready, token, adminToken }),
    pid: child.pid!,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/**
 * Resolves with the ready file's content once the server has written it (it writes it whole, by a
 * rename, once it answers). Watches the directory, with a slow poll in case a watch event is lost.
 * @throws Error when the process cannot be started, exits first, or `timeoutMs` passes.
 */
function readyOf(child: ChildProcess, dir: string, readyFile: string, timeoutMs: number): Promise<ReadyInfo> {
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, ready?: ReadyInfo) => {
      if (settled) return;
      settled = true;
      watcher.close();
      clearInterval(poll);
      clearTimeout(timer);
      child.off('exit', onExit);
      child.off('error', onError);
      if (error) reject(error);
      else resolvePromise(ready!);
    };
    const check = () => {
      // Not there yet, or (never with a rename) not whole: the next event or poll reads it again.
      readFile(readyFile, 'utf8')
        .then((text) => finish(undefined, JSON.parse(text) as ReadyInfo))
        .catch(() => {});
    };
    const onExit = (code: number | null, signal: string | null) =>
      finish(new Error(`outreach-api exited (${signal ?? `code ${code}`}) before it was ready`));
    const onError = (error: Error) => finish(new Error(`outreach-api could not be started: ${error.message}`));
    const watcher = watch(dir, (_event, name) => {
      if (name === 'ready.json') check();
    });
    const poll = setInterval(check, 250);
    const timer = setTimeout(() => finish(new Error(`outreach-api was not ready within ${timeoutMs} ms`)), timeoutMs);
    child.on('exit', onExit);
    child.on('error', onError);
  });
}
