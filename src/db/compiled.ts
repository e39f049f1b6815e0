/**
 * Queries written with kysely and compiled once, then run with the values of each call; the row
 * type is the one kysely infers for the query.
 * - `compileStatement` and `rowInsert` run synchronously on the raw connection (prepared once):
 *   for hot paths and for writes inside a synchronous transaction (`Store.transaction`), where
 *   kysely's own execution, which is asynchronous, cannot be used.
 * - `precompiledQuery` runs through kysely's own execution: for the reads of every request.
 *
 * Values that differ per call are named with `param(name)` while building the query; every
 * other value is a constant of the statement.
 */
import { type Compilable, CompiledQuery, type Insertable, type InsertObject, type Kysely } from 'kysely';
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
  build: (param: ParamOf<P>) => Compilable<R>,
): CompiledStatement<P, R> {
  const { sql, values } = compileTemplate(build(placeholder));
  const statement = store.statement(sql);
  return {
    // The one place a driver row (unknown) becomes the row type kysely inferred for this query.
    get: (params) => statement.get(...values(params)) as R | undefined,
    all: (params) => statement.all(...values(params)) as R[],
    run: (params) => Number(statement.run(...values(params)).changes),
  };
}

/** `param<T>(name)`: stands for the value `params[name]` of each call, typed as `T`. */
export type ParamOf<P extends string> = <T = string>(name: P) => T;

const placeholder = <T>(name: string) => `${PARAM}${name}` as unknown as T;

/** The SQL of `query` and how to lay out the values of a call in its parameter order. */
function compileTemplate<P extends string>(
  query: Compilable<unknown>,
): { sql: string; values: (params: Record<P, unknown>) => unknown[] } {
  const { sql, parameters } = query.compile();
  const slots = parameters.map((value): { name: P; value?: undefined } | { name?: undefined; value: unknown } =>
    typeof value === 'string' && value.startsWith(PARAM) ? { name: value.slice(PARAM.length) as P } : { value },
  );
  return { sql, values: (params) => slots.map((slot) => (slot.name === undefined ? slot.value : params[slot.name])) };
}

export interface PrecompiledQuery<P extends string, R, S extends string> {
  /** Every row of the query of shape `shape` run with `params`. */
  all(db: Kysely<Database>, params: Record<P, unknown>, shape?: S): Promise<R[]>;
  /** The first row, or undefined. */
  first(db: Kysely<Database>, params: Record<P, unknown>, shape?: S): Promise<R | undefined>;
}

/**
 * A read written with kysely, compiled on its first use and then run through kysely's own
 * (asynchronous) execution with the values of each call: a request pays for running the
 * statement, not for building and compiling its query again (which cost about as much as running
 * a small page query). For the queries of every request (lookups, list pages, counters).
 *
 * `build(db, param, shape)` builds the query; `param(name)` as in `compileStatement`. A query whose
 * SQL depends on the call (a filter present or not, a list of n keys) names that with a `shape`
 * string: one compiled query is kept per shape, so `build` must give the same SQL for the same
 * shape and the shapes must be few. The SQL is the same for every store (one dialect).
 * @throws whatever SQLite throws when running it.
 */
export function precompiledQuery<P extends string, R, S extends string = ''>(
  build: (db: Kysely<Database>, param: ParamOf<P>, shape: S) => Compilable<R>,
): PrecompiledQuery<P, R, S> {
  const templates = new Map<S, ReturnType<typeof compileTemplate<P>>>();
  const all = async (db: Kysely<Database>, params: Record<P, unknown>, shape = '' as S) => {
    let template = templates.get(shape);
    if (template === undefined) {
      template = compileTemplate<P>(build(db, placeholder, shape));
      templates.set(shape, template);
    }
    // The one place a driver row (unknown) becomes the row type kysely inferred for this query.
    return (await db.executeQuery<R>(CompiledQuery.raw(template.sql, template.values(params)))).rows;
  };
  return { all, first: async (db, params, shape) => (await all(db, params, shape))[0] };
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
