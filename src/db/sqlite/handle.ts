/**
 * The synchronous SQLite connection as the store uses it: the subset of better-sqlite3's API
 * that kysely's SqliteDialect and our code call, which `./node-sqlite.ts` also provides over
 * `node:sqlite` (Deno).
 */
import type { SqliteDatabase } from 'kysely';

/** The synchronous statement API shared by better-sqlite3 and our node:sqlite adapter. */
export interface SqliteStatement {
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
}

/** The raw synchronous connection: used by migrations, import and the hot read paths. */
export interface SqliteHandle extends SqliteDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): SqliteStatement & ReturnType<SqliteDatabase['prepare']>;
  close(): void;
  /** Whether a transaction is open on the connection (SQLite's `sqlite3_get_autocommit` is false). */
  readonly inTransaction: boolean;
  /** Registers a scalar SQL function (deterministic: same result for the same arguments). */
  function(name: string, options: { deterministic: boolean }, fn: (...args: unknown[]) => unknown): unknown;
}
