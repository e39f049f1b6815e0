/**
 * The outbox's statements on `thread_messages` (decisions.md §7, §10, §15): the queueing side,
 * which the reply route runs inside its idempotency transaction (`replySubject`,
 * `outboxMessages.enqueue`), the delivery side, which `src/workers/outbox.ts` runs (its rules are
 * that file's), and the counts of the `outreach_outbox_messages` gauge. An outbound row with
 * status `queued` is the queue. Date-times are ISO 8601 strings.
 */
import { type Kysely, sql } from 'kysely';
import { insertRow, precompiledQuery } from '../db/compiled.js';
import type { Database } from '../db/schema.js';
import { newId } from '../domain/ids.js';
import { cut, MAX_SUBJECT_CHARS } from '../domain/text.js';
import type { ThreadMessageRow } from './threads.js';

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
    .where('id', '=', param('id'))
    .where('status', '=', queued)
    .where('attempts', '=', param<number>('attempts'))
    .where('next_attempt_at', '<=', param('now')),
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
   * Up to `limit` outbound messages `queued` and due at `now`, soonest first, with their sender's
   * `display_name` and `reply_to_email`; those with their attempts used up too (the worker gives
   * them up: `failExhausted`).
   */
  dueMessages(db: Kysely<Database>, now: string, limit: number) {
    return due.all(db, { now, limit });
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
   * Marks message `id` `failed` if it is still `queued` with `attempts` attempts used (`max` or
   * more: a process stopped during its last attempt, or `outbox.maxAttempts` was lowered) and its
   * lease ran out at or before `now`; `last_error` says the last attempt's outcome is unknown.
   * Resolves with false when it is no longer so (another pass took it). Message by message, from
   * the due rows a pass reads anyway: a statement over every due row would cost as much as the
   * backlog of queued replies is long, on the event loop, at every pass (docs/performance.md,
   * "The reply's tail").
   */
  async failExhausted(db: Kysely<Database>, id: string, attempts: number, max: number, now: string): Promise<boolean> {
    return (await exhausted.run(db, { id, attempts, max, now })) > 0;
  },
};

/**
 * The subject of a reply on thread `threadId`: "Re: " + the thread's latest subject (not doubled),
 * or `fallback` when no message has one; at most `MAX_SUBJECT_CHARS` (998) characters.
 */
export async function replySubject(db: Kysely<Database>, threadId: string, fallback: string): Promise<string> {
  const subject = (await outboxMessages.latestSubject(db, threadId))?.trim();
  if (!subject) return cut(fallback, MAX_SUBJECT_CHARS);
  return cut(/^re:/i.test(subject) ? subject : `Re: ${subject}`, MAX_SUBJECT_CHARS);
}
