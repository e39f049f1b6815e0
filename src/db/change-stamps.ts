/**
 * The one question every cache over the store asks: "is what I keep current as of this request?"
 * (decisions.md §16 "Caches"). A stamp is a string that differs from every earlier one whenever
 * the data a cache could hold may have changed; a cache keeps the stamp it read its values under
 * and drops them when the stamp differs. It is made of two parts:
 *
 * - **this process's changes the store does not count**: a generation bumped without a statement
 *   (`markChanged()`). On SQLite, whose `PRAGMA data_version` ignores the connection's own
 *   commits, that is every statement that is not a read, every transaction's end and every
 *   `exclusive` use of the connection (./sqlite/store.ts); elsewhere a restore in place.
 * - **what the store counts**: one cheap statement (SQLite: `PRAGMA data_version`, other
 *   processes' commits; PostgreSQL: the sum of the `change_stamps` counters that triggers bump in
 *   every writing transaction of any instance, sql/postgres/0009_change_stamps.sql). On
 *   PostgreSQL this process's own writes only drop what was read (`forget()`): the next use reads
 *   the counters again, and sees them once committed.
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
 * The tables whose writes bump PostgreSQL's counters (sql/postgres/0009_change_stamps.sql): every
 * table a cache over the store reads (token and account rows, `GET /me`'s counts, search totals,
 * deep-page anchors). A cache reading another table adds it there, in a new migration, and here.
 */
export const STAMPED_TABLES = ['accounts', 'api_tokens', 'projects', 'prospects', 'leads', 'backlinks'] as const;

/** A stamp, or null (nothing may be cached); a promise of one where reading takes a round trip. */
export type StampRead = string | null | Promise<string | null>;

/** How a store reads the other processes' part of its stamp. */
export interface StampSource {
  /**
   * Reads the part other processes change: a number (sync on SQLite, a round trip on PostgreSQL),
   * or null when it cannot be known (then nothing may be cached).
   */
  read(): number | null | Promise<number | null>;
  /** Whether no stamp proves anything now (SQLite: a transaction is open on the connection). */
  blocked(): boolean;
}

/**
 * A store's change stamps (see the module comment). One per store.
 */
export class ChangeStamps {
  private generation = 0;
  /** The other processes' part, read since the latest request start within this turn; undefined: not read. */
  private kept: number | null | Promise<number | null> | undefined;
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

  /** This process changed the data in a way the store's read does not see: the next stamp differs. */
  markChanged(): void {
    this.generation++;
  }

  /**
   * This process wrote what the store's read does see (PostgreSQL: after each statement that is
   * not a SELECT, the COMMIT among them): what was read before proves nothing now.
   */
  forget(): void {
    this.kept = undefined;
  }

  /**
   * The stamp current as of the latest request start (see the module comment), or null when
   * nothing may be cached now. Synchronous when the store reads synchronously (SQLite).
   * @throws what the store's read throws (PostgreSQL unreachable).
   */
  current(): StampRead {
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
    // The generation is taken now, not when the read started: a write of this process since then
    // gives a stamp no value read before the write is kept under.
    const generation = this.generation;
    if (others === null) return null;
    if (!(others instanceof Promise)) return `${generation}:${others}`;
    return others.then((n) => (n === null ? null : `${generation}:${n}`));
  }
}
