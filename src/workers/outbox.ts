/**
 * The outbox of thread replies (decisions.md §7, §10). `thread_messages` doubles as the queue:
 * an accepted reply is an outbound row with status `queued` and `next_attempt_at` = now,
 * inserted in the same transaction as its idempotency record. The worker delivers due rows
 * through the configured mail transport:
 *
 * - before each attempt it counts it and moves `next_attempt_at` to when a retry would be due
 *   (`outbox.backoffMs` × 2^(attempt − 1); among instances sharing a PostgreSQL store, at least
 *   `workers.leaseMs`, decisions.md §16), in one committed conditional statement, so one process
 *   takes it and a process killed mid-send leaves it to be retried then, once;
 * - success: `sent`, `sent_at` set; a retryable failure: stays `queued` for that retry; a
 *   permanent failure (SMTP 5xx) or the `outbox.maxAttempts`th failure: `failed`, `last_error` set.
 * - A message is attempted at most `outbox.maxAttempts` times, crashes included: a row left
 *   `queued` with its attempts used up (the process stopped during its last attempt, or the
 *   setting was lowered since) is never sent again but marked `failed` by the first pass that
 *   finds it among the due messages once its lease ran out (soonest due first, as deliveries),
 *   with a `last_error` that says that the outcome of the last attempt is unknown; each pass
 *   logs how many it gave up.
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
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { MailTransport } from '../providers/index.js';
import { outboxMessages as messages } from '../repos/outbox.js';
import { leasedPass, retryDelayMs, type LeasedQueue } from './lease.js';
import { createWorker, type Worker } from './worker.js';

const BATCH = 20;
/** The Message-ID's domain for a sender address without one (never so: addresses are validated). */
// Stryker disable next-line StringLiteral: unreachable fallback (see the attempt below)
const NO_DOMAIN = 'outreach-api.invalid';

export interface OutboxWorkerDeps {
  store: Store;
  clock: Clock;
  config: Config;
  mail: MailTransport;
  logger: Logger;
  /** Counts each delivery attempt by result (decisions.md §15). */
  metrics?: Metrics;
}

/** The delivery worker (polling every `outbox.pollIntervalMs`). */
export function createOutboxWorker({ store, clock, config, mail, logger, metrics }: OutboxWorkerDeps): Worker {
  const { backoffMs, maxAttempts } = config.outbox;
  type Due = Awaited<ReturnType<typeof messages.dueMessages>>[number];
  /** Messages the current pass gave up because a stop interrupted their last attempt. */
  let interrupted = 0;

  const delivery: LeasedQueue<Due> = {
    due: (now, limit) => messages.dueMessages(store.db, isoAt(now), limit),
    // The attempt is counted and leased before it starts, in one committed statement (of several
    // instances, one takes it): it is due again when the lease ends, so a process killed mid-send
    // retries it then, once. Alone on its store, the lease is the retry's delay; among instances,
    // at least `workers.leaseMs`, so no other instance takes a send that is still running.
    lease: async (m, now) => {
      // A queued row with its attempts used up and its lease run out was left by a process that
      // stopped mid-attempt (an attempt under way, here or on another instance, holds its lease):
      // given up, not attempted again.
      if (m.attempts >= maxAttempts) {
        if (await messages.failExhausted(store.db, m.id, m.attempts, maxAttempts, isoAt(now))) interrupted++;
        return null;
      }
      const retryMs = retryDelayMs(backoffMs, m.attempts + 1);
      const leaseMs = store.sharedByInstances ? Math.max(retryMs, config.workers.leaseMs) : retryMs;
      return (await messages.leaseAttempt(store.db, m.id, m.attempts, isoAt(now + leaseMs), isoAt(now)))
        ? m.attempts + 1
        : null;
    },
    attempt: async (m, attempt) => {
      // A queued reply always has its sender's address and a subject (`enqueue` writes both, the
      // address as validated): the fallbacks below only satisfy the columns' nullable types.
      // Stryker disable next-line StringLiteral: unreachable fallback (see above)
      const from = m.from_email ?? '';
      await mail.send({
        messageId: `<${m.id}@${from.split('@')[1] ?? NO_DOMAIN}>`,
        from: { name: m.display_name, address: from },
        replyTo: m.reply_to_email,
        to: JSON.parse(m.to_emails) as string[],
        cc: JSON.parse(m.cc_emails) as string[],
        // Stryker disable next-line StringLiteral: unreachable fallback (see above)
        subject: m.subject ?? '',
        text: m.body,
        threadId: m.thread_id,
        attempt,
      });
    },
    // The relay accepted it: record that first (the duplicate window of decisions.md §7). If
    // this throws, the pass fails and the leased attempt is retried after its backoff.
    succeeded: async (m) => {
      await messages.markSent(store.db, m.id, isoAt(clock.now()));
      metrics?.outboxDeliveries.inc({ result: 'sent' });
    },
    // The lease made it due again: the error is recorded, and the retry brought forward to its
    // delay after this failure when the lease would end later.
    failed: async (m, { error, givenUp, now, retryAt }) => {
      if (givenUp) await messages.markFailed(store.db, m.id, error, isoAt(now));
      else await messages.noteRetry(store.db, m.id, error, isoAt(retryAt), isoAt(now));
      metrics?.outboxDeliveries.inc({ result: givenUp ? 'failed' : 'retry' });
    },
    maxAttempts: () => maxAttempts,
    failureLog: { message: 'reply delivery attempt failed', fields: (m) => ({ messageId: m.id }) },
  };
  const deliver = leasedPass(delivery, { clock, logger, batch: BATCH, backoffMs });

  const step = async (stopping?: AbortSignal) => {
    interrupted = 0;
    try {
      return await deliver(stopping);
    } finally {
      if (interrupted)
        logger.log('warn', 'replies interrupted during their last delivery attempt marked failed', {
          count: interrupted,
          maxAttempts,
        });
    }
  };
  return createWorker('outbox', config.outbox.pollIntervalMs, step, logger);
}
