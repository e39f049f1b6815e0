/**
 * The test harness: a real server on a loopback port over a real store of its own (a SQLite file
 * in a temp dir, or a PostgreSQL database of its own with `OUTREACH_TEST_STORE=postgres`: see
 * ./stores.ts), with a fake clock, tokens minted per test, and every JSON response checked
 * against the OpenAPI document the server itself serves.
 *
 *   const t = await startTestServer({ fixture: 'small' });
 *   const token = await t.mintToken('acct_a', ['backlinks:read']);
 *   const res = await t.get('/projects/prj_a1/backlinks?limit=5', token);
 *   assert.equal(res.status, 200);
 *   await t.close();
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import type { ScryptQueue } from '../../src/domain/passwords.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { silentLogger, type Logger } from '../../src/logger.js';
import { createToken } from '../../src/repos/tokens.js';
import { openStoreOf, startServer, type RunningServer } from '../../src/server.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { OpenApiValidator } from './openapi-validator.js';
import { freshStore } from './stores.js';

export const API = '/api/public/v1';
export const ALL_SCOPES = [...SCOPES];

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (no JSON encoding), for malformed-body tests. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Skip the OpenAPI response check (for routes outside the document). */
  unchecked?: boolean;
}

export interface TestServer {
  origin: string;
  store: Store;
  /** The store's location as the CLI takes it (`--db`): a SQLite file, or a PostgreSQL URL. */
  location: string;
  clock: FakeClock;
  server: RunningServer;
  dir: string;
  /** Creates a token for `accountId` with `scopes` and returns its raw value. */
  mintToken(accountId: string, scopes?: readonly string[], options?: { expiresAt?: string | null }): Promise<string>;
  /** `path` is relative to /api/public/v1 unless it starts with /api. */
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  get<T = any>(path: string, token?: string, options?: RequestOptions): Promise<TestResponse<T>>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** 'small' loads test/fixtures/small.json, 'demo' the demo seed, an object is imported as is. */
  fixture?: 'small' | 'demo' | Record<string, unknown>;
  /** Dotted config overrides, e.g. { 'limits.requestsPerMinute': 0 }. */
  config?: Record<string, unknown>;
  clock?: FakeClock;
  logger?: Logger;
  /** The queue the settings sign-ins' scrypt waits in (default: the process's). */
  scrypt?: ScryptQueue;
}

const validators = new Map<string, OpenApiValidator>();

/**
 * The validator of `doc`, one per distinct document in this process: ajv compiles the document
 * and each response schema once, not again for every test server (about 50 ms a server).
 */
function validatorFor(doc: Record<string, unknown>): OpenApiValidator {
  const key = JSON.stringify(doc);
  let validator = validators.get(key);
  if (!validator) validators.set(key, (validator = new OpenApiValidator(doc)));
  return validator;
}

export async function startTestServer(options: HarnessOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-api-test-'));
  const clock = options.clock ?? new FakeClock();
  const nowIso = isoAt(clock.now());
  const { fixture } = options;
  // This process's store (test/helpers/stores.ts), from a template loaded once per fixture.
  const fresh = await freshStore(
    dir,
    `${nowIso} ${typeof fixture === 'string' ? fixture : JSON.stringify(fixture ?? null)}`,
    fixture ? (store) => loadFixture(store, fixture, nowIso) : undefined,
  );
  // synchronous = NORMAL: in WAL mode a commit waits for no fsync (only an OS crash could tell the
  // difference, and no test makes one); the servers started as real processes keep FULL.
  const config: Config = loadConfig(
    undefined,
    {},
    { db: fresh.location, 'db.synchronous': 'normal', 'server.port': 0, ...options.config },
  );
  const store = await openStoreOf(config);
  await migrate(store);
  const server = await startServer({
    config,
    store,
    clock,
    logger: options.logger ?? silentLogger,
    scrypt: options.scrypt,
  });
  let validator: OpenApiValidator | undefined;
  let tokenCount = 0;

  const request = async (method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> => {
    const url = server.origin + (path.startsWith('/api') ? path : API + path);
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | Uint8Array | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url, { method, headers, body });
    const text = await res.text();
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${method} ${path}: content-type`);
    assert.ok(res.headers.get('x-request-id'), `${method} ${path}: X-Request-Id`);
    const json = JSON.parse(text);
    // Every response carries the envelope but the OpenAPI document itself.
    if (!path.startsWith('/api/public/openapi.json'))
      assert.equal(typeof json.ok, 'boolean', `${method} ${path}: envelope`);
    if (!opts.unchecked && !path.startsWith('/api'))
      (validator ??= validatorFor(server.app.openapi)).check(method, path, res.status, json);
    return { status: res.status, headers: res.headers, body: json };
  };

  return {
    origin: server.origin,
    store,
    location: fresh.location,
    clock,
    server,
    dir,
    async mintToken(accountId, scopes = ALL_SCOPES, tokenOptions = {}) {
      tokenCount++;
      const { token } = await createToken(
        store.db,
        { accountId, name: `test token ${tokenCount}`, scopes, expiresAt: tokenOptions.expiresAt ?? null },
        isoAt(clock.now()),
      );
      return token;
    },
    request,
    get: (path, token, opts) => request('GET', path, { ...opts, token }),
    async close() {
      await server.close();
      await store.close();
      await fresh.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A route test's server: `fixture` imported, the rate limiter off (a route test makes many
 * requests; test/http/pipeline.test.ts covers the limiter), and a token of `acct_a` with `scopes`.
 * Use in a suite's `before`, and close `t` in its `after`.
 */
export async function startRouteServer(
  fixture: NonNullable<HarnessOptions['fixture']>,
  scopes: string[],
): Promise<{ t: TestServer; token: string }> {
  const t = await startTestServer({ fixture, config: { 'limits.requestsPerMinute': 0 } });
  return { t, token: await t.mintToken('acct_a', scopes) };
}

async function loadFixture(store: Store, fixture: NonNullable<HarnessOptions['fixture']>, nowIso: string) {
  const { importDocument, importFile } = await import('../../src/import/index.js');
  if (fixture === 'small')
    await importFile(store, new URL('../fixtures/small.json', import.meta.url).pathname, { nowIso });
  else if (fixture === 'demo') {
    const { seedDemo } = await import('../../src/seed/demo.js');
    await seedDemo(store, { nowIso });
  } else await importDocument(store, fixture, { nowIso });
}
