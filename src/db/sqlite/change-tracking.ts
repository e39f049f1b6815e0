/**
 * Which tables this connection's writes changed, told to the change stamps without a statement
 * (../change-stamps.ts, decisions.md §16 "Caches"): a TEMP trigger after every INSERT, UPDATE and
 * DELETE on each stamped table calls `stamp_changed(i)`, a function of this connection that marks
 * table `i` changed (`ChangeStamps.markChanged(table)`). So a cache of the backlinks' totals
 * outlives a write to a draft, a thread or a token's `last_used_at`, and stays exact through what
 * a statement changes that its text does not name: a cascade (SQLite runs a foreign key's action as
 * a trigger would, and fires the child table's triggers) and the writes of other triggers.
 *
 * - TEMP triggers belong to this connection alone: other processes' writes are not seen here
 *   (their commits move `PRAGMA data_version`, which the stamp reads), and no file is changed.
 *   They stay bound to their table by name when another connection drops and re-creates it.
 * - They are put in place soon after the first time a cache asks for a stamp, in a turn of their
 *   own while the connection is free (`request`), so a process that keeps nothing (a bulk
 *   import, most commands) pays nothing, and the first request does not wait for them;
 *   until then, and whenever they may be gone (after `exclusive` use of the connection: a
 *   migration or a restore may drop a table, and its triggers with it), `active` is false and
 *   the store counts every write for every table.
 * - Putting them in place changes the TEMP schema, which expires the connection's prepared
 *   statements once (each is prepared again at its next use): once per process, and once after
 *   each migration or restore whose tables lost them.
 * - Each row written costs one call of the function (well under a microsecond).
 *
 * SQLite-only, like the snapshot's TEMP triggers (./snapshot.ts).
 */
import { setImmediate } from 'node:timers';
import { STAMPED_TABLES, type StampedTable } from '../change-stamps.js';
import type { SqliteHandle } from './handle.js';

/** The function the triggers call, registered on the connection. */
const FUNCTION = 'stamp_changed';
const EVENTS = ['INSERT', 'UPDATE', 'DELETE'] as const;
const triggerName = (table: string, event: string) => `stamp_${table}_${event.toLowerCase()}`;

/** Every trigger's name, for `installed`'s count. */
const TRIGGERS = STAMPED_TABLES.flatMap((table) => EVENTS.map((event) => triggerName(table, event)));

export interface ChangeTracking {
  /** Whether every stamped table's writes on this connection are told per table now. */
  readonly active: boolean;
  /**
   * Asks for the triggers: unless they are in place, they are put there in a turn of the event
   * loop of their own (about 1 ms, not on the request that asked) if the connection can take DDL
   * then (`free`: no statement or transaction holds it), else at a later ask. A table missing (a
   * database not migrated yet) leaves tracking off until `recheck`. Errors are not thrown:
   * tracking stays off and every write counts for every table.
   */
  request(): void;
  /**
   * The triggers may be gone, or now installable (after a migration, a restore): looks, turns
   * tracking off if one is missing, and lets `request` try again.
   */
  recheck(): void;
}

/**
 * Tracking of the connection `sqlite`'s writes, telling `changed(table)` of each table written.
 * Registers the function at once; the triggers wait for `request`.
 * @param free whether nothing holds the connection now (the store's lock).
 */
export function trackChanges(
  sqlite: SqliteHandle,
  free: () => boolean,
  changed: (table: StampedTable) => void,
): ChangeTracking {
  sqlite.function(FUNCTION, { deterministic: false }, (i: unknown) => {
    changed(STAMPED_TABLES[Number(i)]!);
    return null;
  });
  let active = false;
  /** An install failed: not tried again until `recheck` (a migration may have made the tables). */
  let failed = false;
  let scheduled = false;
  const present = () =>
    (
      sqlite
        .prepare(
          `SELECT count(*) AS n FROM temp.sqlite_master WHERE type = 'trigger' AND name IN (${TRIGGERS.map(() => '?').join(', ')})`,
        )
        .get(...TRIGGERS) as { n: number }
    ).n === TRIGGERS.length;
  const install = () => {
    scheduled = false;
    if (active || failed || !free()) return;
    try {
      // Inside the try: node:sqlite's `isTransaction` throws once the connection is closed.
      if (sqlite.inTransaction) return;
      STAMPED_TABLES.forEach((table, i) => {
        for (const event of EVENTS)
          sqlite.exec(
            `CREATE TEMP TRIGGER IF NOT EXISTS ${triggerName(table, event)} AFTER ${event} ON main.${table} ` +
              `BEGIN SELECT ${FUNCTION}(${i}); END`,
          );
      });
      active = present();
    } catch {
      // A closed connection included (the store closed before this turn).
      active = false;
      failed = true;
    }
  };
  return {
    get active() {
      return active;
    },
    request() {
      if (active || failed || scheduled) return;
      scheduled = true;
      setImmediate(install);
    },
    recheck() {
      failed = false;
      if (!active) return;
      try {
        active = present();
      } catch {
        active = false;
      }
    },
  };
}
