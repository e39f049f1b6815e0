/**
 * The `idempotency_keys` table (decisions.md §7) outside a request: the purge of expired keys
 * and the release of keys a stopped process left `in_flight`. The per-request claim, replay and
 * completion live with the idempotency middleware (`src/http/middleware/idempotency.ts`).
 */
import type { Store } from '../db/connection.js';

/** Deletes the keys that expired at or before `nowIso` (ISO 8601); returns how many. */
export function purgeExpiredKeys(store: Store, nowIso: string): number {
  return Number(store.sqlite.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?').run(nowIso).changes);
}

/**
 * Releases keys left `in_flight` by a process that stopped mid-request (their operation never
 * committed, so a retry must run it); returns how many. Call at start-up, before requests are served.
 */
export function releaseAbandonedKeys(store: Store): number {
  return Number(store.sqlite.prepare("DELETE FROM idempotency_keys WHERE state = 'in_flight'").run().changes);
}
