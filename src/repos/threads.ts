/**
 * Inbox threads of a site and their messages: queries and the row → API mappers (contract §2
 * "Thread"; decisions.md §5 for order, §10 for the two ids a thread answers to, §11 for the value
 * lists). The reply endpoint reuses `requireThread`.
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import { caseInsensitive } from '../db/collation.js';
import { insertRow, precompiledQuery } from '../db/compiled.js';
import type { Database, ThreadMessagesTable, ThreadsTable } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { THREAD_STATUSES } from '../domain/enums.js';
import { newId } from '../domain/ids.js';
import { countedByKey, countedTotal, keysOf } from './row-counts.js';
import { twoPartPage } from './two-part-page.js';
import type { z } from '@hono/zod-openapi';
import type { Thread, ThreadMessage } from '../schemas/resources.js';

export type ThreadRow = Selectable<ThreadsTable>;
export type ThreadMessageRow = Selectable<ThreadMessagesTable>;

export type ThreadRecord = z.output<typeof Thread>;

export type ThreadMessageRecord = z.output<typeof ThreadMessage>;

/** A thread joined with its contact (`c_*`) and prospect (`p_*`), as `threadQuery` selects it. */
export interface ThreadJoinedRow {
  id: string;
  provider_thread_id: string;
  contact_id: string;
  status: ThreadRow['status'];
  outcome: ThreadRow['outcome'];
  classification: ThreadRow['classification'];
  inbound_count: number;
  outbound_count: number;
  last_inbound_at: string | null;
  last_outbound_at: string | null;
  updated_at: string;
  c_id: string;
  c_full_name: string | null;
  c_email: string;
  c_role: string | null;
  c_company: string | null;
  p_id: string;
  p_title: string | null;
  p_url: string;
  p_domain: string;
}

/** Joined row → API (contract §2 "Thread"); `site_id`, `project_id`, `prospect_id` and `created_at` stay internal. */
export const toThread = (row: ThreadJoinedRow): ThreadRecord => ({
  id: row.id,
  threadId: row.provider_thread_id,
  contactId: row.contact_id,
  status: row.status,
  outcome: row.outcome,
  classification: row.classification,
  inboundCount: row.inbound_count,
  outboundCount: row.outbound_count,
  lastInboundAt: row.last_inbound_at,
  lastOutboundAt: row.last_outbound_at,
  updatedAt: row.updated_at,
  contact: { id: row.c_id, fullName: row.c_full_name, email: row.c_email, role: row.c_role, company: row.c_company },
  prospect: { id: row.p_id, title: row.p_title, url: row.p_url, domain: row.p_domain },
});

/**
 * Row → API (inbox reply message): address lists JSON → arrays. The outbox columns
 * (`sender_id`, `next_attempt_at`, `last_error`) and `updated_at` stay internal.
 */
export const toThreadMessage = (row: ThreadMessageRow): ThreadMessageRecord => ({
  id: row.id,
  direction: row.direction,
  status: row.status,
  fromEmail: row.from_email,
  toEmails: JSON.parse(row.to_emails) as string[],
  ccEmails: JSON.parse(row.cc_emails) as string[],
  subject: row.subject,
  body: row.body,
  sentAt: row.sent_at,
  attempts: row.attempts,
  createdAt: row.created_at,
});

/** The columns of a `ThreadJoinedRow`: a thread (`t`), its contact (`c`) and prospect (`p`). */
const THREAD_COLUMNS = [
  't.id',
  't.provider_thread_id',
  't.contact_id',
  't.status',
  't.outcome',
  't.classification',
  't.inbound_count',
  't.outbound_count',
  't.last_inbound_at',
  't.last_outbound_at',
  't.updated_at',
  'c.id as c_id',
  'c.full_name as c_full_name',
  'c.email as c_email',
  'c.role as c_role',
  'c.company as c_company',
  'p.id as p_id',
  'p.title as p_title',
  'p.url as p_url',
  'p.domain as p_domain',
] as const;

/** Threads (`t`) with their contact and prospect, each joined by primary key. */
const threadQuery = (db: Kysely<Database>) =>
  db
    .selectFrom('threads as t')
    .innerJoin('contacts as c', 'c.id', 't.contact_id')
    .innerJoin('prospects as p', 'p.id', 't.prospect_id')
    .select(THREAD_COLUMNS);

/**
 * One page of a site's threads (the site already checked to be in the caller's project), newest
 * `updatedAt` first (ties: `id` descending), and the exact number of them (the sum of the
 * `site:<status>` counters).
 *
 * The page (`pg`) is a covering walk of `threads_site_order`, so a deep OFFSET skips index
 * entries only; the joins run for the page's rows, which keep the walk's order (the page is the
 * outer loop), so nothing is sorted.
 */
export async function listThreads(db: Kysely<Database>, siteId: string, limit: number, offset: number) {
  const pg = db
    .selectFrom('threads')
    .select(['id', 'updated_at'])
    .where('site_id', '=', siteId)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .as('pg');
  const [rows, total] = await Promise.all([
    db
      .selectFrom(pg)
      .innerJoin('threads as t', 't.id', 'pg.id')
      .innerJoin('contacts as c', 'c.id', 't.contact_id')
      .innerJoin('prospects as p', 'p.id', 't.prospect_id')
      .select(THREAD_COLUMNS)
      .orderBy('pg.updated_at', 'desc')
      .orderBy('pg.id', 'desc')
      .execute(),
    countedTotal(db, 'threads', siteId, keysOf('site', THREAD_STATUSES)),
  ]);
  return { items: rows.map(toThread), total };
}

/**
 * The thread of site `siteId` (already checked to be in the caller's project) addressed by
 * `idOrProviderId`: the thread record's `id`, or else its provider `threadId` (decisions.md §10).
 * A record id wins over an equal provider id; of several threads sharing a provider id, the
 * lowest record id is taken.
 * @throws ApiError NOT_FOUND when no thread of the site answers to it (one of another site or
 * account answers like a missing one, decisions.md §1).
 */
export async function requireThread(
  db: Kysely<Database>,
  siteId: string,
  idOrProviderId: string,
): Promise<ThreadRecord> {
  const row = await threadQuery(db)
    .where('t.id', '=', await threadRecordId(db, siteId, idOrProviderId))
    .where('t.site_id', '=', siteId)
    .executeTakeFirst();
  if (!row) throw notFound('Thread');
  return toThread(row);
}

/**
 * The record id of the thread of site `siteId` that `idOrProviderId` names: the thread with that
 * id, else the first (by id) with that provider `threadId` (decisions.md §10); `idOrProviderId`
 * itself when none does. A name resolution that never refuses, so the idempotency hash of a
 * reply can use it before any lookup (decisions.md §7).
 */
export async function threadRecordId(db: Kysely<Database>, siteId: string, idOrProviderId: string): Promise<string> {
  const named = (column: 'id' | 'provider_thread_id') =>
    db
      .selectFrom('threads')
      .select('id')
      .where('site_id', '=', siteId)
      .where(column, '=', idOrProviderId)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
  return ((await named('id')) ?? (await named('provider_thread_id')))?.id ?? idOrProviderId;
}

/**
 * One page of the messages of thread `threadId` (a record id, already checked to be in the
 * caller's site), and the exact number of them (the `thread:1` and `thread:0` counters: sent
 * and not). Order (decisions.md §5): oldest `sentAt` first (ties: `id` ascending); then the
 * messages without `sentAt` (queued, or failed delivery), oldest `createdAt` first (ties: `id`).
 *
 * Paged in two parts, each an in-order index walk: the sent part is the range
 * `sent_at IS NOT NULL` of `thread_messages_thread_order` (thread_id, sent_at, id); the unsent
 * part is the partial index `thread_messages_unsent_order` (thread_id, created_at, id).
 */
export async function listThreadMessages(db: Kysely<Database>, threadId: string, limit: number, offset: number) {
  const counts = await countedByKey(db, 'thread_messages', threadId, ['thread:1', 'thread:0']);
  const sent = counts['thread:1'];
  const total = sent + counts['thread:0'];
  const thread = db.selectFrom('thread_messages').selectAll().where('thread_id', '=', threadId);
  const rows = await twoPartPage(
    { limit, offset },
    { firstCount: sent, total },
    (n, skip) =>
      thread.where('sent_at', 'is not', null).orderBy('sent_at').orderBy('id').limit(n).offset(skip).execute(),
    (n, skip) =>
      thread.where('sent_at', 'is', null).orderBy('created_at').orderBy('id').limit(n).offset(skip).execute(),
  );
  return { items: rows.map(toThreadMessage), total };
}

const outboxByStatus = precompiledQuery((db) =>
  db
    .selectFrom('thread_messages')
    .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
    .where('direction', '=', sql.lit<ThreadMessageRow['direction']>('outbound'))
    .groupBy('status'),
);

/**
 * Outbound reply messages (the outbox) by status, every status present (0 when none), for the
 * `outreach_outbox_messages` gauge (decisions.md §15). One grouped scan of `thread_messages`.
 */
export async function countOutboxMessagesByStatus(
  db: Kysely<Database>,
): Promise<Record<ThreadMessageRow['status'], number>> {
  const counts: Record<ThreadMessageRow['status'], number> = { queued: 0, sent: 0, failed: 0 };
  for (const row of await outboxByStatus.all(db, {})) counts[row.status] = Number(row.n);
  return counts;
}

const outbound = precompiledQuery((db, param) =>
  db
    .updateTable('threads')
    .set((eb) => ({
      outbound_count: eb('outbound_count', '+', 1),
      last_outbound_at: param('now'),
      updated_at: param('now'),
    }))
    .where('id', '=', param('threadId')),
);

/**
 * Counts one more outbound message on thread `threadId` at `now`: `outbound_count + 1`,
 * `last_outbound_at` and `updated_at` (the reply's idempotency transaction).
 */
export async function countOutbound(db: Kysely<Database>, threadId: string, now: string): Promise<void> {
  await outbound.run(db, { threadId, now });
}

/** A reply to queue in the outbox: its thread, sender, addresses and text. */
export interface QueuedReply {
  threadId: string;
  sender: { id: string; email: string };
  to: string[];
  cc: string[];
  subject: string;
  body: string;
}

// The literals keep the partial index `thread_messages_outbox` (WHERE status = 'queued') usable.
const queued = sql.lit<ThreadMessageRow['status']>('queued');
const outboundLiteral = sql.lit<ThreadMessageRow['direction']>('outbound');

const lastSubject = precompiledQuery((db, param) =>
  db
    .selectFrom('thread_messages')
    .select('subject')
    .where('thread_id', '=', param('threadId'))
    .where('subject', 'is not', null)
    .orderBy((eb) => eb.fn.coalesce('sent_at', 'created_at'), 'desc')
    .orderBy('id', 'desc')
    .limit(1),
);

const due = precompiledQuery((db, param) =>
  db
    .selectFrom('thread_messages as m')
    .leftJoin('email_senders as s', 's.id', 'm.sender_id')
    .selectAll('m')
    .select(['s.display_name', 's.reply_to_email'])
    .where('m.status', '=', queued)
    .where('m.direction', '=', outboundLiteral)
    .where('m.next_attempt_at', '<=', param('now'))
    .where('m.attempts', '<', param<number>('maxAttempts'))
    .orderBy('m.next_attempt_at')
    .orderBy('m.id')
    .limit(param<number>('limit')),
);

const lease = precompiledQuery((db, param) =>
  db
    .updateTable('thread_messages')
    .set({ attempts: param<number>('attempt'), next_attempt_at: param('retryAt'), updated_at: param('now') })
    .where('id', '=', param('id'))
    .where('status', '=', queued)
    .where('attempts', '=', param<number>('attempts')),
);

const sent = precompiledQuery((db, param) =>
  db
    .updateTable('thread_messages')
    .set({
      status: 'sent',
      sent_at: param('now'),
      next_attempt_at: null,
      last_error: null,
      updated_at: param('now'),
    })
    .where('id', '=', param('id')),
);

const failed = precompiledQuery((db, param) =>
  db
    .updateTable('thread_messages')
    .set({ status: 'failed', next_attempt_at: null, last_error: param('error'), updated_at: param('now') })
    .where('id', '=', param('id')),
);

const retry = precompiledQuery((db, param) =>
  db
    .updateTable('thread_messages')
    .set((eb) => ({
      last_error: param('error'),
      updated_at: param('now'),
      // The earlier of the lease's end and the retry's time.
      next_attempt_at: eb
        .case()
        .when('next_attempt_at', '<', param('retryAt'))
        .then(eb.ref('next_attempt_at'))
        .else(param('retryAt'))
        .end(),
    }))
    .where('id', '=', param('id')),
);

const exhausted = precompiledQuery((db, param) =>
  db
    .updateTable('thread_messages')
    .set({
      status: 'failed',
      next_attempt_at: null,
      updated_at: param('now'),
      last_error: sql<string>`'the process stopped during attempt ' || attempts || ' of ' || ${param<number>('max')} || '; whether the relay accepted it is unknown, and it is not attempted again'`,
    })
    .where('status', '=', queued)
    .where('direction', '=', outboundLiteral)
    .where('next_attempt_at', '<=', param('now'))
    .where('attempts', '>=', param<number>('max')),
);

/**
 * The outbox's statements on `thread_messages` (decisions.md §7, §10), each compiled once; the
 * queueing side runs inside the reply's idempotency transaction (give it that transaction).
 * Date-times are ISO 8601 strings. The delivery rules are `src/workers/outbox.ts`'s.
 */
export const outboxMessages = {
  /** Inserts `reply` as an outbound message `queued` and due at `now`; resolves with its id (`msg_…`). */
  async enqueue(db: Kysely<Database>, reply: QueuedReply, now: string): Promise<string> {
    const row: ThreadMessageRow = {
      id: newId('msg'),
      thread_id: reply.threadId,
      direction: 'outbound',
      status: 'queued',
      from_email: reply.sender.email,
      to_emails: JSON.stringify(reply.to),
      cc_emails: JSON.stringify(reply.cc),
      subject: reply.subject,
      body: reply.body,
      sent_at: null,
      sender_id: reply.sender.id,
      attempts: 0,
      next_attempt_at: now,
      last_error: null,
      created_at: now,
      updated_at: now,
      inbound_message_id: null,
    };
    await insertRow(db, 'thread_messages', row);
    return row.id;
  },

  /** The subject of the thread's latest message that has one (sent, else created, last), if any. */
  async latestSubject(db: Kysely<Database>, threadId: string): Promise<string | null | undefined> {
    return (await lastSubject.first(db, { threadId }))?.subject;
  },

  /**
   * Up to `limit` outbound messages `queued`, due at `now` and with fewer than `maxAttempts`
   * attempts, soonest first, with their sender's `display_name` and `reply_to_email`.
   */
  dueMessages(db: Kysely<Database>, now: string, maxAttempts: number, limit: number) {
    return due.all(db, { now, maxAttempts, limit });
  },

  /**
   * Counts attempt `attempts + 1` of message `id` and moves its `next_attempt_at` to `retryAt`,
   * in one statement, if it is still `queued` with `attempts` attempts; false when it is not
   * (another pass took it).
   */
  async leaseAttempt(db: Kysely<Database>, id: string, attempts: number, retryAt: string, now: string) {
    return (await lease.run(db, { id, attempts, attempt: attempts + 1, retryAt, now })) > 0;
  },

  /** The relay accepted message `id`: `sent` at `now`, nothing due. */
  async markSent(db: Kysely<Database>, id: string, now: string): Promise<void> {
    await sent.run(db, { id, now });
  },

  /** Message `id` is given up: `failed` with `error`, nothing due. */
  async markFailed(db: Kysely<Database>, id: string, error: string, now: string): Promise<void> {
    await failed.run(db, { id, error, now });
  },

  /**
   * An attempt of message `id` failed: records `error`, and makes it due at `retryAt` when its
   * lease would end later.
   */
  async noteRetry(db: Kysely<Database>, id: string, error: string, retryAt: string, now: string): Promise<void> {
    await retry.run(db, { id, error, retryAt, now });
  },

  /**
   * Marks `failed` the outbound messages still `queued` with `max` attempts or more used whose
   * lease ran out at or before `now` (a process stopped during their last attempt, or
   * `outbox.maxAttempts` was lowered); resolves with how many. An attempt under way holds its
   * lease, so it is never taken for one.
   */
  failExhausted(db: Kysely<Database>, max: number, now: string): Promise<number> {
    return exhausted.run(db, { max, now });
  },
};

// ---- inbound messages (decisions.md §17) ------------------------------------------------------
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
