/**
 * kysely's driver over SQLite's one connection (`./store.ts`): every statement, kysely's and the
 * hot paths' alike, runs while holding the connection's lock (`ConnectionLock`); a transaction
 * holds it from its `BEGIN IMMEDIATE` to its `COMMIT`, so no other request's statement can run on
 * the connection in between. Prepared statements are kept in a small cache (`StatementCache`).
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDatabase,
} from 'kysely';
import type { DirectResult, OpenOptions } from '../store.js';
import type { SqliteHandle, SqliteStatement } from './handle.js';
import { isDeno } from './addon.js';
import type { GroupCommit } from './group-commit.js';

type CachedStatement = SqliteStatement & ReturnType<SqliteDatabase['prepare']>;

/** Opens the raw connection: better-sqlite3 under Node (the single executable's addon when given), `node:sqlite` under Deno. */
export async function openRaw(path: string, options: OpenOptions): Promise<SqliteHandle> {
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
export class ConnectionLock {
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
export class StatementCache {
  private readonly statements = new Map<string, CachedStatement>();
  /** The statements that return rows and write too (`INSERT … RETURNING`). */
  private readonly writingReaders = new WeakSet<CachedStatement>();
  private closed = false;

  /**
   * @param failed sees every error a statement threw (before it is rethrown).
   * @param wrote is called after every statement that changed rows (or failed part way: it may
   *   have; `exec` false), and after every `exec` but the driver's BEGIN, COMMIT and ROLLBACK
   *   (whose statements were counted as they ran; `exec` true): the change stamps' own writes. A
   *   write that changes no row (a worker's poll that finds nothing) is not one.
   */
  constructor(
    readonly sqlite: SqliteHandle,
    private readonly failed: (error: unknown) => void,
    private readonly wrote: (exec: boolean) => void = () => {},
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
      // better-sqlite3 says whether it writes; node:sqlite does not (only SELECTs are read-only then).
      const { readonly } = statement as { readonly?: boolean };
      if (statement.reader && (readonly === undefined ? !/^\s*select\b/i.test(sql) : !readonly))
        this.writingReaders.add(statement);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, statement);
    return statement;
  }

  /**
   * Whether `sql` only reads (prepared and kept, as `run` would): not a write, nor a reader that
   * writes (`INSERT … RETURNING`). A statement that does not prepare counts as reading only, so
   * that `run` is where its error is thrown and noted.
   */
  readsOnly(sql: string): boolean {
    try {
      const statement = this.prepare(sql);
      return statement.reader && !this.writingReaders.has(statement);
    } catch {
      return true;
    }
  }

  /**
   * Runs `sql` with `parameters` now: its rows, or the rows it changed; `writes` when it is not a
   * read only (as `readsOnly` says, without preparing it again).
   */
  run(sql: string, parameters: readonly unknown[]): DirectResult & { reader: boolean; writes: boolean } {
    try {
      const statement = this.prepare(sql);
      if (statement.reader) {
        if (!this.writingReaders.has(statement))
          return { rows: statement.all(parameters), changes: 0, reader: true, writes: false };
        // RETURNING gives one row per row written.
        return this.counted(() => {
          const rows = statement.all(parameters);
          return { result: { rows, changes: 0, reader: true, writes: true }, changed: rows.length > 0 };
        });
      }
      return this.counted(() => {
        const changes = Number(statement.run(parameters).changes);
        return { result: { rows: [], changes, reader: false, writes: true }, changed: changes > 0 };
      });
    } catch (error) {
      this.failed(error);
      throw error;
    }
  }

  /** Runs a write `run` and tells `wrote` when it changed rows or threw (it may have changed some). */
  private counted<T>(run: () => { result: T; changed: boolean }): T {
    let changed = true;
    try {
      const done = run();
      changed = done.changed;
      return done.result;
    } finally {
      if (changed) this.wrote(false);
    }
  }

  /**
   * Runs `sql` (statements without parameters) now.
   * @param counts false for the driver's BEGIN, COMMIT and ROLLBACK (see the constructor's `wrote`).
   */
  exec(sql: string, counts = true): void {
    try {
      this.sqlite.exec(sql);
    } catch (error) {
      this.failed(error);
      throw error;
    } finally {
      if (counts) this.wrote(true);
    }
  }
}

/** The statements that change rows and report how many (`changes`). */
const DML = /^\s*(?:insert|update|delete|replace)\b/i;

/** The one connection as kysely's driver sees it. */
export class Connection implements DatabaseConnection {
  /** Whether a statement outside a transaction wrote since the driver last looked (`takeWrote`). */
  private wrote = false;

  constructor(private readonly statements: StatementCache) {}

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const { rows, changes, reader, writes } = this.statements.run(compiled.sql, compiled.parameters);
    if (writes) {
      if (!this.statements.sqlite.inTransaction) this.wrote = true;
      else if (changes > 0 || rows.length > 0 || !DML.test(compiled.sql)) this.changedInTransaction = true;
    }
    return Promise.resolve(reader ? { rows: rows as R[] } : { rows: [], numAffectedRows: BigInt(changes) });
  }

  /** Whether a statement outside a transaction wrote (committed on its own) since the last call. */
  takeWrote(): boolean {
    const wrote = this.wrote;
    this.wrote = false;
    return wrote;
  }

  /**
   * Whether the transaction in hand changed anything since the last call: a statement that is not
   * a read changed rows (an `INSERT … RETURNING` returned some), or is not an `INSERT`, `UPDATE`,
   * `DELETE` or `REPLACE` (a schema change: counted whatever it reports). A DML statement that
   * changed no row wrote no page, so a transaction of only such statements (a worker's poll that
   * finds nothing) commits nothing that needs an `fsync`.
   */
  takeChangedInTransaction(): boolean {
    const changed = this.changedInTransaction;
    this.changedInTransaction = false;
    return changed;
  }
  private changedInTransaction = false;

  // biome-ignore lint/correctness/useYield: the store never streams; kysely requires the method.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the SQLite store does not stream query results');
  }
}

/**
 * kysely's driver over the one connection: transactions begin `IMMEDIATE`, and every use of the
 * connection goes through `lock`. Shared by every query builder of the store (`traceQueries`' too).
 * With `groupCommit`, a use of the connection that committed (a transaction, or a write outside
 * one) frees the connection and then waits until the commit is on disk (`./group-commit.ts`), so
 * kysely resolves the caller's query or transaction only then.
 */
export class LockedDriver implements Driver {
  /** Whether the transaction in hand committed a change (`commitTransaction`), until `releaseConnection`. */
  private committed = false;

  constructor(
    private readonly connection: Connection,
    private readonly lock: ConnectionLock,
    private readonly statements: StatementCache,
    private readonly groupCommit: GroupCommit | null = null,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock.acquire();
    return this.connection;
  }

  async beginTransaction(): Promise<void> {
    this.statements.exec('BEGIN IMMEDIATE', false);
  }

  async commitTransaction(): Promise<void> {
    this.statements.exec('COMMIT', false);
    this.committed = this.connection.takeChangedInTransaction();
  }

  async rollbackTransaction(): Promise<void> {
    this.connection.takeChangedInTransaction();
    // A failed COMMIT (a full disk, an I/O error) may have ended the transaction already.
    try {
      this.statements.exec('ROLLBACK', false);
    } catch (error) {
      if (!/no transaction is active/i.test((error as Error).message)) throw error;
    }
  }

  async releaseConnection(): Promise<void> {
    const committed = this.connection.takeWrote() || this.committed;
    this.committed = false;
    this.lock.release();
    if (committed && this.groupCommit) {
      this.groupCommit.noteCommit();
      await this.groupCommit.durable();
    }
  }

  /** The store closes the connection itself (`SqliteStore.close`). */
  async destroy(): Promise<void> {}
}

/** kysely's SQLite dialect with `driver` instead of its own. */
export class LockedDialect extends SqliteDialect {
  constructor(private readonly driver: LockedDriver) {
    super({ database: {} as SqliteDatabase });
  }

  override createDriver(): Driver {
    return this.driver;
  }
}
