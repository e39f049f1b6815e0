/**
 * Work that one instance at a time may do, when several share one PostgreSQL database
 * (decisions.md §16 "Background work across instances"): each takes an advisory lock of its own
 * key. On SQLite one process serves the file, and the work simply runs.
 */
import type { Kysely } from 'kysely';
import { inTransaction, piecesOf, type Store } from './store.js';
import type { Database } from './schema.js';

/** The advisory lock keys of the service (one number each; any constant the database's other users do not take). */
export const ADVISORY_LOCKS = {
  /** `migrate`: one instance applies the migrations, the others wait. */
  migrate: 7_283_001,
  /** The purge of expired idempotency keys. */
  keyPurge: 7_283_002,
  /** A pass of the backlink monitor. */
  monitorPass: 7_283_003,
} as const;

/**
 * Runs `fn` with a transaction of `db`'s store when no other instance runs the work `key` now,
 * and resolves with what it resolves with; resolves with `skipped` at once when another instance
 * holds it (PostgreSQL: `pg_try_advisory_xact_lock`, released when the transaction ends). On
 * SQLite `fn` always runs, in a transaction.
 */
export function onOneInstance<T>(
  db: Kysely<Database>,
  key: keyof typeof ADVISORY_LOCKS,
  skipped: T,
  fn: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return inTransaction(db, async (trx) =>
    (await piecesOf(trx).lockForTransaction(trx, ADVISORY_LOCKS[key])) ? fn(trx) : skipped,
  );
}

/**
 * Runs `fn` while no other instance runs the work `key`, for work that lasts longer than a
 * transaction should (a monitor pass): on PostgreSQL a session advisory lock on a connection of
 * its own, held until `fn` settles (or the instance dies, which ends its session); resolves with
 * `busy` at once when another instance holds it. On SQLite `fn` always runs.
 */
export function exclusivelyAcrossInstances<T>(
  store: Store,
  key: keyof typeof ADVISORY_LOCKS,
  busy: T,
  fn: () => Promise<T>,
): Promise<T> {
  return store.pieces.runExclusively(ADVISORY_LOCKS[key], busy, fn);
}
