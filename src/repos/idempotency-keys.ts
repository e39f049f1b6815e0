/**
 * The `idempotency_keys` table (decisions.md §7, §16): the statements behind the idempotency
 * middleware (`src/http/middleware/idempotency.ts`: find, claim, complete, release a key), the
 * purge of expired keys, and the release of keys a stopped process left `in_flight`. Each is
 * compiled once and runs on the store's builder or a transaction of it.
 *
 * A key `in_flight` is held from its claim (`created_at`) for one lease (`workers.leaseMs`): a
 * key left in flight longer belonged to a process that stopped mid-request, and may be claimed
 * again. The claim is one atomic statement on both stores (an insert that, on the key's row,
 * replaces only an expired key or an expired lease), so of several requests with one key, on
 * one instance or several, exactly one claims it.
 */
import type { Kysely } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import type { Database } from '../db/schema.js';

/** What a key is scoped to: the account, the operation (method and route template) and the key itself. */
export type KeyScope = {
  accountId: string;
  operation: string;
  key: string;
};

const select = precompiledQuery((db, param) =>
  db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'state', 'response_status', 'response_body', 'created_at', 'expires_at'])
    .where('account_id', '=', param('accountId'))
    .where('operation', '=', param('operation'))
    .where('key', '=', param('key')),
);

const claim = precompiledQuery((db, param) =>
  db
    .insertInto('idempotency_keys')
    .values({
      account_id: param('accountId'),
      operation: param('operation'),
      key: param('key'),
      request_hash: param('requestHash'),
      state: 'in_flight',
      created_at: param('createdAt'),
      expires_at: param('expiresAt'),
    })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'operation', 'key'])
        .doUpdateSet((eb) => ({
          request_hash: eb.ref('excluded.request_hash'),
          state: eb.ref('excluded.state'),
          response_status: null,
          response_body: null,
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.expires_at', '<=', param('createdAt')),
            eb.and([
              eb('idempotency_keys.state', '=', 'in_flight'),
              eb('idempotency_keys.created_at', '<=', param('leaseCutoff')),
            ]),
          ]),
        ),
    ),
);

const remove = precompiledQuery((db, param) =>
  db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', param('accountId'))
    .where('operation', '=', param('operation'))
    .where('key', '=', param('key'))
    .where('state', '=', 'in_flight')
    .where('created_at', '=', param('claimedAt')),
);

const finish = precompiledQuery((db, param) =>
  db
    .updateTable('idempotency_keys')
    .set({ state: 'completed', response_status: param<number>('status'), response_body: param('body') })
    .where('account_id', '=', param('accountId'))
    .where('operation', '=', param('operation'))
    .where('key', '=', param('key'))
    .where('state', '=', 'in_flight')
    .where('created_at', '=', param('claimedAt')),
);

/** The key's row (expired or not), or undefined when it was never used or was purged. */
export function findKey(db: Kysely<Database>, scope: KeyScope) {
  return select.first(db, scope);
}

/**
 * Stores the key `in_flight` for `requestHash`, claimed at `createdAt` and kept until
 * `expiresAt` (ISO 8601), in one statement: a new row, or in place of a row whose key expired at
 * or before `createdAt` or whose claim (`in_flight`) is at or before `leaseCutoff`.
 * @returns false when the key's row is another request's, live: nothing was written (read it
 *   again to answer; on PostgreSQL the statement waited for that request's transaction to end).
 */
export async function claimKey(
  db: Kysely<Database>,
  scope: KeyScope,
  requestHash: string,
  createdAt: string,
  expiresAt: string,
  leaseCutoff: string,
): Promise<boolean> {
  return (await claim.run(db, { ...scope, requestHash, createdAt, expiresAt, leaseCutoff })) > 0;
}

/**
 * Marks the key `completed` with the answer to replay: its HTTP status and JSON body; only the
 * claim made at `claimedAt` (ISO 8601) and still in flight is completed.
 * @returns false when that claim is no longer the key's (its lease ran out and another request took it).
 */
export async function completeKey(
  db: Kysely<Database>,
  scope: KeyScope,
  claimedAt: string,
  status: number,
  body: string,
): Promise<boolean> {
  return (await finish.run(db, { ...scope, claimedAt, status, body })) > 0;
}

/**
 * Deletes the key claimed at `claimedAt` (its operation failed: nothing was stored, a retry runs
 * it again); a key another request holds since is left alone.
 */
export async function releaseKey(db: Kysely<Database>, scope: KeyScope, claimedAt: string): Promise<void> {
  await remove.run(db, { ...scope, claimedAt });
}

const purge = precompiledQuery((db, param) =>
  db.deleteFrom('idempotency_keys').where('expires_at', '<=', param('now')),
);

/** Deletes the keys that expired at or before `nowIso` (ISO 8601); resolves with how many. */
export function purgeExpiredKeys(db: Kysely<Database>, nowIso: string): Promise<number> {
  return purge.run(db, { now: nowIso });
}

const abandoned = precompiledQuery((db, param) =>
  db.deleteFrom('idempotency_keys').where('state', '=', 'in_flight').where('created_at', '<=', param('cutoff')),
);

/**
 * Releases keys left `in_flight` by a process that stopped mid-request (their operation never
 * committed, so a retry must run it): those claimed at or before `cutoff` (ISO 8601; a start-up
 * that serves the store alone passes now, one among instances now minus a lease); resolves with
 * how many. Call at start-up, before requests are served.
 */
export function releaseAbandonedKeys(db: Kysely<Database>, cutoff: string): Promise<number> {
  return abandoned.run(db, { cutoff });
}
