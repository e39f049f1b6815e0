/**
 * `node:sqlite` (used under Deno, which cannot load better-sqlite3) adapted to the subset of the
 * better-sqlite3 API that Kysely's SqliteDialect and our code use: `prepare` → statements with
 * `all`/`get`/`run`/`iterate` and a `reader` flag, `exec`, `close`. Named parameters are passed
 * as an object whose keys are given without their `@`/`:`/`$` prefix, as better-sqlite3 does.
 */
import { createRequire } from 'node:module';
import type { SqliteHandle, SqliteStatement } from './handle.js';

interface NodeStatement {
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...params: unknown[]): IterableIterator<unknown>;
  columns?(): unknown[];
  setAllowBareNamedParameters?(enabled: boolean): void;
}
interface NodeDatabase {
  /** Whether a transaction is open (Node 22.16+, Deno 2). */
  readonly isTransaction: boolean;
  prepare(sql: string): NodeStatement;
  exec(sql: string): void;
  close(): void;
  function(name: string, options: { deterministic: boolean }, fn: (...args: unknown[]) => unknown): void;
}

const isNamed = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);

/**
 * better-sqlite3's binding rules in node:sqlite's terms. better-sqlite3 spreads array arguments
 * (Kysely always passes its parameters as one array) and takes one plain object of named
 * parameters anywhere; node:sqlite binds an array as nothing and wants the object first.
 * Booleans become 1/0, which node:sqlite would refuse.
 */
function normalise(params: unknown[]): unknown[] {
  let named: Record<string, unknown> | undefined;
  const anonymous: unknown[] = [];
  for (const param of params.flat()) {
    if (isNamed(param)) named = param;
    else anonymous.push(typeof param === 'boolean' ? Number(param) : param);
  }
  return named ? [named, ...anonymous] : anonymous;
}

export function openNodeSqlite(path: string): SqliteHandle {
  const require = createRequire(import.meta.url);
  const { DatabaseSync } = require('node:sqlite') as { DatabaseSync: new (path: string) => NodeDatabase };
  const database = new DatabaseSync(path);
  return {
    exec: (sql: string) => database.exec(sql),
    close: () => database.close(),
    get inTransaction() {
      return database.isTransaction;
    },
    function: (name: string, options: { deterministic: boolean }, fn: (...args: unknown[]) => unknown) =>
      database.function(name, options, fn),
    prepare(sql: string) {
      const statement = database.prepare(sql);
      statement.setAllowBareNamedParameters?.(true);
      const reader = statement.columns
        ? statement.columns().length > 0
        : /^\s*(select|with|pragma|explain|values)\b|\breturning\b/i.test(sql);
      const wrapped: SqliteStatement & { reader: boolean; iterate(...p: unknown[]): IterableIterator<unknown> } = {
        reader,
        all: (...params) => statement.all(...normalise(params)),
        get: (...params) => statement.get(...normalise(params)),
        run: (...params) => statement.run(...normalise(params)),
        iterate: (...params) => statement.iterate(...normalise(params)),
      };
      return wrapped as ReturnType<SqliteHandle['prepare']>;
    },
  } as unknown as SqliteHandle;
}
