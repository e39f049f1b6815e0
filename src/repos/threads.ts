/**
 * Inbox threads of a site and their messages: queries and the row → API mappers (contract §2
 * "Thread"; decisions.md §5 for order, §10 for the two ids a thread answers to, §11 for the value
 * lists). The reply endpoint reuses `requireThread` and `countOutbound`. The other statements on
 * `thread_messages` have homes of their own: the outbox's in `outbox.ts`, the inbox's in `inbox.ts`.
 */
import type { Kysely, Selectable } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import type { Database, ThreadMessagesTable, ThreadsTable } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { THREAD_STATUSES } from '../domain/enums.js';
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
