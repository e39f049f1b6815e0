/**
 * The `idempotency_keys` table (decisions.md §7): the statements behind the idempotency
 * middleware (`src/http/middleware/idempotency.ts`: find, claim, complete, release a key), the
 * purge of expired keys, and the release of keys a stopped process left `in_flight`.
 */
import { compileStatement } from '../db/compiled.js';
import type { Store } from '../db/connection.js';

/** What a key is scoped to: the account, the operation (method and route template) and the key itself. */
export type KeyScope = {
  accountId: string;
  operation: string;
  key: string;
};

/**
 * The per-request statements on `idempotency_keys` of one store, compiled and prepared once. They
 * run synchronously, inside the middleware's transactions.
 */
export class IdempotencyKeyStore {
  private readonly select;
  private readonly insert;
  private readonly remove;
  private readonly finish;

  constructor(store: Store) {
    const { db } = store;
    this.select = compileStatement(store, (param) =>
      db
        .selectFrom('idempotency_keys')
        .select(['request_hash', 'state', 'response_status', 'response_body', 'expires_at'])
        .where('account_id', '=', param('accountId'))
        .where('operation', '=', param('operation'))
        .where('key', '=', param('key')),
    );
    this.insert = compileStatement(store, (param) =>
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
    this.remove = compileStatement(store, (param) =>
      db
        .deleteFrom('idempotency_keys')
        .where('account_id', '=', param('accountId'))
        .where('operation', '=', param('operation'))
        .where('key', '=', param('key')),
    );
    this.finish = compileStatement(store, (param) =>
      db
        .updateTable('idempotency_keys')
        .set({ state: 'completed', response_status: param<number>('status'), response_body: param('body') })
        .where('account_id', '=', param('accountId'))
        .where('operation', '=', param('operation'))
        .where('key', '=', param('key')),
    );
  }

  /** The key's row (expired or not), or undefined when it was never used or was purged. */
  find(scope: KeyScope) {
    return this.select.get(scope);
  }

  /** Stores the key `in_flight` for `requestHash`, replacing any row it had (an expired one). */
  claim(scope: KeyScope, requestHash: string, createdAt: string, expiresAt: string): void {
    this.remove.run(scope);
    this.insert.run({ ...scope, requestHash, createdAt, expiresAt });
  }

  /** Marks the key `completed` with the answer to replay: its HTTP status and JSON body. */
  complete(scope: KeyScope, status: number, body: string): void {
    this.finish.run({ ...scope, status, body });
  }

  /** Deletes the key (its operation failed: nothing was stored, a retry runs it again). */
  release(scope: KeyScope): void {
    this.remove.run(scope);
  }
}

/** Deletes the keys that expired at or before `nowIso` (ISO 8601); returns how many. */
export function purgeExpiredKeys(store: Store, nowIso: string): number {
  const purge = compileStatement(store, (param) =>
    store.db.deleteFrom('idempotency_keys').where('expires_at', '<=', param('now')),
  );
  return purge.run({ now: nowIso });
}

/**
 * Releases keys left `in_flight` by a process that stopped mid-request (their operation never
 * committed, so a retry must run it); returns how many. Call at start-up, before requests are served.
 */
export function releaseAbandonedKeys(store: Store): number {
  const release = compileStatement(store, () =>
    store.db.deleteFrom('idempotency_keys').where('state', '=', 'in_flight'),
  );
  return release.run({});
}
