/**
 * The `idempotency_keys` table (decisions.md §7): the statements behind the idempotency
 * middleware (`src/http/middleware/idempotency.ts`: find, claim, complete, release a key), the
 * purge of expired keys, and the release of keys a stopped process left `in_flight`. Each is
 * compiled once and runs on the store's builder or a transaction of it.
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
    .select(['request_hash', 'state', 'response_status', 'response_body', 'expires_at'])
    .where('account_id', '=', param('accountId'))
    .where('operation', '=', param('operation'))
    .where('key', '=', param('key')),
);

const insert = precompiledQuery((db, param) =>
  db.insertInto('idempotency_keys').values({
    account_id: param('accountId'),
    operation: param('operation'),
    key: param('key'),
    request_hash: param('requestHash'),
    state: 'in_flight',
    created_at: param('createdAt'),
    expires_at: param('expiresAt'),
  }),
);

const remove = precompiledQuery((db, param) =>
  db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', param('accountId'))
    .where('operation', '=', param('operation'))
    .where('key', '=', param('key')),
);

const finish = precompiledQuery((db, param) =>
  db
    .updateTable('idempotency_keys')
    .set({ state: 'completed', response_status: param<number>('status'), response_body: param('body') })
    .where('account_id', '=', param('accountId'))
    .where('operation', '=', param('operation'))
    .where('key', '=', param('key')),
);

/** The key's row (expired or not), or undefined when it was never used or was purged. */
export function findKey(db: Kysely<Database>, scope: KeyScope) {
  return select.first(db, scope);
}

/**
 * In a transaction (`inTransaction`): stores the key `in_flight` for `requestHash`, replacing any
 * row it had (an expired one).
 */
export async function claimKey(
  trx: Kysely<Database>,
  scope: KeyScope,
  requestHash: string,
  createdAt: string,
  expiresAt: string,
): Promise<void> {
  await remove.run(trx, scope);
  await insert.run(trx, { ...scope, requestHash, createdAt, expiresAt });
}

/** Marks the key `completed` with the answer to replay: its HTTP status and JSON body. */
export async function completeKey(db: Kysely<Database>, scope: KeyScope, status: number, body: string): Promise<void> {
  await finish.run(db, { ...scope, status, body });
}

/** Deletes the key (its operation failed: nothing was stored, a retry runs it again). */
export async function releaseKey(db: Kysely<Database>, scope: KeyScope): Promise<void> {
  await remove.run(db, scope);
}

const purge = precompiledQuery((db, param) =>
  db.deleteFrom('idempotency_keys').where('expires_at', '<=', param('now')),
);

/** Deletes the keys that expired at or before `nowIso` (ISO 8601); resolves with how many. */
export function purgeExpiredKeys(db: Kysely<Database>, nowIso: string): Promise<number> {
  return purge.run(db, { now: nowIso });
}

const abandoned = precompiledQuery((db) => db.deleteFrom('idempotency_keys').where('state', '=', 'in_flight'));

/**
 * Releases keys left `in_flight` by a process that stopped mid-request (their operation never
 * committed, so a retry must run it); resolves with how many. Call at start-up, before requests
 * are served.
 */
export function releaseAbandonedKeys(db: Kysely<Database>): Promise<number> {
  return abandoned.run(db, {});
}
