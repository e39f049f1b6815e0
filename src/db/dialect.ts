/**
 * What only one dialect can say, named once (docs/development.md "The store layer"): each store
 * gives its own pieces (`Store.pieces`: SQLite's in `./sqlite/pieces.ts`, PostgreSQL's in
 * `./postgres/pieces.ts`), and the modules of `db/` that serve both stores (search, row counters,
 * bulk loads, locks, migrations, readiness, transactions) ask them, never which dialect they run on.
 * A third dialect would be a third folder giving these pieces, and nothing above `db/` would change.
 * Nothing above `db/` uses them: it asks the store for a capability (`./store.ts`).
 */
import type { Expression, Kysely, RawBuilder, SqlBool } from 'kysely';
import type { CountedTable } from './row-counters.js';
import type { Database } from './schema.js';

/** A numbered migration of `sql/<dialect>/NNNN_name.sql` (./migrate.ts). */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** A searched column of a table (its folded copy is `<column>_folded`, ./search.ts). */
export type SearchedColumn = 'title' | 'domain' | 'url' | 'description' | 'body' | 'author_handle' | 'evidence_quote';

/** A test of one column for the term: whether the folded column contains the folded term. */
export type Contains = (column: SearchedColumn) => RawBuilder<SqlBool>;

/**
 * The members of a JSON object made by the store (`./json-rows.ts`), in order: each member's name
 * and the column of the row it holds (one of `C`).
 */
export type JsonMembers<C extends string = string> = readonly (readonly [name: string, column: C])[];

/** A row of a subquery whose columns are exactly, in order, the members of its JSON object (`./json-rows.ts`). */
export interface JsonSource {
  /** The subquery's alias. */
  alias: string;
  /** Its columns' names, in order: the members' names. */
  names: readonly string[];
}

/** A searchable table and its SQLite FTS5 index (a rowid set of the rows whose searchable text holds a trigram phrase). */
export interface SearchIndex {
  table: 'prospects' | 'leads';
  fts: 'prospects_fts' | 'leads_fts';
}

export interface DialectPieces {
  /**
   * The JSON text of the current row of `source` as an object of its columns, in order, compact
   * (no space), its strings escaped as `JSON.stringify` escapes them (`./json-rows.ts` `jsonRows`).
   */
  jsonObject(source: JsonSource): RawBuilder<string>;
  /**
   * The WHERE condition of a search for `term` (non-empty) over `index.table` (`./search.ts`
   * `textSearch`): `condition(contains)` spells out which columns match, and when.
   */
  textSearch(
    term: string,
    index: SearchIndex,
    condition: (contains: Contains) => Expression<SqlBool>,
  ): Expression<SqlBool>;
  /**
   * Stops counting `tables` (non-empty) for the rest of the transaction `trx` and resolves with
   * the resume, to call before it commits (`./bulk-load.ts` `pauseRowCounts`).
   */
  pauseRowCounts(trx: Kysely<Database>, tables: readonly CountedTable[]): Promise<() => Promise<void>>;
  /**
   * Whether the transaction `trx` holds, until it ends, the lock of the work `key` among the
   * instances (`./locks.ts` `onOneInstance`); false when another instance holds it.
   */
  lockForTransaction(trx: Kysely<Database>, key: number): Promise<boolean>;
  /**
   * Runs `fn` while no other instance runs the work `key`, resolving with `busy` at once when one
   * does (`./locks.ts` `exclusivelyAcrossInstances`).
   */
  runExclusively<T>(key: number, busy: T, fn: () => Promise<T>): Promise<T>;
  /**
   * Whether a failed statement aborts the transaction it ran in, so that no write may be tried to
   * see whether it fails (`./bulk-load.ts`).
   */
  readonly failedStatementAbortsTransaction: boolean;
  /** Whether a transaction that threw `error` is run again (`./store.ts` `inTransaction`). */
  retriesTransaction(error: unknown): boolean;
  /**
   * Applies those of `migrations` the database lacks, in order, and resolves with their versions
   * (`./migrate.ts` `migrate`).
   * @throws when the database has a migration newer than `migrations` knows (a downgrade).
   */
  applyMigrations(migrations: Migration[]): Promise<number[]>;
  /**
   * Whether the store can serve now, by a check that reaches the data itself, which clears the
   * store's `down` mark when it passes and sets one when it fails (`./failures.ts` `checkStore`).
   */
  checkStore(): Promise<boolean>;
}
