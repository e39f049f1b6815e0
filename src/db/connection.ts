/**
 * Opens the SQLite store and wraps it in Kysely.
 *
 * Under Node the driver is better-sqlite3; under Deno (which cannot load native Node addons)
 * it is `node:sqlite`, adapted to the same interface in `./node-sqlite.ts`. The choice is made
 * at run time, so one bundle serves both.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, SqliteDialect, type LogEvent, type SqliteDatabase } from 'kysely';
import type { Database } from './schema.js';
import type { SqliteHandle, SqliteStatement } from './sqlite-handle.js';
import { registerSqlFunctions } from './sql-functions.js';

type CachedStatement = SqliteStatement & ReturnType<SqliteDatabase['prepare']>;

/** A statement run through `Store.db`, as `traceQueries` reports it. */
export interface TracedQuery {
  sql: string;
  parameters: readonly unknown[];
}

export interface Store {
  /** Query builder over the same connection as `sqlite`. Read it at each use: `traceQueries` swaps it. */
  db: Kysely<Database>;
  /** The raw connection, for synchronous transactions and prepared hot-path statements. */
  sqlite: SqliteHandle;
  /**
   * The prepared statement of `sql` from the cache the query builder uses (prepared on first use).
   * For kysely-compiled queries run synchronously: see `compileStatement` in `./compiled.ts`.
   */
  statement(sql: string): SqliteStatement;
  /** Path of the database file (or ':memory:'). */
  path: string;
  /**
   * Runs `fn` in one SQLite transaction (BEGIN IMMEDIATE … COMMIT), synchronously.
   * Rolls back and rethrows whatever `fn` throws.
   */
  transaction<T>(fn: () => T): T;
  /**
   * Reports every statement run through `db` to `hook` (after it ran, failed ones too) until the
   * returned function is called. For tests and diagnostics (e.g. the query-plan test): `db` is
   * swapped for a query builder with kysely's `log` over the same connection, so a store nobody
   * traces pays nothing. Statements on `sqlite` are not reported.
   */
  traceQueries(hook: (query: TracedQuery) => void): () => void;
  /**
   * A value that differs from every earlier one whenever the data may have changed: after a
   * write on this connection (`total_changes()`), a commit by another connection or process
   * (`PRAGMA data_version`), or `markChanged()`. Caches of values read from the store keep the
   * stamp they were read under and drop them when it differs. Costs two small statements (about
   * 3.3 µs together on the development machine; no table is touched).
   */
  changeStamp(): string;
  /**
   * Tells every cache over this store that its data changed by a means SQLite does not count
   * (e.g. the whole database restored in place): the next `changeStamp()` differs.
   */
  markChanged(): void;
  /**
   * Registers `listener` to run after the data was put back to a snapshot (the fixture's reset,
   * decisions.md §14): every in-process cache derived from the data registers here and drops it.
   */
  onReset(listener: () => void): void;
  /** Runs the `onReset` listeners; called by whoever put the data back. */
  emitReset(): void;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Busy timeout in ms (default 5000). */
  busyTimeoutMs?: number;
  /** A pre-loaded better-sqlite3 native addon (used by the single executable). */
  nativeBinding?: unknown;
  /**
   * `PRAGMA synchronous` (default `full`: a commit is on disk before it returns, so an
   * acknowledged write survives a power loss; `normal` may lose the last commits, decisions.md §7).
   */
  synchronous?: 'full' | 'normal';
}

const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';

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

/** The store of every query builder `openStore` made: its own, and each one `traceQueries` swaps in. */
const storeByDb = new WeakMap<Kysely<Database>, Store>();

/**
 * The store whose query builder `db` is. Repositories receive the builder alone; the caches they
 * keep per store (repos/data-cache.ts) look the store up here and follow its `changeStamp()`.
 * @throws Error when `db` was not made by `openStore`.
 */
export function storeOf(db: Kysely<Database>): Store {
  const store = storeByDb.get(db);
  if (!store) throw new Error('storeOf: this query builder belongs to no open store');
  return store;
}

/**
 * Opens (creating if needed, with its directory) the database at `path` with WAL, foreign keys,
 * `synchronous = FULL` (or `options.synchronous`) and a busy timeout. Does not migrate: see `migrate()`.
 * @throws when the file cannot be opened or is not a SQLite database.
 */
export async function openStore(path: string, options: OpenOptions = {}): Promise<Store> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = await openRaw(path, options);
  sqlite.exec(`PRAGMA busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec(`PRAGMA synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  sqlite.exec('PRAGMA foreign_keys = ON');
  // Statement journals (which the row_counts triggers make every write keep) stay in memory.
  sqlite.exec('PRAGMA temp_store = MEMORY');
  registerSqlFunctions(sqlite);
  const database = withStatementCache(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  let depth = 0;
  const totalChanges = sqlite.prepare('SELECT total_changes() AS n');
  const dataVersion = sqlite.prepare('PRAGMA data_version');
  let generation = 0;
  const resetListeners: (() => void)[] = [];
  const store: Store = {
    db,
    sqlite,
    statement: (sql) => database.prepare(sql),
    path,
    changeStamp() {
      // Two statements, not one `SELECT … FROM pragma_data_version`: the table-valued pragma costs
      // twice the plain one (6.3 against 3.2 µs measured per call), and this runs on every request.
      const own = (totalChanges.get() as { n: number }).n;
      const others = (dataVersion.get() as { data_version: number }).data_version;
      return `${generation}:${own}:${others}`;
    },
    markChanged() {
      generation++;
    },
    traceQueries(hook) {
      const report = (event: LogEvent) => hook({ sql: event.query.sql, parameters: event.query.parameters });
      // Never destroyed: destroying a kysely instance closes the connection it was given.
      store.db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), log: report });
      storeByDb.set(store.db, store);
      return () => {
        store.db = db;
      };
    },
    onReset(listener) {
      resetListeners.push(listener);
    },
    emitReset() {
      for (const listener of resetListeners) listener();
    },
    transaction<T>(fn: () => T): T {
      // Nested calls join the outer transaction, so repository helpers compose.
      if (depth > 0) return fn();
      sqlite.exec('BEGIN IMMEDIATE');
      depth++;
      try {
        const result = fn();
        sqlite.exec('COMMIT');
        return result;
      } catch (error) {
        sqlite.exec('ROLLBACK');
        throw error;
      } finally {
        depth--;
      }
    },
    async close() {
      await db.destroy();
      // kysely closes the connection only if a query of its own opened it; migrate-then-close did not.
      database.close();
    },
  };
  storeByDb.set(db, store);
  return store;
}

/** Statements kept prepared for the query builder, by SQL text. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * `sqlite` as kysely's SQLite dialect sees it, with the statements it prepares kept for reuse.
 * The dialect prepares every query anew, which costs as much as running a small page query; the
 * SQL text kysely compiles is the same for every request of a route (values are parameters), so
 * a small least-recently-used cache serves nearly every query. Statements are run synchronously
 * and never iterated (the store does not stream), so one statement is never in use twice.
 */
function withStatementCache(sqlite: SqliteHandle): { close(): void; prepare(sql: string): CachedStatement } {
  const statements = new Map<string, CachedStatement>();
  let closed = false;
  return {
    /** Closes the connection; a second call does nothing. */
    close() {
      if (closed) return;
      closed = true;
      sqlite.close();
    },
    prepare(sql) {
      let statement = statements.get(sql);
      if (statement !== undefined) {
        statements.delete(sql); // re-inserted below as the most recently used
      } else {
        statement = sqlite.prepare(sql);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, statement);
      return statement;
    },
  };
}
