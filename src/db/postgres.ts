/**
 * The PostgreSQL store (decisions.md §16): kysely's `PostgresDialect` over a `pg` pool of
 * `db.poolSize` connections.
 *
 * - Every statement is bounded in time: the server cancels one that runs past
 *   `db.statementTimeoutMs` (`statement_timeout`), and the client gives up on one whose answer
 *   has not come a second after that (an unreachable server), or on a connection that does not
 *   open within `db.statementTimeoutMs`; a connection that gave up on a statement is closed, never
 *   handed out again. So a request never hangs on the database: it fails, and the HTTP layer
 *   answers 503 (`storeUnavailable`).
 * - `int8` and `numeric` values (counts, sums) come back as numbers, as SQLite gives them.
 * - The password comes from the URL or from `PGPASSWORD` (read by `pg` itself); the store's
 *   `location` never holds it (`describeLocation`).
 * - Nothing is cached across requests (`changeStamp()` is null): other instances write the same
 *   database.
 */
import { Kysely, type LogEvent, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { describeLocation } from './location.js';
import { noteStoreFailure, storeFailureOf } from './failures.js';
import type { Database } from './schema.js';
import { type PostgresOptions, type PostgresStore, registerDb, resetSignal } from './store.js';

/** `int8` (counts) and `numeric` (sums) as numbers; every other type as `pg` parses it. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return Number;
    return pg.types.getTypeParser(oid, format);
  },
};

/** The client's bound beyond the server's own statement timeout, ms: the answer of a cancelled statement. */
const CLIENT_GRACE_MS = 1000;

/**
 * `pool` as kysely's dialect sees it: a connection that failed (closed, or gave up on a statement
 * whose answer never came) is destroyed when released instead of going back to the pool, and every
 * failure is noted for readiness (`noteStoreFailure`).
 */
function guardedPool(pool: pg.Pool, store: () => PostgresStore): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        noteStoreFailure(store(), error);
        throw error;
      }
      let broken: Error | undefined;
      // A connection that fails between two statements (inside a transaction) reports it here;
      // without a listener the event would end the process. The next statement fails with it.
      const onError = (error: Error) => {
        broken = error;
        noteStoreFailure(store(), error);
      };
      client.on('error', onError);
      // The store never streams (no cursor): every query is text and values.
      const query = (text: string, values: readonly unknown[]) =>
        client.query(text, [...values]).catch((error: unknown) => {
          if (storeFailureOf(error) === 'down') broken = error as Error;
          noteStoreFailure(store(), error);
          throw error;
        });
      const release = () => {
        client.removeListener('error', onError);
        client.release(broken);
      };
      return { query: query as unknown as PostgresPoolClient['query'], release };
    },
    end: () => pool.end(),
  };
}

/**
 * Opens a pool on the PostgreSQL database at `url` (`postgres://` or `postgresql://`). No
 * connection is made until the first statement. Does not migrate: see `migrate()`.
 */
export function openPostgresStore(url: string, options: PostgresOptions = {}): PostgresStore {
  const statementTimeoutMs = options.statementTimeoutMs ?? 5000;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + CLIENT_GRACE_MS,
    connectionTimeoutMillis: statementTimeoutMs,
    keepAlive: true,
    application_name: 'outreach-api',
    types,
  });
  // An idle connection that fails (the server restarted) is dropped by the pool; without a
  // listener the event would end the process.
  pool.on('error', (error) => noteStoreFailure(store, error));
  const kyselyPool = guardedPool(pool, () => store);
  const dialect = new PostgresDialect({ pool: kyselyPool });
  const db = new Kysely<Database>({ dialect });
  const store: PostgresStore = {
    dialect: 'postgres',
    db,
    location: describeLocation(url),
    sharedByInstances: true,
    health: { downSince: null },
    pool,
    async connectAlone() {
      const client = new pg.Client({ connectionString: url, types, application_name: 'outreach-api' });
      client.on('error', (error) => noteStoreFailure(store, error));
      try {
        await client.connect();
      } catch (error) {
        noteStoreFailure(store, error);
        throw error;
      }
      return client;
    },
    changeStamp: () => null,
    markChanged() {},
    traceQueries(hook) {
      const report = (event: LogEvent) => hook({ sql: event.query.sql, parameters: event.query.parameters });
      // The same pool; never destroyed (that would end the pool).
      const traced = new Kysely<Database>({ dialect: new PostgresDialect({ pool: kyselyPool }), log: report });
      registerDb(traced, { store });
      store.db = traced;
      return () => {
        store.db = db;
      };
    },
    ...resetSignal(),
    async close() {
      await db.destroy();
    },
  };
  registerDb(db, { store });
  return store;
}
