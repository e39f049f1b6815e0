/**
 * Queries written with kysely and compiled once per dialect, then run with the values of each
 * call; the row type is the one kysely infers for the query. For the statements of every request
 * (lookups, list pages, counters, the idempotency keys) and for the writes of transactions: a
 * request pays for running the statement, not for building and compiling its query again (which
 * cost about as much as running a small page query).
 *
 * On SQLite a compiled statement runs at once from the prepared-statement cache when the
 * connection is free or held by the transaction it is given (`./sqlite/store.ts`); otherwise, and on
 * PostgreSQL, it runs through kysely's own execution.
 *
 * Values that differ per call are named with `param(name)` while building the query; every
 * other value is a constant of the statement.
 */
import {
  type Compilable,
  CompiledQuery,
  type DialectAdapter,
  type Insertable,
  type InsertObject,
  type Kysely,
} from 'kysely';
import type { Database } from './schema.js';
import { directRunnerOf } from './store.js';

/** Marks a parameter in the compiled query's values (a string no caller's constant starts with). */
const PARAM = '\u0000param:';

/** `param<T>(name)`: stands for the value `params[name]` of each call, typed as `T`. */
export type ParamOf<P extends string> = <T = string>(name: P) => T;

const placeholder = <T>(name: string) => `${PARAM}${name}` as unknown as T;

interface Template<P extends string> {
  sql: string;
  /** The values of a call in the statement's parameter order. */
  values: (params: Record<P, unknown>) => unknown[];
}

/** The SQL of `query` and how to lay out the values of a call in its parameter order. */
function compileTemplate<P extends string>(query: Compilable<unknown>): Template<P> {
  const { sql, parameters } = query.compile();
  const slots = parameters.map((value): { name: P; value?: undefined } | { name?: undefined; value: unknown } =>
    typeof value === 'string' && value.startsWith(PARAM) ? { name: value.slice(PARAM.length) as P } : { value },
  );
  return { sql, values: (params) => slots.map((slot) => (slot.name === undefined ? slot.value : params[slot.name])) };
}

/** What running a compiled statement gave: its rows (a query or RETURNING), and the rows it changed. */
interface Outcome {
  rows: unknown[];
  changes: number;
}

/** Runs `sql` on `db`: at once when its store allows it, else through kysely (waiting its turn). */
async function execute(db: Kysely<Database>, sql: string, parameters: unknown[]): Promise<Outcome> {
  const direct = directRunnerOf(db)?.run(sql, parameters);
  if (direct) return direct;
  const result = await db.executeQuery(CompiledQuery.raw(sql, parameters));
  return { rows: result.rows, changes: Number(result.numAffectedRows ?? 0n) };
}

/** The compiled templates of one query: per dialect (its adapter's class), per shape. */
function templateCache<P extends string, S extends string>(
  build: (db: Kysely<Database>, shape: S) => Compilable<unknown>,
): (db: Kysely<Database>, shape: S) => Template<P> {
  const byDialect = new Map<abstract new () => DialectAdapter, Map<S, Template<P>>>();
  return (db, shape) => {
    const dialect = db.getExecutor().adapter.constructor as abstract new () => DialectAdapter;
    let templates = byDialect.get(dialect);
    if (!templates) byDialect.set(dialect, (templates = new Map()));
    let template = templates.get(shape);
    if (template === undefined) templates.set(shape, (template = compileTemplate<P>(build(db, shape))));
    return template;
  };
}

export interface PrecompiledQuery<P extends string, R, S extends string> {
  /** Every row of the query of shape `shape` run on `db` with `params`. */
  all(db: Kysely<Database>, params: Record<P, unknown>, shape?: S): Promise<R[]>;
  /** The first row, or undefined. */
  first(db: Kysely<Database>, params: Record<P, unknown>, shape?: S): Promise<R | undefined>;
  /** Runs a write; resolves with the number of rows it changed. */
  run(db: Kysely<Database>, params: Record<P, unknown>, shape?: S): Promise<number>;
}

/**
 * A query or write written with kysely, compiled on its first use on each dialect and then run
 * with the values of each call (see the module comment). `db` may be the store's builder or a
 * transaction of it (`inTransaction`).
 *
 * `build(db, param, shape)` builds the query; `param<T>(name)` stands for the value `params[name]`
 * of each call, typed as the column it is compared with or written to (`param<string>('tokenId')`).
 * A query whose SQL depends on the call (a filter present or not, a list of n keys) names that
 * with a `shape` string: one compiled query is kept per shape, so `build` must give the same SQL
 * for the same shape and the shapes must be few.
 * @throws whatever the database throws when running it (a constraint, a syntax or schema error).
 */
export function precompiledQuery<P extends string, R, S extends string = ''>(
  build: (db: Kysely<Database>, param: ParamOf<P>, shape: S) => Compilable<R>,
): PrecompiledQuery<P, R, S> {
  const template = templateCache<P, S>((db, shape) => build(db, placeholder, shape));
  const outcome = (db: Kysely<Database>, params: Record<P, unknown>, shape = '' as S) => {
    const { sql, values } = template(db, shape);
    return execute(db, sql, values(params));
  };
  // The one place a driver row (unknown) becomes the row type kysely inferred for this query.
  const all = async (db: Kysely<Database>, params: Record<P, unknown>, shape?: S) =>
    (await outcome(db, params, shape)).rows as R[];
  return {
    all,
    first: async (db, params, shape) => (await all(db, params, shape))[0],
    run: async (db, params, shape) => (await outcome(db, params, shape)).changes,
  };
}

/** One row of `table` for `insertRow`: every column named (null for an empty nullable one). */
export type WholeRow<T extends keyof Database> = Required<Insertable<Database[T]>>;

const inserts = new Map<string, PrecompiledQuery<string, unknown, string>>();

/**
 * Inserts one whole row of `table` with `db` (a transaction or the store's builder). The INSERT
 * is compiled once per table, columns and dialect: its columns are the row's keys (`WholeRow`
 * names every column, so none is kept in step by hand).
 * @throws whatever the database throws (a constraint, such as a duplicate id).
 */
export async function insertRow<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  row: WholeRow<T>,
): Promise<void> {
  const columns = Object.keys(row);
  const key = `${table}(${columns.join(',')})`;
  let insert = inserts.get(key);
  if (!insert) {
    insert = precompiledQuery<string, unknown, string>((qb, param) =>
      qb
        .insertInto(table)
        .values(Object.fromEntries(columns.map((column) => [column, param(column)])) as InsertObject<Database, T>),
    );
    inserts.set(key, insert);
  }
  await insert.run(db, row as Record<string, unknown>);
}
