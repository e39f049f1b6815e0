/**
 * Statements written with kysely and run synchronously on the raw connection: the query is
 * compiled once, prepared once, and run with the values of each call. For hot paths and for
 * writes inside a synchronous transaction (`Store.transaction`), where kysely's own execution,
 * which is asynchronous, cannot be used. The row type is the one kysely infers for the query.
 *
 * Values that differ per call are named with `param(name)` while building the query; every
 * other value is a constant of the statement.
 */
import type { Compilable, Insertable, InsertObject } from 'kysely';
import type { Store } from './connection.js';
import type { Database } from './schema.js';

/** Marks a parameter in the compiled query's values (a string no caller's constant starts with). */
const PARAM = '\u0000param:';

export interface CompiledStatement<P extends string, R> {
  /** The first row, or undefined. */
  get(params: Record<P, unknown>): R | undefined;
  all(params: Record<P, unknown>): R[];
  /** Runs a write; returns the number of rows it changed. */
  run(params: Record<P, unknown>): number;
}

/**
 * Compiles the query `build` returns and takes its prepared statement from the store's cache
 * (`Store.statement`); hold the result to skip compiling on every call.
 * `build(param)`: `param<T>(name)` stands for the value `params[name]` of each call, typed as the
 * column it is compared with or written to (`param<string>('tokenId')`).
 * @throws whatever SQLite throws when preparing (a syntax or schema error).
 */
export function compileStatement<P extends string, R>(
  store: Store,
  build: (param: <T = string>(name: P) => T) => Compilable<R>,
): CompiledStatement<P, R> {
  const placeholder = <T>(name: P) => `${PARAM}${name}` as unknown as T;
  const { sql, parameters } = build(placeholder).compile();
  const statement = store.statement(sql);
  const slots = parameters.map((value): { name: P; value?: undefined } | { name?: undefined; value: unknown } =>
    typeof value === 'string' && value.startsWith(PARAM) ? { name: value.slice(PARAM.length) as P } : { value },
  );
  const values = (params: Record<P, unknown>) =>
    slots.map((slot) => (slot.name === undefined ? slot.value : params[slot.name]));
  return {
    // The one place a driver row (unknown) becomes the row type kysely inferred for this query.
    get: (params) => statement.get(...values(params)) as R | undefined,
    all: (params) => statement.all(...values(params)) as R[],
    run: (params) => Number(statement.run(...values(params)).changes),
  };
}

/** One row of `table` for `rowInsert`: every column named (null for an empty nullable one). */
export type WholeRow<T extends keyof Database> = Required<Insertable<Database[T]>>;

/**
 * An INSERT of one whole row of `table` at a time, compiled and prepared on the first call: its
 * columns are the first row's keys (`WholeRow` names every column, so none is kept in step by
 * hand). Synchronous, for writes inside `Store.transaction`.
 * @throws whatever SQLite throws (a constraint, such as a duplicate id).
 */
export function rowInsert<T extends keyof Database & string>(store: Store, table: T): (row: WholeRow<T>) => void {
  let insert: CompiledStatement<string, unknown> | undefined;
  return (row) => {
    insert ??= compileStatement<string, unknown>(store, (param) =>
      store.db
        .insertInto(table)
        .values(
          Object.fromEntries(Object.keys(row).map((column) => [column, param(column)])) as InsertObject<Database, T>,
        ),
    );
    insert.run(row);
  };
}
