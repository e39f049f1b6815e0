/**
 * The outbox of thread replies (decisions.md §7, §10). `thread_messages` doubles as the queue:
 * an accepted reply is an outbound row with status `queued` and `next_attempt_at` = now,
 * inserted in the same transaction as its idempotency record. The worker delivers due rows
 * through the configured mail transport:
 *
 * - before each attempt it counts it and moves `next_attempt_at` to when a retry would be due
 *   (`outbox.backoffMs` × 2^(attempt − 1)), in one committed statement, so a process killed
 *   mid-send retries it then, once;
 * - success: `sent`, `sent_at` set; a retryable failure: stays `queued` for that retry; a
 *   permanent failure (SMTP 5xx) or the `outbox.maxAttempts`th failure: `failed`, `last_error` set.
 * - A message is attempted at most `outbox.maxAttempts` times, crashes included: a row left
 *   `queued` with its attempts used up (the process stopped during its last attempt, or the
 *   setting was lowered since) is never sent again but marked `failed` at the next pass, whose
 *   `last_error` says that the outcome of the last attempt is unknown.
 *
 * Delivery is at least once. SMTP has no idempotency: if the process stops after the relay
 * accepted a message and before the `sent` update commits, the message is sent again on the next
 * attempt, with the same Message-ID (`<message id@sender domain>`) so receivers can drop the copy.
 * That window is kept as short as it can be: the `sent` update is the first thing that runs when
 * the transport reports the relay's acceptance (no other I/O, log line or await in between),
 * and a failure to record it is not mistaken for a failed delivery. Imported messages (no
 * `next_attempt_at`) are never picked up.
 */
import { isoAt, type Clock } from '../domain/clock.js';
import type { Config } from '../config.js';
import type { Store } from '../db/connection.js';
import type { ThreadMessagesTable } from '../db/schema.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { ProviderError, type MailTransport } from '../providers/index.js';
import { newId } from '../domain/ids.js';
import { createWorker, type Worker } from './worker.js';

const BATCH = 20;

export interface ReplyToQueue {
  threadId: string;
  sender: { id: string; email: string };
  to: string[];
  cc: string[];
  subject: string;
  body: string;
}

/** The queueing side of the outbox, for the reply route. */
export class Outbox {
  private readonly insert;
  private readonly lastSubject;

  constructor(store: Store) {
    this.insert =
      store.sqlite.prepare(`INSERT INTO thread_messages (id, thread_id, direction, status, from_email, to_emails, cc_emails, subject, body,
      sent_at, sender_id, attempts, next_attempt_at, last_error, created_at, updated_at)
      VALUES (@id, @thread_id, @direction, @status, @from_email, @to_emails, @cc_emails, @subject, @body,
      @sent_at, @sender_id, @attempts, @next_attempt_at, @last_error, @created_at, @updated_at)`);
    this.lastSubject = store.sqlite.prepare(
      'SELECT subject FROM thread_messages WHERE thread_id = ? AND subject IS NOT NULL ORDER BY COALESCE(sent_at, created_at) DESC, id DESC LIMIT 1',
    );
  }

  /** "Re: " + the thread's latest subject (not doubled), or `fallback`. */
  replySubject(threadId: string, fallback: string): string {
    const subject = (this.lastSubject.get(threadId) as { subject: string } | undefined)?.subject?.trim();
    if (!subject) return fallback;
    return /^re:/i.test(subject) ? subject : `Re: ${subject}`;
  }

  /** Inside a transaction: a queued outbound message, due now; returns its id. */
  enqueue(reply: ReplyToQueue, nowIso: string): string {
    const row: ThreadMessagesTable = {
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
      next_attempt_at: nowIso,
      last_error: null,
      created_at: nowIso,
      updated_at: nowIso,
    };
    this.insert.run(row);
    return row.id;
  }
}

export interface OutboxWorkerDeps {
  store: Store;
  clock: Clock;
  config: Config;
  mail: MailTransport;
  logger: Logger;
  /** Counts each delivery attempt by result (decisions.md §15). */
  metrics?: Metrics;
}

interface DueMessage extends ThreadMessagesTable {
  display_name: string | null;
  reply_to_email: string | null;
}

/** The delivery worker (polling every `outbox.pollIntervalMs`). */
export function createOutboxWorker({ store, clock, config, mail, logger, metrics }: OutboxWorkerDeps): Worker {
  const { sqlite } = store;
  const { backoffMs, maxAttempts } = config.outbox;
  const due =
    sqlite.prepare(`SELECT m.*, s.display_name, s.reply_to_email FROM thread_messages m LEFT JOIN email_senders s ON s.id = m.sender_id
    WHERE m.status = 'queued' AND m.direction = 'outbound' AND m.next_attempt_at <= ? AND m.attempts < ? ORDER BY m.next_attempt_at, m.id LIMIT ?`);
  const lease = sqlite.prepare(
    "UPDATE thread_messages SET attempts = ?, next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'queued' AND attempts = ?",
  );
  const sent = sqlite.prepare(
    "UPDATE thread_messages SET status = 'sent', sent_at = ?, next_attempt_at = NULL, last_error = NULL, updated_at = ? WHERE id = ?",
  );
  const failed = sqlite.prepare(
    "UPDATE thread_messages SET status = 'failed', next_attempt_at = NULL, last_error = ?, updated_at = ? WHERE id = ?",
  );
  const retry = sqlite.prepare('UPDATE thread_messages SET last_error = ?, updated_at = ? WHERE id = ?');
  // Passes never overlap (worker.ts), so at the start of one no attempt of this process is under
  // way: a queued row with its attempts used up was left by a process that stopped mid-attempt.
  const exhausted =
    sqlite.prepare(`UPDATE thread_messages SET status = 'failed', next_attempt_at = NULL, updated_at = @now,
    last_error = 'the process stopped during attempt ' || attempts || ' of ' || @max || '; whether the relay accepted it is unknown, and it is not attempted again'
    WHERE status = 'queued' AND direction = 'outbound' AND next_attempt_at IS NOT NULL AND attempts >= @max`);

  const step = async () => {
    const given = Number(exhausted.run({ now: isoAt(clock.now()), max: maxAttempts }).changes);
    if (given)
      logger.log('warn', 'replies interrupted during their last delivery attempt marked failed', {
        count: given,
        maxAttempts,
      });
    const messages = due.all(isoAt(clock.now()), maxAttempts, BATCH) as DueMessage[];
    for (const m of messages) {
      const attempt = m.attempts + 1;
      const now = clock.now();
      if (
        Number(
          lease.run(attempt, isoAt(now + backoffMs * 2 ** (attempt - 1)), isoAt(now), m.id, m.attempts).changes,
        ) === 0
      )
        continue;
      const from = m.from_email ?? '';
      try {
        await mail.send({
          messageId: `<${m.id}@${from.split('@')[1] ?? 'outreach-api.invalid'}>`,
          from: { name: m.display_name, address: from },
          replyTo: m.reply_to_email,
          to: JSON.parse(m.to_emails) as string[],
          cc: JSON.parse(m.cc_emails) as string[],
          subject: m.subject ?? '',
          text: m.body,
          threadId: m.thread_id,
          attempt,
        });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const retryable = !(error instanceof ProviderError) || error.retryable;
        const at = isoAt(clock.now());
        const givenUp = !retryable || attempt >= maxAttempts;
        if (givenUp) failed.run(message, at, m.id);
        else retry.run(message, at, m.id);
        metrics?.outboxDeliveries.inc({ result: givenUp ? 'failed' : 'retry' });
        logger.log('warn', 'reply delivery attempt failed', { messageId: m.id, attempt, retryable, error: message });
        continue;
      }
      // The relay accepted it: record that first (the duplicate window of decisions.md §7). If
      // this throws, the pass fails and the leased attempt is retried after its backoff.
      const at = isoAt(clock.now());
      sent.run(at, at, m.id);
      metrics?.outboxDeliveries.inc({ result: 'sent' });
    }
    return messages.length + given;
  };
  return createWorker('outbox', config.outbox.pollIntervalMs, step, logger);
}
