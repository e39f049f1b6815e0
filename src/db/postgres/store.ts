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
 * - Caches over it know when they are current (`stamps`, ../change-stamps.ts): the sums of the
 *   `change_stamps` counters of each table a cache reads, which triggers bump in every
 *   transaction that writes the table (sql/postgres/0010_change_stamps_by_table.sql), read once
 *   per request; this instance's own writes (every statement that is not a SELECT, COMMIT
 *   included) drop what was read.
 * - Searches, which may read every row of a project (a term no trigram index serves, or a
 *   frequent one), run within a share of the pool (`db.searchConnections`, default a third of
 *   `db.poolSize`; `./share.ts`): the rest of the pool always serves cheap requests. A search
 *   that waits longer than `db.searchWaitMs` for its turn is refused (503).
 * - The statements requests repeat, but a search's, go as named prepared statements
 *   (./prepared.ts): parsed once per connection, and PostgreSQL may keep one plan for all runs.
 *   One that no longer serves (a migration of another instance changed its result's columns)
 *   drops its connection and is sent once more as text, outside a transaction.
 * - The pool counts as saturated (`saturated()`, for `/readyz`) once a request has waited
 *   `SATURATION.waitMs` for a connection with every connection in use, and stays so until
 *   `SATURATION.holdMs` have passed without such a wait, so readiness does not flap.
 */
import {
  CompiledQuery,
  Kysely,
  type LogEvent,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
} from 'kysely';
import pg from 'pg';
import { ChangeStamps, STAMPED_TABLES } from '../change-stamps.js';
import { describeLocation } from '../location.js';
import { isStalePreparedStatement, noteStoreFailure, storeFailureOf } from '../failures.js';
import type { Database } from '../schema.js';
import { SHARE_DEFAULTS, Share } from '../share.js';
import {
  BackupError,
  type LongReader,
  type PostgresOptions,
  type PostgresStore,
  registerDb,
  resetSignal,
} from '../store.js';
import { POSTGRES_CAPABILITIES } from './capabilities.js';
import { postgresPieces } from './pieces.js';
import { StatementNames } from './prepared.js';

/** `int8` (counts) and `numeric` (sums) as numbers; every other type as `pg` parses it. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return Number;
    return pg.types.getTypeParser(oid, format);
  },
};

/** A statement that only reads (kysely's SELECTs, the stamp's own read). */
const SELECT = /^\s*select\b/i;

/**
 * The stamp's read: the sum of each table's counters, in `STAMPED_TABLES` order, in one statement
 * (sql/postgres/0010_change_stamps_by_table.sql).
 */
const STAMP = CompiledQuery.raw(
  `SELECT ${STAMPED_TABLES.map((table, i) => `sum(${table}) AS t${i}`).join(', ')} FROM change_stamps`,
);

/** SQLSTATEs of a missing table or column: the stamp's before its migrations ran (nothing is cached then). */
const UNDEFINED = new Set(['42P01', '42703']);

/** The client's bound beyond the server's own statement timeout, ms: the answer of a cancelled statement. */
const CLIENT_GRACE_MS = 1000;

/** When the pool counts as saturated (see the module comment and docs/scaling-out.md), ms. */
const SATURATION = { waitMs: 1000, holdMs: 10_000 };

/**
 * Whether requests wait for the pool's connections: the requests that found every connection in
 * use (`queued`) and since when each waits, and when the last wait of `waitMs` or more was seen.
 */
class PoolPressure {
  private readonly waitingSince = new Set<{ at: number }>();
  private lastLongWait = Number.NEGATIVE_INFINITY;

  constructor(private readonly bounds: { waitMs: number; holdMs: number }) {}

  /** Notes a request queued for a connection; call the returned function when it has one (or gave up). */
  queued(): () => void {
    const entry = { at: performance.now() };
    this.waitingSince.add(entry);
    return () => {
      this.waitingSince.delete(entry);
      if (performance.now() - entry.at >= this.bounds.waitMs) this.lastLongWait = performance.now();
    };
  }

  saturated(): boolean {
    const now = performance.now();
    for (const entry of this.waitingSince) if (now - entry.at >= this.bounds.waitMs) this.lastLongWait = now;
    return now - this.lastLongWait < this.bounds.holdMs;
  }
}

/**
 * `pool` as kysely's dialect sees it: a connection that failed (closed, or gave up on a statement
 * whose answer never came) is destroyed when released instead of going back to the pool, and every
 * failure is noted for readiness (`noteStoreFailure`). A request that finds every connection in
 * use is noted in `pressure` while it waits.
 */
function guardedPool(
  pool: pg.Pool,
  store: () => PostgresStore,
  pressure: PoolPressure,
  names: StatementNames | undefined,
): PostgresPool {
  const wrote = () => store().stamps.forget();
  return {
    async connect(): Promise<PostgresPoolClient> {
      let client: pg.PoolClient;
      const served =
        pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10) ? pressure.queued() : undefined;
      try {
        client = await pool.connect();
      } catch (error) {
        noteStoreFailure(store(), error);
        throw error;
      } finally {
        served?.();
      }
      let broken: Error | undefined;
      // A connection that fails between two statements (inside a transaction) reports it here;
      // without a listener the event would end the process. The next statement fails with it.
      const onError = (error: Error) => {
        broken = error;
        noteStoreFailure(store(), error);
      };
      client.on('error', onError);
      // The store never streams (no cursor): every query is text and values, prepared when it is
      // named (./prepared.ts).
      const query = (text: string, values: readonly unknown[]) => {
        const name = names?.nameOf(text);
        const sent = name
          ? client.query({ name, text, values: [...values] }).catch((error: unknown) => {
              if (!isStalePreparedStatement(error)) throw error;
              // Dropped when released (its other prepared statements may be stale too); once more as
              // text, unless a transaction failed with it (the server's status: `I`, no transaction).
              broken = error as Error;
              if (client.getTransactionStatus() !== 'I') throw error;
              return client.query(text, [...values]);
            })
          : client.query(text, [...values]);
        const answer = sent.catch((error: unknown) => {
          if (storeFailureOf(error) === 'down') broken = error as Error;
          noteStoreFailure(store(), error);
          throw error;
        });
        // A write (or its COMMIT) may change what the caches hold: once it is done, read the stamp again.
        return SELECT.test(text) ? answer : answer.finally(wrote);
      };
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
  const poolSize = options.poolSize ?? 10;
  const names = (options.preparedStatements ?? true) ? new StatementNames() : undefined;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
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
  const pressure = new PoolPressure(options.saturation ?? SATURATION);
  const kyselyPool = guardedPool(pool, () => store, pressure, names);
  const dialect = new PostgresDialect({ pool: kyselyPool });
  const db = new Kysely<Database>({ dialect });
  const searches = new Share(
    options.searchConnections ?? SHARE_DEFAULTS.postgresSize(poolSize),
    options.searchWaitMs ?? SHARE_DEFAULTS.waitMs,
  );
  /**
   * A search's statements on `builder` (the store's own or a traced one), in one turn of the share;
   * sent as text, so planned for their terms each time (./prepared.ts).
   */
  const readLong =
    (builder: Kysely<Database>): LongReader =>
    (fn) =>
      searches.run(() =>
        fn(async (query) => {
          names?.keepAsText(query.sql);
          return (await builder.executeQuery(query)).rows;
        }),
      );
  const store: PostgresStore = {
    dialect: 'postgres',
    ...POSTGRES_CAPABILITIES,
    pieces: postgresPieces(() => store),
    db,
    location: describeLocation(url),
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
    stamps: new ChangeStamps({
      read: () =>
        store.db.executeQuery<Record<string, number | null>>(STAMP).then(
          ({ rows }) => STAMPED_TABLES.map((_, i) => Number(rows[0]?.[`t${i}`] ?? 0)),
          (error: unknown) => {
            if (UNDEFINED.has((error as { code?: string }).code ?? '')) return null;
            throw error;
          },
        ),
      blocked: () => false,
    }),
    createSnapshot: () =>
      Promise.reject(new Error('a PostgreSQL database cannot be snapshot: other instances may write it meanwhile')),
    backupTo: (file) =>
      Promise.reject(
        new BackupError(
          `backup copies a SQLite database; ${store.location} is PostgreSQL: back it up with pg_dump (e.g. pg_dump --format=custom --file=${file} <database>)`,
        ),
      ),
    // Its server checkpoints and vacuums by itself.
    startMaintenance: () => null,
    traceQueries(hook) {
      const report = (event: LogEvent) => hook({ sql: event.query.sql, parameters: event.query.parameters });
      // The same pool; never destroyed (that would end the pool).
      const traced = new Kysely<Database>({ dialect: new PostgresDialect({ pool: kyselyPool }), log: report });
      registerDb(traced, { store, readLong: readLong(traced) });
      store.db = traced;
      return () => {
        store.db = db;
      };
    },
    saturated: () => pressure.saturated(),
    ...resetSignal(),
    async close() {
      await db.destroy();
    },
  };
  registerDb(db, { store, readLong: readLong(db) });
  return store;
}
