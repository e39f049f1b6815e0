/**
 * The one question every cache over the store asks: "is what I keep, read from these tables,
 * current as of this request?" (decisions.md §16 "Caches"). A stamp is a string that differs from
 * every earlier one whenever the data of the tables a cache names may have changed; a cache keeps
 * the stamp it read its values under and drops them when the stamp differs. A cache names the
 * tables it reads (`current(tables)`), so a write elsewhere (a draft, a thread, a token's
 * `last_used_at`) leaves the backlinks' totals and anchors alone. A stamp is made of two parts:
 *
 * - **this process's changes the store does not count**: generations bumped without a statement,
 *   per table where the store can tell which table a write changed (`markChanged(table)`), else
 *   for every table at once (`markChanged()`). On SQLite, whose `PRAGMA data_version` ignores the
 *   connection's own commits, TEMP triggers on the connection tell each written table, cascades
 *   and other triggers' writes included, from soon after the first time a cache asks for a stamp
 *   (./sqlite/change-tracking.ts); before that, and for every `exec` and `exclusive` use of the
 *   connection, a write counts for every table (./sqlite/store.ts).
 * - **what the store counts**: one cheap statement (SQLite: `PRAGMA data_version`, other
 *   processes' commits to any table; PostgreSQL: the sums of the `change_stamps` counters, one per
 *   table, that triggers bump in every transaction of any instance that writes the table,
 *   sql/postgres/0010_change_stamps_by_table.sql). On PostgreSQL this process's own writes only
 *   drop what was read (`forget()`): the next use reads the counters again, and sees them once
 *   committed. Both count every table of `STAMPED_TABLES`; for any other name `current` gives
 *   null and nothing read from it is kept.
 *
 * The statement runs at most once per request: `requestStarts()` (the auth middleware, first
 * thing) drops what was read before, so a stamp used for a request was always read after the
 * request arrived, and so after every command whose reply came before it was sent; the same read
 * then serves the rest of the request (across its round trips on PostgreSQL) and every other use
 * until the next request starts. In a process that serves no request (the CLI, most tests)
 * nothing is kept: every use reads.
 *
 * A value must be read after the stamp it is kept under (a value read before could be older than
 * the stamp says); callers read the stamp first. No stamp is given (null) where none proves
 * anything: while a transaction is open on SQLite's one connection (its writes are not yet
 * committed, or may be rolled back).
 */

/**
 * The tables a cache over the store may read (`current(tables)`): token and account rows
 * (authentication), `GET /me`'s project and token counts, a project with its site count and a
 * site (the lookups of every project and site route), search and list totals, deep-page anchors.
 * A cache reading another table adds it here and, for PostgreSQL, in a new migration: a column of
 * `change_stamps` and a trigger (sql/postgres/0010_change_stamps_by_table.sql).
 */
export const STAMPED_TABLES = [
  'accounts',
  'api_tokens',
  'projects',
  'sites',
  'prospects',
  'leads',
  'backlinks',
] as const;

/** A table a cache may read. */
export type StampedTable = (typeof STAMPED_TABLES)[number];

/** Each stamped table's position in the generations and in what a store reads. */
const TABLE_INDEX = new Map<string, number>(STAMPED_TABLES.map((table, i) => [table, i]));

/** Whether `table` is one a cache may read (`STAMPED_TABLES`). */
export const isStampedTable = (table: string): table is StampedTable => TABLE_INDEX.has(table);

/** A stamp, or null (nothing may be cached); a promise of one where reading takes a round trip. */
export type StampRead = string | null | Promise<string | null>;

/**
 * What other processes changed, as a store counts it: one counter for every table (SQLite), or
 * one per table in `STAMPED_TABLES` order (PostgreSQL). Each only grows.
 */
export type OtherChanges = number | readonly number[];

/** How a store reads the other processes' part of its stamp. */
export interface StampSource {
  /**
   * Reads the part other processes change (sync on SQLite, a round trip on PostgreSQL), or null
   * when it cannot be known (then nothing may be cached).
   */
  read(): OtherChanges | null | Promise<OtherChanges | null>;
  /** Whether no stamp proves anything now (SQLite: a transaction is open on the connection). */
  blocked(): boolean;
  /** Called before every stamp is given, the transaction check included (SQLite: its triggers are asked for). */
  beforeStamp?(): void;
}

/**
 * A store's change stamps (see the module comment). One per store.
 */
export class ChangeStamps {
  /** This process's changes counted for every table at once. */
  private everyTable = 0;
  /** This process's changes per table (`STAMPED_TABLES` order). */
  private readonly byTable = new Float64Array(STAMPED_TABLES.length);
  /** The other processes' part, read since the latest request start within this turn; undefined: not read. */
  private kept: OtherChanges | null | Promise<OtherChanges | null> | undefined;
  /** Whether a request ever started (what is read is then kept until the next one starts). */
  private pinned = false;
  constructor(private readonly source: StampSource) {}

  /**
   * A request starts: what was read before proves nothing for it. The next read is kept for the
   * uses that follow, until the next request starts.
   */
  requestStarts(): void {
    this.kept = undefined;
    this.pinned = true;
  }

  /**
   * This process changed the data in a way the store's read does not see: the next stamp of
   * `table` differs (without a table: of every table).
   */
  markChanged(table?: StampedTable): void {
    if (table === undefined) this.everyTable++;
    else this.byTable[TABLE_INDEX.get(table)!]!++;
  }

  /**
   * This process wrote what the store's read does see (PostgreSQL: after each statement that is
   * not a SELECT, the COMMIT among them): what was read before proves nothing now.
   */
  forget(): void {
    this.kept = undefined;
  }

  /**
   * The stamp of `tables` current as of the latest request start (see the module comment), or
   * null when nothing read from them may be cached now: a transaction is open (SQLite), the store
   * cannot tell, or one of them is not in `STAMPED_TABLES`. Synchronous when the store reads synchronously (SQLite).
   * @throws what the store's read throws (PostgreSQL unreachable).
   */
  current(tables: readonly string[]): StampRead {
    let generation = this.everyTable;
    for (const table of tables) {
      const i = TABLE_INDEX.get(table);
      if (i === undefined) return null;
      generation += this.byTable[i]!;
    }
    this.source.beforeStamp?.();
    if (this.source.blocked()) return null;
    let others = this.kept;
    if (others === undefined) {
      others = this.source.read();
      if (this.pinned) {
        this.kept = others;
        // A failed read is not kept: the next use reads again.
        if (others instanceof Promise) others.catch(() => this.kept === others && (this.kept = undefined));
      }
    }
    // The generations are taken before the read resolves: a write of this process since then
    // gives a stamp no value read before the write is kept under (each part only grows, so the
    // sum differs from every earlier one as soon as one part moved).
    return others instanceof Promise
      ? others.then((changes) => stampOf(generation, changes, tables))
      : stampOf(generation, others, tables);
  }
}

/** The stamp of `tables`: this process's `generation` of them and what other processes changed in them. */
function stampOf(generation: number, changes: OtherChanges | null, tables: readonly string[]): string | null {
  if (changes === null) return null;
  if (typeof changes === 'number') return `${generation}:${changes}`;
  let sum = 0;
  for (const table of tables) sum += changes[TABLE_INDEX.get(table)!]!;
  return `${generation}:${sum}`;
}
