/**
 * The inbox sync's own tables (decisions.md §16, §17; 0006_inbox.sql of sql/sqlite/ and sql/postgres/): where it stands in each
 * mailbox (`inbox_mailboxes`) and which instance syncs a connection now (`inbox_leases`), and the
 * transaction that records a batch of inbound messages together with the mailbox's new position.
 * Date-times are ISO 8601 strings; every statement is plain SQL both dialects run.
 */
import type { Kysely } from 'kysely';
import { inTransaction } from '../db/connection.js';
import type { Database } from '../db/schema.js';
import { setContactStatusByReply } from './contacts.js';
import { recordConnectionHealth } from './email-accounts.js';
import { insertInboundMessage, type InboundRecord } from './threads.js';

/** Where the sync stands in a mailbox: the UIDVALIDITY it saw and the highest UID it handled. */
export interface MailboxPosition {
  uidValidity: number;
  lastUid: number;
}

/** The recorded position of connection `connectionId`'s mailbox `mailbox`, if any. */
export async function mailboxPosition(
  db: Kysely<Database>,
  connectionId: string,
  mailbox: string,
): Promise<MailboxPosition | undefined> {
  const row = await db
    .selectFrom('inbox_mailboxes')
    .select(['uid_validity', 'last_uid'])
    .where('connection_id', '=', connectionId)
    .where('mailbox', '=', mailbox)
    .executeTakeFirst();
  return row && { uidValidity: Number(row.uid_validity), lastUid: Number(row.last_uid) };
}

/**
 * Takes (or renews) the lease of connection `connectionId` for `holder` until `expiresAt`, when
 * nobody holds it, its holder's lease expired by `now`, or `holder` holds it already. Two
 * instances asking at once: one gets it (the insert or the conditional update decides).
 * @returns whether `holder` holds it now.
 */
export async function takeInboxLease(
  db: Kysely<Database>,
  connectionId: string,
  holder: string,
  now: string,
  expiresAt: string,
): Promise<boolean> {
  const inserted = await db
    .insertInto('inbox_leases')
    .values({ connection_id: connectionId, holder, expires_at: expiresAt })
    .onConflict((oc) => oc.column('connection_id').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return true;
  const updated = await db
    .updateTable('inbox_leases')
    .set({ holder, expires_at: expiresAt })
    .where('connection_id', '=', connectionId)
    .where((eb) => eb.or([eb('holder', '=', holder), eb('expires_at', '<=', now)]))
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/**
 * Ends `holder`'s pass over connection `connectionId` in one transaction: records the
 * connection's health at `now` (`recordConnectionHealth`; skipped when `healthy` is null) and
 * gives the lease up, if `holder` still holds it.
 */
export async function endInboxPass(
  db: Kysely<Database>,
  connectionId: string,
  holder: string,
  healthy: boolean | null,
  now: string,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    await trx
      .deleteFrom('inbox_leases')
      .where('connection_id', '=', connectionId)
      .where('holder', '=', holder)
      .execute();
    if (healthy !== null) await recordConnectionHealth(trx, connectionId, healthy, now);
  });
}

/** Thrown inside `recordInboxBatch` when the lease was lost: the batch is rolled back. */
export class LeaseLost extends Error {
  constructor(connectionId: string) {
    super(`the inbox lease of connection ${connectionId} was taken over by another instance`);
    this.name = 'LeaseLost';
  }
}

/** An inbound message to store, and what it changes on its contact. */
export interface InboundWrite {
  message: InboundRecord;
  /** The thread's contact, and its new status when the reply changes it. */
  contact?: { id: string; change: { status: 'bounced' } | { status: 'suppressed'; reason: string } };
}

/** Where a batch leaves the mailbox, and the lease that allows writing it. */
export interface BatchPosition extends MailboxPosition {
  connectionId: string;
  mailbox: string;
  holder: string;
  /** The lease's new end. */
  leaseUntil: string;
}

/**
 * Records `writes` in one transaction (decisions.md §17): each message in its thread unless the
 * thread holds it already, with its thread's and contact's changes; then, with `position`, the
 * mailbox's new position and the renewed lease. `now` is ISO 8601.
 * @returns per write, whether it was stored (false: a duplicate, nothing written for it).
 * @throws LeaseLost (nothing written) when `position.holder` no longer holds the lease; what
 * the store throws (nothing written).
 */
export async function recordInboxBatch(
  db: Kysely<Database>,
  writes: readonly InboundWrite[],
  now: string,
  position?: BatchPosition,
): Promise<boolean[]> {
  return inTransaction(db, async (trx) => {
    if (position) {
      const renewed = await trx
        .updateTable('inbox_leases')
        .set({ expires_at: position.leaseUntil })
        .where('connection_id', '=', position.connectionId)
        .where('holder', '=', position.holder)
        .executeTakeFirst();
      if (Number(renewed.numUpdatedRows) === 0) throw new LeaseLost(position.connectionId);
    }
    const stored: boolean[] = [];
    for (const write of writes) {
      const fresh = await insertInboundMessage(trx, write.message, now);
      if (fresh && write.contact) await setContactStatusByReply(trx, write.contact.id, write.contact.change, now);
      stored.push(fresh);
    }
    if (position)
      await trx
        .insertInto('inbox_mailboxes')
        .values({
          connection_id: position.connectionId,
          mailbox: position.mailbox,
          uid_validity: position.uidValidity,
          last_uid: position.lastUid,
          synced_at: now,
        })
        .onConflict((oc) =>
          oc.columns(['connection_id', 'mailbox']).doUpdateSet({
            uid_validity: position.uidValidity,
            last_uid: position.lastUid,
            synced_at: now,
          }),
        )
        .execute();
    return stored;
  });
}
