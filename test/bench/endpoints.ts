/**
 * The endpoints of the load run, their targets, and what the floors need to imitate them:
 * the real response bodies (static and framework floors) and the SQL each one runs (direct floor), both
 * captured from the project's own app built in-process over the bench database.
 */
import { Buffer } from 'node:buffer';
import type Database from 'better-sqlite3';
import type { PoolClient, QueryResult } from 'pg';
import { systemClock } from '../../src/domain/clock.js';
import type { Config } from '../../src/config.js';
import { openStore, type Store } from '../../src/db/connection.js';
import { assembleApp } from '../../src/app.js';
import { silentLogger } from '../../src/logger.js';
import { createProviders } from '../../src/providers/index.js';
import { BENCH_PROJECT_ID, BENCH_SITES, BENCH_TOKEN, LEAD_SEARCH, PROSPECT_SEARCH } from './generate.js';
import type { FloorRoute } from './floors.js';
import { sqliteStore } from '../helpers/stores.js';

export const API = '/api/public/v1';

/** `list`: a page with its exact total; the p99 targets depend on it (see TARGETS). */
export type Kind = 'me' | 'list' | 'deep' | 'search' | 'detail' | 'write';

export interface Endpoint {
  name: string;
  kind: Kind;
  method: 'GET' | 'PATCH' | 'POST';
  /** Path with query; for writes the first request's (ids vary per request, see `request`). */
  url: string;
  /** Writes: request `i` (a unique idempotency key each, ids spread over many records). */
  request?: (i: number) => { url: string; body: string };
  /** Headers of a read instead of the bench token's `Authorization` (the settings page's session cookie). */
  headers?: Record<string, string>;
}

/** p99 at half the peak rate, ms, by kind (the issue sets none for GET /me and the backlink detail). */
export const P99_TARGET_MS: Partial<Record<Kind, number>> = { list: 10, deep: 25, search: 25, write: 15 };
/** Minimum share of a floor's req/s: GET /me against the framework floor, lists against the direct one. */
export const ME_FRAMEWORK_RATIO = 0.7;
export const LIST_DIRECT_RATIO = 0.7;
/** Kinds held to the direct-floor ratio ("every list endpoint, with its exact total"). */
export const LIST_KINDS: readonly Kind[] = ['list', 'deep', 'search'];

export interface Fixtures {
  backlinkId: string;
  drafts: string[];
  threads: string[];
}

/** Records the writes and detail use, read from the bench database. */
export function fixtures(db: Database.Database): Fixtures {
  const site = BENCH_SITES[0].id;
  const backlink = db
    .prepare(
      `SELECT b.id FROM backlinks b WHERE b.site_id = ? AND (SELECT count(*) FROM backlink_checks c WHERE c.backlink_id = b.id) = 3
       ORDER BY b.created_at DESC LIMIT 1`,
    )
    .get(site) as { id: string };
  const drafts = (
    db.prepare('SELECT id FROM drafts WHERE site_id = ? ORDER BY created_at DESC LIMIT 1000').all(site) as {
      id: string;
    }[]
  ).map((r) => r.id);
  const threads = (
    db.prepare('SELECT id FROM threads WHERE site_id = ? ORDER BY updated_at DESC LIMIT 1000').all(site) as {
      id: string;
    }[]
  ).map((r) => r.id);
  return { backlinkId: backlink.id, drafts, threads };
}

export function endpoints(fx: Fixtures, runId: string): Endpoint[] {
  const project = `${API}/projects/${BENCH_PROJECT_ID}`;
  const site = `${project}/sites/${BENCH_SITES[0].id}`;
  const draftBody = (i: number) =>
    JSON.stringify({
      subject: `A resource for your gear list (${i % 97})`,
      body: `Hi there,\n\nI enjoyed your roundup and think our guide would fit your readers. Revision ${i}.\n\nBest,\nBench`,
    });
  const replyBody = (i: number) =>
    JSON.stringify({
      body: `Thanks for getting back to me! Here is the link we talked about (${i}).`,
      idempotencyKey: `bench-${runId}-${i}`,
    });
  return [
    { name: 'GET /me', kind: 'me', method: 'GET', url: `${API}/me` },
    { name: 'backlinks limit=25', kind: 'list', method: 'GET', url: `${project}/backlinks?limit=25` },
    { name: 'backlinks status=live', kind: 'list', method: 'GET', url: `${project}/backlinks?limit=25&status=live` },
    { name: 'backlinks page=20000', kind: 'deep', method: 'GET', url: `${project}/backlinks?limit=25&page=20000` },
    {
      name: `prospects search`,
      kind: 'search',
      method: 'GET',
      url: `${project}/prospects?limit=25&search=${encodeURIComponent(PROSPECT_SEARCH)}`,
    },
    {
      name: `leads search`,
      kind: 'search',
      method: 'GET',
      url: `${project}/leads?limit=25&search=${encodeURIComponent(LEAD_SEARCH)}`,
    },
    { name: 'backlink detail', kind: 'detail', method: 'GET', url: `${project}/backlinks/${fx.backlinkId}` },
    {
      name: 'PATCH draft',
      kind: 'write',
      method: 'PATCH',
      url: `${site}/drafts/${fx.drafts[0]}`,
      request: (i) => ({ url: `${site}/drafts/${fx.drafts[i % fx.drafts.length]}`, body: draftBody(i) }),
    },
    {
      name: 'POST reply',
      kind: 'write',
      method: 'POST',
      url: `${site}/threads/${fx.threads[0]}/replies`,
      request: (i) => ({ url: `${site}/threads/${fx.threads[i % fx.threads.length]}/replies`, body: replyBody(i) }),
    },
  ];
}

export const AUTH_HEADERS = { authorization: `Bearer ${BENCH_TOKEN}` };
export const WRITE_HEADERS = { ...AUTH_HEADERS, 'content-type': 'application/json' };

interface Executed {
  sql: string;
  params: unknown[];
  rows: unknown;
}

/**
 * Records every statement run on `store` while `recording` is set, with its rows. SQLite: wraps
 * `sqliteStore(store).sqlite.prepare` (by Kysely or directly); PostgreSQL: wraps the pool's
 * `connect`, so each connection's `query` is recorded (kysely's driver goes through it). Must be
 * installed before the app runs anything.
 */
function recordStatements(store: Store) {
  const log: Executed[] = [];
  const state = { recording: false, log };
  if (store.dialect === 'postgres') {
    const pool = store.pool;
    const connect = pool.connect.bind(pool) as () => Promise<PoolClient>;
    const wrapped = new WeakSet<PoolClient>();
    (pool as { connect: unknown }).connect = async () => {
      const client = await connect();
      // The pool hands the same clients out again: each is wrapped once.
      if (wrapped.has(client)) return client;
      wrapped.add(client);
      type Sent = string | { text: string; values?: unknown[] };
      const query = client.query.bind(client) as (sent: Sent, values?: unknown[]) => Promise<QueryResult>;
      // A statement is sent as text and values, or as a prepared statement's config (the store's stamp read).
      (client as { query: unknown }).query = async (sent: Sent, values?: unknown[]) => {
        const result = await query(sent, values);
        const [text, params] = typeof sent === 'string' ? [sent, values] : [sent.text, sent.values];
        if (state.recording) log.push({ sql: text, params: params ?? [], rows: result.rows });
        return result;
      };
      return client;
    };
    return state;
  }
  const prepare = sqliteStore(store).sqlite.prepare.bind(sqliteStore(store).sqlite);
  (sqliteStore(store).sqlite as { prepare: unknown }).prepare = (sql: string) => {
    const stmt = prepare(sql) as unknown as Record<string, unknown>;
    return new Proxy(stmt, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        if (prop === 'all' || prop === 'get' || prop === 'run' || prop === 'iterate') {
          return (...params: unknown[]) => {
            const result = (value as (...a: unknown[]) => unknown).apply(target, params);
            if (state.recording) log.push({ sql, params, rows: prop === 'iterate' ? null : result });
            return result;
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  };
  return state;
}

export interface Captured {
  endpoint: Endpoint;
  status: number;
  /** The response body as the app sent it. */
  body: string;
  bytes: number;
  /** Every statement the request ran, in order. */
  statements: {
    sql: string;
    params: unknown[];
    role: 'auth' | 'lookup' | 'total' | 'page' | 'write';
    /** Its rows were the store's JSON text of each item (`{ item }`, src/db/json-rows.ts). */
    jsonItems: boolean;
  }[];
  /** The list's `total`, when it has one. */
  total: number | null;
}

/**
 * What a statement is for. `total`: one row of one number (a count, or a maintained counter);
 * `auth`: the token lookup and its last-used stamp; `lookup`: the project/site ownership check;
 * `write`: anything that is not a SELECT. The rest make the page.
 */
function roleOf(e: Executed): Captured['statements'][number]['role'] {
  const sql = e.sql.replace(/\s+/g, ' ').trim().toLowerCase();
  if (!sql.startsWith('select') && !sql.startsWith('with')) return 'write';
  if (/\brow_counts\b/.test(sql)) return 'total';
  if (/\bapi_tokens\b/.test(sql) && !/\bbacklinks\b|\bprospects\b|\bleads\b/.test(sql)) return 'auth';
  if (
    /^select .* from "?(projects|sites)"? /.test(sql) &&
    /"?id"? = (\?|\$\d+)/.test(sql) &&
    !/\b(backlinks|prospects|leads|drafts|threads)\b/.test(sql)
  )
    return 'lookup';
  const rows = e.rows;
  const single = Array.isArray(rows) ? (rows.length === 1 ? rows[0] : undefined) : rows;
  if (
    single &&
    typeof single === 'object' &&
    Object.keys(single).length === 1 &&
    typeof Object.values(single)[0] === 'number' &&
    /count\(|row_counts|counter/.test(sql)
  ) {
    return 'total';
  }
  return 'page';
}

/** Whether `rows` are the store's JSON text of each item: `{ item }` rows only, at least one. */
const isJsonItems = (rows: unknown) =>
  Array.isArray(rows) &&
  rows.length > 0 &&
  rows.every((row) => {
    const keys = Object.keys(row as object);
    return keys.length === 1 && keys[0] === 'item' && typeof (row as { item: unknown }).item === 'string';
  });

/**
 * Runs each endpoint once through the project's app, in this process, over `dbPath` (a SQLite
 * file, or a PostgreSQL URL; writes included: the database is the run's working copy), recording
 * the body and the SQL.
 */
export async function capture(dbPath: string, config: Config, list: Endpoint[]): Promise<Captured[]> {
  const store = await openStore(dbPath);
  try {
    const recorder = recordStatements(store);
    const { app } = assembleApp({
      config,
      store,
      clock: systemClock,
      logger: silentLogger,
      providers: createProviders(config, silentLogger),
    });
    const out: Captured[] = [];
    for (const endpoint of list) {
      const req = endpoint.request?.(0);
      recorder.log.length = 0;
      recorder.recording = true;
      const res = await app.fetch(
        new Request(`http://bench${req?.url ?? endpoint.url}`, {
          method: endpoint.method,
          headers: req ? WRITE_HEADERS : AUTH_HEADERS,
          body: req?.body,
        }),
      );
      const body = await res.text();
      recorder.recording = false;
      if (res.status >= 300) throw new Error(`${endpoint.name}: the app answered ${res.status}: ${body.slice(0, 300)}`);
      const statements = recorder.log.map((e) => ({
        sql: e.sql,
        params: e.params,
        role: roleOf(e),
        jsonItems: isJsonItems(e.rows),
      }));
      const parsed = JSON.parse(body) as { data?: { pagination?: { total?: number } } };
      out.push({
        endpoint,
        status: res.status,
        body,
        bytes: Buffer.byteLength(body),
        statements,
        total: parsed.data?.pagination?.total ?? null,
      });
    }
    return out;
  } finally {
    await store.close();
  }
}

/** The static and framework floors' route for a captured endpoint: the same body. */
export function staticRoute(c: Captured): FloorRoute {
  return { method: c.endpoint.method, url: c.endpoint.request ? null : c.endpoint.url, body: c.body };
}

/** The direct floor's route: the page statements, and the pagination with the captured total as a constant. */
export function directRoute(c: Captured): FloorRoute | null {
  if (c.endpoint.kind === 'write' || c.endpoint.kind === 'me') return null;
  const pages = c.statements.filter((s) => s.role === 'page');
  if (pages.length === 0) return null;
  const statements = pages.map(({ sql, params }) => ({ sql, params }));
  const parsed = JSON.parse(c.body) as {
    data: { pagination?: { page: number; limit: number; total: number; hasMore: boolean } };
  };
  const pagination = parsed.data.pagination ?? { page: 1, limit: 25, total: 0, hasMore: false };
  const jsonItems = pages.length === 1 && pages[0]!.jsonItems;
  return { method: 'GET', url: c.endpoint.url, statements, pagination, jsonItems };
}
