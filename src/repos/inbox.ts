/**
 * The inbox sync's statements (decisions.md §16, §17; 0006_inbox.sql of sql/sqlite/ and sql/postgres/):
 * its own tables, where it stands in each mailbox (`inbox_mailboxes`) and which instance syncs a
 * connection now (`inbox_leases`); the inbound messages in `thread_messages`, how one finds its
 * thread and whether it is stored already; and the transaction that records a batch of them
 * together with the mailbox's new position. Date-times are ISO 8601 strings; every statement is
 * plain SQL both dialects run.
 */
import { type Kysely, sql } from 'kysely';
import { caseInsensitive } from '../db/collation.js';
import { precompiledQuery } from '../db/compiled.js';
import { inTransaction } from '../db/connection.js';
import type { Database } from '../db/schema.js';
import { setContactStatusByReply } from './contacts.js';
import { recordConnectionHealth } from './email-accounts.js';
import type { ThreadMessageRow, ThreadRow } from './threads.js';

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

// ---- inbound messages in thread_messages ------------------------------------------------------
// Each message read costs these statements, so they are compiled once (`precompiledQuery`).

/** A thread an inbound message may belong to, with its contact. */
export interface InboundThread {
  threadId: string;
  contactId: string;
  contactEmail: string;
}

/** How many ids one lookup of outbound messages takes: lists are padded to the next size (few shapes). */
const ID_LIST_SIZES = [1, 2, 4, 8, 16, 32, 64, 128] as const;

const outboundByIds = precompiledQuery((db, param, shape: `${number}` | `${number}:site`) => {
  const [size, site] = shape.split(':');
  let query = db
    .selectFrom('thread_messages as m')
    .innerJoin('threads as t', 't.id', 'm.thread_id')
    .innerJoin('contacts as c', 'c.id', 't.contact_id')
    .select(['m.id as messageId', 't.id as threadId', 'c.id as contactId', 'c.email as contactEmail'])
    .where(
      'm.id',
      'in',
      Array.from({ length: Number(size) }, (_, i) => param(`id${i}` as 'id0')),
    )
    .where('m.direction', '=', sql.lit<ThreadMessageRow['direction']>('outbound'));
  if (site) query = query.where('t.site_id', '=', param('siteId'));
  return query;
});

/**
 * The outbound messages among `messageIds` (thread message ids, as the outbox puts them before
 * the `@` of a Message-ID; at most 128 are looked at) whose thread is of site `siteId` (any site
 * when null), each with its thread: rules 1 and 2 of decisions.md §17. Ids that are not such
 * messages are absent. The messages are found by primary key, then their threads and contacts.
 */
export async function threadsOfOutboundMessages(
  db: Kysely<Database>,
  messageIds: readonly string[],
  siteId: string | null,
): Promise<Map<string, InboundThread>> {
  const ids = [...new Set(messageIds)].slice(0, ID_LIST_SIZES[ID_LIST_SIZES.length - 1]);
  if (ids.length === 0) return new Map();
  const size = ID_LIST_SIZES.find((n) => n >= ids.length)!;
  const params: Record<string, unknown> = { siteId };
  for (let i = 0; i < size; i++) params[`id${i}`] = ids[Math.min(i, ids.length - 1)];
  const rows = await outboundByIds.all(
    db,
    params as Record<'id0' | 'siteId', unknown>,
    `${size}${siteId === null ? '' : ':site'}`,
  );
  return new Map(rows.map(({ messageId, ...thread }) => [messageId, thread]));
}

const latestBySender = precompiledQuery((db, param, shape: 'site' | 'any') => {
  let query = db
    .selectFrom('contacts as c')
    .innerJoin('threads as t', 't.contact_id', 'c.id')
    .select(['t.id as threadId', 'c.id as contactId', 'c.email as contactEmail'])
    .where(caseInsensitive('c.email'), '=', param('email'));
  if (shape === 'site') query = query.where('c.site_id', '=', param('siteId'));
  return query.orderBy('t.updated_at', 'desc').orderBy('t.id', 'desc').limit(1);
});

/**
 * The most recently updated thread (ties: the highest id) whose contact's email is `email`,
 * case-insensitively (`COLLATE NOCASE`, as the contact finder compares addresses), among the
 * contacts of site `siteId` (any site when null; a thread's contact is of its site): rule 3 of
 * decisions.md §17. The contacts are found by `contacts_email_nocase`, their threads by
 * `threads_contact`; the few threads found are sorted.
 */
export function latestThreadOfContactEmail(
  db: Kysely<Database>,
  email: string,
  siteId: string | null,
): Promise<InboundThread | undefined> {
  return latestBySender.first(db, { email, siteId }, siteId === null ? 'any' : 'site');
}

const copiesOf = precompiledQuery((db, param) =>
  db
    .selectFrom('thread_messages as m')
    .innerJoin('threads as t', 't.id', 'm.thread_id')
    .select(['m.id as id', 'm.thread_id as threadId', 't.site_id as siteId'])
    .where('m.inbound_message_id', '=', param('inboundMessageId'))
    .orderBy('m.id'),
);

/**
 * The stored inbound message identified by `inboundMessageId` (decisions.md §17 "Stored once")
 * in a thread of site `siteId` (any site when null), if any: its id and thread. Found by
 * `thread_messages_inbound_id` (the copies of one message are few), the site checked here.
 */
export async function storedInboundMessage(
  db: Kysely<Database>,
  inboundMessageId: string,
  siteId: string | null,
): Promise<{ id: string; threadId: string } | undefined> {
  const copies = await copiesOf.all(db, { inboundMessageId });
  const copy = copies.find((c) => siteId === null || c.siteId === siteId);
  return copy && { id: copy.id, threadId: copy.threadId };
}

/** An inbound message to store in its thread, and what it changes there (decisions.md §17). */
export interface InboundRecord {
  id: string;
  threadId: string;
  /** The Message-ID, or `hash:…` (see `ThreadMessagesTable.inbound_message_id`). */
  inboundMessageId: string;
  fromEmail: string;
  toEmails: string[];
  ccEmails: string[];
  subject: string | null;
  body: string;
  /** ISO 8601. */
  sentAt: string;
  classification: ThreadRow['classification'];
  /** The thread's new status; undefined: unchanged. */
  threadStatus?: ThreadRow['status'];
  /** The thread's new outcome; undefined: unchanged. */
  outcome?: ThreadRow['outcome'];
}

const insertInbound = precompiledQuery((db, param) =>
  db
    .insertInto('thread_messages')
    .values({
      id: param('id'),
      thread_id: param('threadId'),
      direction: 'inbound',
      status: 'sent',
      from_email: param('fromEmail'),
      to_emails: param('toEmails'),
      cc_emails: param('ccEmails'),
      subject: param('subject'),
      body: param('body'),
      sent_at: param('sentAt'),
      sender_id: null,
      attempts: 0,
      next_attempt_at: null,
      last_error: null,
      created_at: param('now'),
      updated_at: param('now'),
      inbound_message_id: param('inboundMessageId'),
    })
    .onConflict((oc) => oc.doNothing()),
);

/** `status` and `outcome` are the new values, or null to leave them as they are. */
const countInbound = precompiledQuery((db, param) =>
  db
    .updateTable('threads')
    .set((eb) => ({
      inbound_count: eb('inbound_count', '+', 1),
      last_inbound_at: eb
        .case()
        .when(eb.or([eb('last_inbound_at', 'is', null), eb('last_inbound_at', '<', param('sentAt'))]))
        .then(param('sentAt'))
        .else(eb.ref('last_inbound_at'))
        .end(),
      classification: param<ThreadRow['classification']>('classification'),
      status: eb.fn.coalesce(eb.val(param<ThreadRow['status'] | null>('status')), eb.ref('status')),
      outcome: eb.fn.coalesce(eb.val(param<ThreadRow['outcome'] | null>('outcome')), eb.ref('outcome')),
      updated_at: param('now'),
    }))
    .where('id', '=', param('threadId')),
);

/**
 * Stores `message` in its thread unless that thread already holds its `inboundMessageId` (the
 * unique index `thread_messages_inbound_id` decides, whoever wrote the other copy), and then
 * counts it on the thread: `inbound_count` + 1, `last_inbound_at` the later of the two,
 * `classification`, and `status`/`outcome` when given; `updated_at` = `now` (ISO 8601).
 * Call inside a transaction. Returns false when it was a duplicate (nothing written).
 */
export async function insertInboundMessage(db: Kysely<Database>, message: InboundRecord, now: string) {
  const inserted = await insertInbound.run(db, {
    ...message,
    toEmails: JSON.stringify(message.toEmails),
    ccEmails: JSON.stringify(message.ccEmails),
    now,
  });
  if (inserted === 0) return false;
  await countInbound.run(db, {
    threadId: message.threadId,
    sentAt: message.sentAt,
    classification: message.classification,
    status: message.threadStatus ?? null,
    outcome: message.outcome ?? null,
    now,
  });
  return true;
}
