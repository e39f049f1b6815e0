/**
 * The store as every layer above `db/` sees it: a kysely query builder over SQLite or PostgreSQL
 * (`Store.db`), transactions that compose (`inTransaction`), and what each store knows of its own
 * data's changes for the caches kept over it. Which store a query builder belongs to is recorded
 * here (`storeOf`), so repositories take the builder alone, or a transaction of it.
 */
import type { CompiledQuery, Kysely } from 'kysely';
import type pg from 'pg';
import type { Logger } from '../logger.js';
import type { ChangeStamps } from './change-stamps.js';
import type { DialectPieces } from './dialect.js';
import type { Database } from './schema.js';
import type { SqliteHandle } from './sqlite/handle.js';
import type { StoreThread } from './sqlite/store-thread.js';

/** A statement run through `Store.db`, as `traceQueries` reports it. */
export interface TracedQuery {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * What a store can do beyond the statements every store runs, known from its location before it
 * is opened (`capabilitiesAt`, ./connection.ts): what the layers above `db/` ask instead of which
 * database it is.
 */
export interface StoreCapabilities {
  /** The database's name, for messages: `SQLite` or `PostgreSQL`. */
  readonly product: string;
  /**
   * Whether the data can be put back to a snapshot quickly (`createSnapshot`: the fixture's reset,
   * decisions.md §14): SQLite's file can, a database other instances share cannot.
   */
  readonly canSnapshot: boolean;
  /**
   * Whether other instances may use the same data at once (PostgreSQL): work left in flight at
   * start may be another live instance's, and in-process caches cannot be kept true.
   */
  readonly sharedByInstances: boolean;
}

/** A snapshot of the store that the data can be put back to (`Store.createSnapshot`). */
export interface StoreSnapshot {
  /** Puts every table back to the snapshot. Resolves with the number of written rows it looked at. */
  restore(): Promise<number>;
  /** Makes the current data the snapshot. Resolves with the number of written rows it copied. */
  take(): Promise<number>;
}

/** What `Store.backupTo` wrote. */
export interface BackupResult {
  /** Size of the copy, bytes. */
  bytes: number;
  /** Time the copy took, ms. */
  durationMs: number;
}

/** Refused by `Store.backupTo`, with the reason for the operator in its message. */
export class BackupError extends Error {}

/** The store's own upkeep off the request path (`Store.startMaintenance`), until stopped. */
export interface Maintenance {
  /** Stops it and leaves the store as it was without it. */
  stop(): Promise<void>;
}

interface StoreBase extends StoreCapabilities {
  /**
   * The query builder. Read it at each use: `traceQueries` swaps it. Write transactions go
   * through `inTransaction(store.db, …)`.
   */
  db: Kysely<Database>;
  /**
   * Where the data is, fit to print: the SQLite file's path, or the PostgreSQL URL without its
   * password (`describeLocation`). Every message and log line names the store by this.
   */
  readonly location: string;
  /**
   * Reports every statement run through `db` to `hook` (after it ran; failed ones too) until the
   * returned function is called. For tests and diagnostics (e.g. the query-plan test): `db` is
   * swapped for a query builder that logs, over the same connections, so a store nobody traces
   * pays nothing.
   */
  traceQueries(hook: (query: TracedQuery) => void): () => void;
  /**
   * What the caches over this store ask to know whether they are current as of this request
   * (./change-stamps.ts, decisions.md §16 "Caches"): `stamps.current(tables)` gives the stamp of
   * the tables a cache reads, null while nothing read from them may be cached;
   * `stamps.requestStarts()` starts a request; `stamps.markChanged()` tells every cache that the
   * data changed by a means the store does not count (e.g. the whole database restored in place).
   */
  readonly stamps: ChangeStamps;
  /**
   * Registers `listener` to run after the data was put back to a snapshot (the fixture's reset,
   * decisions.md §14): every in-process cache derived from the data registers here and drops it.
   */
  onReset(listener: () => void): void;
  /** Runs the `onReset` listeners; called by whoever put the data back. */
  emitReset(): void;
  /**
   * Takes a snapshot of the data that it can be put back to, and starts noting writes; once per
   * store, before serving and outside any transaction (the fixture's reset, decisions.md §14).
   * @throws Error when the store cannot (`canSnapshot` false), or has a snapshot already.
   */
  createSnapshot(): Promise<StoreSnapshot>;
  /**
   * Writes a consistent copy of the data to the new file `file` (`outreach-api backup`,
   * decisions.md §15), also while the server writes: first under a temporary name, then renamed.
   * @throws BackupError when `file` exists or its directory does not, or when this store cannot be
   *   copied so (the message names the tool that can).
   */
  backupTo(file: string): Promise<BackupResult>;
  /**
   * Starts the store's own upkeep off the request path (SQLite's WAL checkpoints in a worker
   * thread, ./sqlite/checkpointer.ts), logging to `logger`.
   * @returns null when there is none to run (PostgreSQL's server does its own; `:memory:`, Deno).
   */
  startMaintenance(logger: Logger): Maintenance | null;
  /** `db/`'s own: what only this store's dialect can say (./dialect.ts). Nothing above `db/` uses it. */
  readonly pieces: DialectPieces;
  /** Whether the store can serve (`./failures.ts`): `downSince` (ms since the epoch) is set while it cannot. */
  readonly health: StoreHealth;
  /**
   * Whether requests wait for the store's connections: PostgreSQL's pool saturated (see
   * `./postgres/store.ts`), for `/readyz`. Always false on SQLite (one connection, taken in turn).
   */
  saturated(): boolean;
  close(): Promise<void>;
}

/** See `StoreBase.health`. */
export interface StoreHealth {
  downSince: number | null;
}

/** A SQLite file (or `:memory:`) on one connection: see `./sqlite/store.ts`. */
export interface SqliteStore extends StoreBase {
  readonly dialect: 'sqlite';
  /** Path of the database file (or ':memory:'). */
  readonly path: string;
  /**
   * The raw connection, for `db/`'s SQLite-only pieces (migrations, snapshots, backups,
   * checkpoints). Use it only inside `exclusive`, which holds the connection: outside, another
   * request's transaction may be open on it.
   */
  readonly sqlite: SqliteHandle;
  /** Runs `fn` while holding the connection (no query or transaction of the store runs meanwhile). */
  exclusive<T>(fn: (sqlite: SqliteHandle) => T): Promise<T>;
  /**
   * Reads the file itself, not this connection's page cache: a second connection opened for the
   * check reads the schema and the newest migration, and closes.
   * @throws when the file cannot be read (damaged, missing, not a database).
   */
  checkFile(): Promise<void>;
  /**
   * The store's worker thread (./sqlite/store-thread.ts), started at the first call: the WAL
   * checkpoints and the first search reader share it. A thread that failed is replaced.
   * @throws for `:memory:`, or when the addon file cannot be found under Node.
   */
  worker(): StoreThread;
}

/** A PostgreSQL database through a pool of connections: see `./postgres/store.ts`. */
export interface PostgresStore extends StoreBase {
  readonly dialect: 'postgres';
  /** The pool, for `db/`'s PostgreSQL-only pieces. */
  readonly pool: pg.Pool;
  /**
   * A connection of its own, outside the pool and without a statement time limit (migrations, a
   * session advisory lock); the caller ends it.
   */
  connectAlone(): Promise<pg.Client>;
}

export type Store = SqliteStore | PostgresStore;

/** The share of the store for searches (`./share.ts`; `db.searchConnections`, `db.searchWaitMs`). */
export interface SearchOptions {
  /** Searches run at once at most: PostgreSQL connections (default a third of the pool), SQLite reader threads (default 1). */
  searchConnections?: number;
  /** How long a search waits for its turn before it is refused, ms (default 1000). */
  searchWaitMs?: number;
}

/** How to open a PostgreSQL store (`db.*` settings, decisions.md §16). */
export interface PostgresOptions extends SearchOptions {
  /** Connections of this instance at most (default 10). */
  poolSize?: number;
  /** A statement's time limit, ms (default 5000): the server cancels it, the client gives up a second later. */
  statementTimeoutMs?: number;
  /** Whether repeated statements go as named prepared statements (default true; ./postgres/prepared.ts). */
  preparedStatements?: boolean;
  /**
   * When the pool counts as saturated (`Store.saturated`), ms: after a request waited `waitMs`
   * for a connection, until `holdMs` after the last such wait (defaults 1000 and 10000).
   */
  saturation?: { waitMs: number; holdMs: number };
}

export interface OpenOptions extends PostgresOptions {
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

/** What a statement run at once gave: its rows (a query), or the number of rows it changed. */
export interface DirectResult {
  rows: unknown[];
  changes: number;
}

/**
 * Runs compiled SQL on a SQLite connection synchronously, when that may be done now: see
 * `./sqlite.ts`. `run` returns undefined when the statement must wait its turn instead.
 */
export interface DirectRunner {
  run(sql: string, parameters: readonly unknown[]): DirectResult | undefined;
  /** The connection, for SQLite-only statements of `db/` run at once (see `sqliteOf`). */
  readonly sqlite: SqliteHandle;
}

/** Reads the rows of a SELECT within a turn of `LongReader`. */
export type TurnRead = (query: CompiledQuery) => Promise<unknown[]>;

/**
 * Runs `fn`, the statements of one search (SELECTs that may read many rows), in one turn of the
 * store's share for such statements (`./share.ts`), and resolves with what `fn` resolves with.
 * @throws ShareFullError when the turn did not come within the share's wait.
 */
export type LongReader = <T>(fn: (read: TurnRead) => Promise<T>) => Promise<T>;

/** What is known of a query builder: its store, and how compiled statements may run on it at once. */
interface DbContext {
  store: Store;
  /** Runs at once when it may (SQLite). */
  direct?: DirectRunner;
  /** Runs at once inside a transaction, which holds the connection (SQLite). */
  heldDirect?: DirectRunner;
  /** Runs long reads within the share (not in a transaction, whose statements run on its connection). */
  readLong?: LongReader;
}

const contexts = new WeakMap<Kysely<Database>, DbContext>();

/** Records that `db` is a query builder of `context.store` (the store's own, a traced one or a transaction). */
export function registerDb(db: Kysely<Database>, context: DbContext): void {
  contexts.set(db, context);
}

/** How long reads (a search) run on `db`, or undefined (through kysely, as any statement). */
export const longReaderOf = (db: Kysely<Database>): LongReader | undefined => contexts.get(db)?.readLong;

/** How compiled statements may run at once on `db`, or undefined (they go through kysely). */
export const directRunnerOf = (db: Kysely<Database>): DirectRunner | undefined => contexts.get(db)?.direct;

/**
 * The store whose query builder (or transaction) `db` is. Repositories receive the builder alone;
 * the caches they keep per store (repos/data-cache.ts) look the store up here.
 * @throws Error when `db` was not made by `openStore` (or `inTransaction`).
 */
export function storeOf(db: Kysely<Database>): Store {
  const context = contexts.get(db);
  if (!context) throw new Error('storeOf: this query builder belongs to no open store');
  return context.store;
}

/** Times a transaction is run again after PostgreSQL aborted it for a deadlock or a serialization failure. */
const RETRIES = 3;

/**
 * Runs `fn` in a transaction of `db`'s store and resolves with what it resolves with; rolls back
 * and rethrows whatever it throws. When `db` is already a transaction, `fn` runs in it (no nested
 * BEGIN), so repository functions compose by passing the transaction down.
 * - SQLite: the transaction begins `IMMEDIATE` (the write lock at once) and holds the one
 *   connection until it ends: code inside must use `trx`, never the store's own builder, which
 *   would wait for the transaction to end (and so never run).
 * - PostgreSQL (READ COMMITTED): a transaction aborted for a deadlock (40P01, possible between
 *   writers of several statements over the row counters, sql/postgres/0003_row_counts.sql) or a
 *   serialization failure (40001) is run again, up to 3 times: `fn` must do nothing outside the
 *   database that a second run would repeat.
 */
export async function inTransaction<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  const context = contexts.get(db);
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction().execute((trx) => {
        if (context)
          registerDb(trx, { store: context.store, direct: context.heldDirect, heldDirect: context.heldDirect });
        return fn(trx);
      });
    } catch (error) {
      if (attempt >= RETRIES || !context?.store.pieces.retriesTransaction(error)) throw error;
    }
  }
}

/**
 * What only the dialect of `db`'s store can say (./dialect.ts), for `db/`'s modules that serve
 * both stores.
 * @throws Error when `db` was not made by `openStore` (or `inTransaction`): a builder of no store
 *   has no dialect to assume.
 */
export const piecesOf = (db: Kysely<Database>): DialectPieces => storeOf(db).pieces;

/**
 * The SQLite connection `trx` holds, for `db/`'s SQLite-only statements inside a transaction
 * (scripts of several statements, DDL).
 * @throws Error when `trx` is not a transaction of a SQLite store made by `inTransaction`.
 */
export function sqliteOf(trx: Kysely<Database>): SqliteHandle {
  const runner = trx.isTransaction ? contexts.get(trx)?.heldDirect : undefined;
  if (!runner) throw new Error('sqliteOf: not a transaction of a SQLite store');
  return runner.sqlite;
}

/**
 * A store's `onReset`/`emitReset` pair (see `StoreBase`): listeners kept in registration order,
 * run one after another by `emitReset`. Spread into a store's object by both kinds.
 */
export function resetSignal(): Pick<StoreBase, 'onReset' | 'emitReset'> {
  const listeners: (() => void)[] = [];
  return {
    onReset(listener) {
      listeners.push(listener);
    },
    emitReset() {
      for (const listener of listeners) listener();
    },
  };
}
