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
import { Kysely, type LogEvent } from 'kysely';
import { ChangeStamps } from '../change-stamps.js';
import { noteStoreFailure } from '../failures.js';
import type { Database } from '../schema.js';
import { SHARE_DEFAULTS } from '../share.js';
import {
  type DirectResult,
  type DirectRunner,
  type LongReader,
  type OpenOptions,
  registerDb,
  resetSignal,
  type SqliteStore,
  type StoreCapabilities,
  type TracedQuery,
  type TurnRead,
} from '../store.js';
import { backupTo } from './backup.js';
import { type ChangeTracking, trackChanges } from './change-tracking.js';
import { startBackgroundCheckpoints } from './checkpointer.js';
import { Connection, ConnectionLock, LockedDialect, LockedDriver, openRaw, StatementCache } from './driver.js';
import { registerSqlFunctions } from './functions.js';
import { GroupCommit } from './group-commit.js';
import type { SqliteHandle } from './handle.js';
import { sqlitePieces } from './pieces.js';
import { openSqliteReaders, type SqliteReaders } from './readers.js';
import { StoreThreadHolder } from './store-thread.js';
import { createSnapshot } from './snapshot.js';

/** What a SQLite store can do (see `StoreCapabilities`): one process serves its file. */
export const SQLITE_CAPABILITIES: StoreCapabilities = {
  product: 'SQLite',
  canSnapshot: true,
  sharedByInstances: false,
};

/**
 * Opens the connection to `path` (creating the file and its directory when missing) with WAL,
 * foreign keys, a busy timeout of `busyTimeoutMs` and the store's SQL functions. Durability
 * (`options.synchronous`, decisions.md §7): `full` (the default) on a file in WAL mode is group
 * commit (`./group-commit.ts`: `synchronous = NORMAL` and the WAL synced before a commit's caller
 * goes on; `groupCommit` true); elsewhere (`:memory:`, no WAL) `synchronous = FULL`;
 * `normal` is `synchronous = NORMAL` and nothing more.
 */
async function openConnection(
  path: string,
  options: OpenOptions,
  busyTimeoutMs: number,
): Promise<{ sqlite: SqliteHandle; groupCommit: boolean }> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = await openRaw(path, options);
  sqlite.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  const { journal_mode: journal } = sqlite.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string };
  const groupCommit = options.synchronous !== 'normal' && journal === 'wal' && path !== '';
  sqlite.exec(`PRAGMA synchronous = ${options.synchronous === 'normal' || groupCommit ? 'NORMAL' : 'FULL'}`);
  sqlite.exec('PRAGMA foreign_keys = ON');
  // Statement journals (which the row_counts triggers make every write keep) stay in memory.
  sqlite.exec('PRAGMA temp_store = MEMORY');
  registerSqlFunctions(sqlite);
  return { sqlite, groupCommit };
}

/**
 * The store's change stamps (../change-stamps.ts): this connection's writes are counted by the
 * store itself, per table from soon after the first stamp a cache asks for
 * (./change-tracking.ts), for every table before that and for what `exec` and `exclusive` ran;
 * other connections' commits through `PRAGMA data_version`, which stays the same for the
 * connection's own and counts every table.
 * @param free whether nothing holds the connection now (its lock), for putting the triggers in place.
 */
function changeStamps(sqlite: SqliteHandle, free: () => boolean): { stamps: ChangeStamps; tracking: ChangeTracking } {
  const dataVersion = sqlite.prepare('PRAGMA data_version');
  let tracking: ChangeTracking | undefined;
  const stamps = new ChangeStamps({
    // It reads the connection's counter, no table: it may run while a transaction holds it.
    read: () => (dataVersion.get() as { data_version: number }).data_version,
    // While a transaction is open, its writes are not readable on the search readers' connections
    // yet, nor certain (a rollback): nothing read meanwhile may be kept (issue #28).
    blocked: () => sqlite.inTransaction,
    beforeStamp: () => tracking!.request(),
  });
  tracking = trackChanges(sqlite, free, (table) => stamps.markChanged(table));
  return { stamps, tracking };
}

/** `runner`, reporting each statement it ran (failed ones too) to `hook` (`traceQueries`). */
const reporting = (runner: DirectRunner, hook: (query: TracedQuery) => void): DirectRunner => ({
  sqlite: runner.sqlite,
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

/**
 * Long reads on a reader thread of `readers` (none without them); a failed one counts as the
 * store's failure (/readyz), and with `report` each statement is reported after it ran
 * (`traceQueries`).
 */
function longReaderOf(
  readers: SqliteReaders | null,
  store: () => SqliteStore,
  report?: (query: TracedQuery) => void,
): LongReader | undefined {
  if (readers === null) return undefined;
  return <T>(fn: (read: TurnRead) => Promise<T>) =>
    readers.turn<T>((read) =>
      fn(async (query) => {
        try {
          return await read(query.sql, query.parameters);
        } catch (error) {
          noteStoreFailure(store(), error);
          throw error;
        } finally {
          report?.({ sql: query.sql, parameters: query.parameters });
        }
      }),
    );
}

/**
 * Opens (creating if needed, with its directory) the SQLite database at `path` with WAL, foreign
 * keys, `synchronous = FULL` (or `options.synchronous`) and a busy timeout. Does not migrate: see
 * `migrate()`.
 * @throws when the file cannot be opened or is not a SQLite database.
 */
export async function openSqliteStore(path: string, options: OpenOptions = {}): Promise<SqliteStore> {
  const busyTimeoutMs = Math.trunc(options.busyTimeoutMs ?? 5000);
  const connection = await openConnection(path, options, busyTimeoutMs);
  const { sqlite } = connection;
  // An fsync that failed counts as the store's failure (/readyz), as a failed statement does.
  const groupCommit = connection.groupCommit
    ? new GroupCommit(`${path}-wal`, (error) => noteStoreFailure(store, error))
    : null;
  const lock = new ConnectionLock();
  const { stamps, tracking } = changeStamps(sqlite, () => lock.free);
  const statements = new StatementCache(
    sqlite,
    (error) => noteStoreFailure(store, error),
    // What the triggers tell per table needs no count for every table; `exec` (DDL) may be anything.
    (exec) => (exec || !tracking.active) && stamps.markChanged(),
  );
  const driver = new LockedDriver(new Connection(statements), lock, statements, groupCommit);
  const dialect = new LockedDialect(driver);
  const db = new Kysely<Database>({ dialect });

  // Outside a transaction: at once when the connection is free, else not now (wait through kysely).
  // A write under group commit goes through kysely too, whose driver waits for its sync.
  const whenFree: DirectRunner = {
    sqlite,
    run: (sql, parameters) =>
      lock.free && (!groupCommit || statements.readsOnly(sql)) ? statements.run(sql, parameters) : undefined,
  };
  // Inside a transaction, which holds the connection: always at once.
  const held: DirectRunner = { sqlite, run: (sql, parameters) => statements.run(sql, parameters) };

  // Searches on reader threads, off the event loop (./readers.ts); inline without them.
  const threads = new StoreThreadHolder(path, busyTimeoutMs);
  const readers = openSqliteReaders(threads, {
    size: options.searchConnections ?? SHARE_DEFAULTS.sqliteSize,
    waitMs: options.searchWaitMs ?? SHARE_DEFAULTS.waitMs,
  });
  const longReader = (report?: (query: TracedQuery) => void) => longReaderOf(readers, () => store, report);

  const store: SqliteStore = {
    dialect: 'sqlite',
    ...SQLITE_CAPABILITIES,
    pieces: sqlitePieces(() => store),
    db,
    sqlite,
    path,
    location: path,
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
    stamps,
    createSnapshot: () => createSnapshot(store),
    backupTo: (file) => backupTo(store, file),
    worker: () => threads.get(),
    startMaintenance: (logger) => startBackgroundCheckpoints(store, { logger }),
    traceQueries(hook) {
      const report = (event: LogEvent) => hook({ sql: event.query.sql, parameters: event.query.parameters });
      // The same driver (so the same lock); never destroyed, as destroying it would do nothing anyway.
      const traced = new Kysely<Database>({ dialect, log: report });
      registerDb(traced, {
        store,
        direct: reporting(whenFree, hook),
        heldDirect: reporting(held, hook),
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
        // What `fn` did on the connection is not counted otherwise (a restore, a migration),
        // and may have dropped a table with its triggers, or made the tables they need.
        stamps.markChanged();
        tracking.recheck();
        lock.release();
        // What `fn` wrote (a migration, a restore) is on disk before its caller goes on.
        groupCommit?.noteCommit();
        await groupCommit?.durable();
      }
    },
    saturated: () => false,
    ...resetSignal(),
    async close() {
      readers?.close();
      await threads.close();
      await db.destroy();
      await groupCommit?.close();
      statements.close();
    },
  };
  registerDb(db, { store, direct: whenFree, heldDirect: held, readLong: longReader() });
  return store;
}
