/**
 * The SQLite store: one connection (better-sqlite3 under Node, `node:sqlite` under Deno, chosen at
 * run time so one bundle serves both) under kysely, with one serialisation point.
 *
 * - **One queue for the one connection.** Every statement, kysely's and the hot paths' alike, runs
 *   while holding the connection's lock (`ConnectionLock`): a transaction holds it from its
 *   `BEGIN IMMEDIATE` to its `COMMIT`, so no other request's statement can run on the connection
 *   in between (it would join the transaction, or read its uncommitted rows). `BEGIN IMMEDIATE`
 *   takes the write lock at once, so a write transaction never fails upgrading a read lock.
 * - **Hot paths run at once.** A compiled statement (`./compiled.ts`) runs synchronously, from the
 *   prepared-statement cache, when the connection is free or when it is given the transaction that
 *   holds it; otherwise it waits its turn through kysely like any query. That keeps the cost of
 *   the per-request statements (token lookup, `GET /me`, idempotency keys, list pages) what it was
 *   when they were synchronous.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type LogEvent,
  type QueryResult,
  SqliteDialect,
  type SqliteDatabase,
} from 'kysely';
import { noteStoreFailure } from '../failures.js';
import {
  type DirectResult,
  type DirectRunner,
  type LongReader,
  type OpenOptions,
  type TracedQuery,
  type TurnRead,
  registerDb,
  resetSignal,
  type SqliteStore,
} from '../store.js';
import type { Database } from '../schema.js';
import type { SqliteHandle, SqliteStatement } from './handle.js';
import { registerSqlFunctions } from './functions.js';
import { SHARE_DEFAULTS } from '../share.js';
import { isDeno } from './addon.js';
import { openSqliteReaders } from './readers.js';

type CachedStatement = SqliteStatement & ReturnType<SqliteDatabase['prepare']>;

async function openRaw(path: string, options: OpenOptions): Promise<SqliteHandle> {
  if (isDeno) {
    const { openNodeSqlite } = await import('./node-sqlite.js');
    return openNodeSqlite(path);
  }
  const { default: BetterSqlite3 } = await import('better-sqlite3');
  const nativeBinding =
    options.nativeBinding ?? (globalThis as { __OUTREACH_NATIVE_SQLITE__?: unknown }).__OUTREACH_NATIVE_SQLITE__;
  return new BetterSqlite3(
    path,
    nativeBinding ? { nativeBinding: nativeBinding as string } : {},
  ) as unknown as SqliteHandle;
}

/**
 * The lock of the one connection: held by a kysely query or transaction from `acquire` to
 * `release`, handed to the waiters in the order they came.
 */
class ConnectionLock {
  private held = false;
  private readonly waiting: (() => void)[] = [];

  /** Whether nothing holds the connection (nor waits for it). */
  get free(): boolean {
    return !this.held;
  }

  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

/** Statements kept prepared, by SQL text. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * `sqlite` with the statements it prepares kept for reuse. Preparing costs as much as running a
 * small page query, and the SQL text kysely compiles is the same for every request of a route
 * (values are parameters), so a small least-recently-used cache serves nearly every query.
 * Statements are run synchronously and never iterated (the store does not stream), so one
 * statement is never in use twice.
 */
class StatementCache {
  private readonly statements = new Map<string, CachedStatement>();
  private closed = false;

  /** @param failed sees every error a statement threw (before it is rethrown). */
  constructor(
    readonly sqlite: SqliteHandle,
    private readonly failed: (error: unknown) => void,
  ) {}

  /** Closes the connection; a second call does nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sqlite.close();
  }

  prepare(sql: string): CachedStatement {
    let statement = this.statements.get(sql);
    if (statement !== undefined) {
      this.statements.delete(sql); // re-inserted below as the most recently used
    } else {
      statement = this.sqlite.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, statement);
    return statement;
  }

  /** Runs `sql` with `parameters` now: its rows, or the rows it changed. */
  run(sql: string, parameters: readonly unknown[]): DirectResult & { reader: boolean } {
    try {
      const statement = this.prepare(sql);
      if (statement.reader) return { rows: statement.all(parameters), changes: 0, reader: true };
      return { rows: [], changes: Number(statement.run(parameters).changes), reader: false };
    } catch (error) {
      this.failed(error);
      throw error;
    }
  }

  /** Runs `sql` (statements without parameters) now. */
  exec(sql: string): void {
    try {
      this.sqlite.exec(sql);
    } catch (error) {
      this.failed(error);
      throw error;
    }
  }
}

/** The one connection as kysely's driver sees it. */
class Connection implements DatabaseConnection {
  constructor(private readonly statements: StatementCache) {}

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const { rows, changes, reader } = this.statements.run(compiled.sql, compiled.parameters);
    return Promise.resolve(reader ? { rows: rows as R[] } : { rows: [], numAffectedRows: BigInt(changes) });
  }

  // biome-ignore lint/correctness/useYield: the store never streams; kysely requires the method.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the SQLite store does not stream query results');
  }
}

/**
 * kysely's driver over the one connection: transactions begin `IMMEDIATE`, and every use of the
 * connection goes through `lock`. Shared by every query builder of the store (`traceQueries`' too).
 */
class LockedDriver implements Driver {
  constructor(
    private readonly connection: Connection,
    private readonly lock: ConnectionLock,
    private readonly statements: StatementCache,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock.acquire();
    return this.connection;
  }

  async beginTransaction(): Promise<void> {
    this.statements.exec('BEGIN IMMEDIATE');
  }

  async commitTransaction(): Promise<void> {
    this.statements.exec('COMMIT');
  }

  async rollbackTransaction(): Promise<void> {
    // A failed COMMIT (a full disk, an I/O error) may have ended the transaction already.
    try {
      this.statements.exec('ROLLBACK');
    } catch (error) {
      if (!/no transaction is active/i.test((error as Error).message)) throw error;
    }
  }

  async releaseConnection(): Promise<void> {
    this.lock.release();
  }

  /** The store closes the connection itself (`SqliteStore.close`). */
  async destroy(): Promise<void> {}
}

/** kysely's SQLite dialect with `driver` instead of its own. */
class LockedDialect extends SqliteDialect {
  constructor(private readonly driver: LockedDriver) {
    super({ database: {} as SqliteDatabase });
  }

  override createDriver(): Driver {
    return this.driver;
  }
}

/**
 * Opens (creating if needed, with its directory) the SQLite database at `path` with WAL, foreign
 * keys, `synchronous = FULL` (or `options.synchronous`) and a busy timeout. Does not migrate: see
 * `migrate()`.
 * @throws when the file cannot be opened or is not a SQLite database.
 */
export async function openSqliteStore(path: string, options: OpenOptions = {}): Promise<SqliteStore> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = await openRaw(path, options);
  const busyTimeoutMs = Math.trunc(options.busyTimeoutMs ?? 5000);
  sqlite.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec(`PRAGMA synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  sqlite.exec('PRAGMA foreign_keys = ON');
  // Statement journals (which the row_counts triggers make every write keep) stay in memory.
  sqlite.exec('PRAGMA temp_store = MEMORY');
  registerSqlFunctions(sqlite);
  const statements = new StatementCache(sqlite, (error) => noteStoreFailure(store, error));
  const lock = new ConnectionLock();
  const driver = new LockedDriver(new Connection(statements), lock, statements);
  const dialect = new LockedDialect(driver);
  const db = new Kysely<Database>({ dialect });

  // Outside a transaction: at once when the connection is free, else not now (wait through kysely).
  const whenFree: DirectRunner = {
    sqlite,
    run: (sql, parameters) => (lock.free ? statements.run(sql, parameters) : undefined),
  };
  // Inside a transaction, which holds the connection: always at once.
  const held: DirectRunner = { sqlite, run: (sql, parameters) => statements.run(sql, parameters) };

  // Searches on reader threads, off the event loop (./readers.ts); inline without them.
  const readers = openSqliteReaders(path, {
    size: options.searchConnections ?? SHARE_DEFAULTS.sqliteSize,
    waitMs: options.searchWaitMs ?? SHARE_DEFAULTS.waitMs,
    busyTimeoutMs,
  });
  /** Long reads on a reader thread; with `report`, each statement is reported after it ran (`traceQueries`). */
  const longReader = (report?: (query: TracedQuery) => void): LongReader | undefined =>
    readers === null
      ? undefined
      : <T>(fn: (read: TurnRead) => Promise<T>) =>
          readers.turn<T>((read) =>
            fn(async (query) => {
              try {
                return await read(query.sql, query.parameters);
              } catch (error) {
                noteStoreFailure(store, error);
                throw error;
              } finally {
                report?.({ sql: query.sql, parameters: query.parameters });
              }
            }),
          );

  const totalChanges = sqlite.prepare('SELECT total_changes() AS n');
  const dataVersion = sqlite.prepare('PRAGMA data_version');
  let generation = 0;
  const store: SqliteStore = {
    dialect: 'sqlite',
    db,
    sqlite,
    path,
    location: path,
    sharedByInstances: false,
    health: { downSince: null },
    async checkFile() {
      if (path === ':memory:' || path === '') return;
      const check = await openRaw(path, options);
      try {
        check.exec('PRAGMA busy_timeout = 1000');
        check.prepare('SELECT count(*) FROM sqlite_master').get();
        check.prepare('SELECT MAX(version) FROM schema_migrations').get();
      } finally {
        check.close();
      }
    },
    changeStamp() {
      // While a transaction is open, its writes count already but are not readable on the search
      // readers' connections (nor certain: a rollback), so nothing read meanwhile may be cached
      // under the stamp: none is given (issue #28).
      if (sqlite.inTransaction) return null;
      // Two statements, not one `SELECT … FROM pragma_data_version`: the table-valued pragma costs
      // twice the plain one (6.3 against 3.2 µs measured per call), and this runs on every request.
      // Both read the connection's counters, no table: they may run while a transaction holds it.
      const own = (totalChanges.get() as { n: number }).n;
      const others = (dataVersion.get() as { data_version: number }).data_version;
      return `${generation}:${own}:${others}`;
    },
    markChanged() {
      generation++;
    },
    traceQueries(hook) {
      const report = (event: LogEvent) => hook({ sql: event.query.sql, parameters: event.query.parameters });
      // The same driver (so the same lock); never destroyed, as destroying it would do nothing anyway.
      const traced = new Kysely<Database>({ dialect, log: report });
      const reporting = (runner: DirectRunner): DirectRunner => ({
        sqlite,
        run(sql, parameters) {
          let result: DirectResult | undefined;
          try {
            result = runner.run(sql, parameters);
          } catch (error) {
            hook({ sql, parameters });
            throw error;
          }
          if (result) hook({ sql, parameters });
          return result;
        },
      });
      registerDb(traced, {
        store,
        direct: reporting(whenFree),
        heldDirect: reporting(held),
        readLong: longReader(hook),
      });
      store.db = traced;
      return () => {
        store.db = db;
      };
    },
    async exclusive(fn) {
      await lock.acquire();
      try {
        return fn(sqlite);
      } finally {
        lock.release();
      }
    },
    saturated: () => false,
    ...resetSignal(),
    async close() {
      await readers?.close();
      await db.destroy();
      statements.close();
    },
  };
  registerDb(db, { store, direct: whenFree, heldDirect: held, readLong: longReader() });
  return store;
}
