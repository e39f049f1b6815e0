/**
 * Which thread an inbound message belongs to, how it is classified, and what is written for it
 * (decisions.md §17). One code for the IMAP sync (`./pass.ts`, a batch of messages per
 * transaction) and the fixture's `POST /__admin/inbound` (one message).
 *
 * Which thread, the first rule that finds one, among the threads of the connection's site (of
 * every site when there is no connection: the fixture without `connectionId`):
 * 1. a delivery status notification: the thread of the outbound message whose Message-ID its
 *    `message/rfc822` or `text/rfc822-headers` part carries;
 * 2. `In-Reply-To`, then `References` from the last: the thread of the first id whose part before
 *    `@` is the id of an outbound message (the outbox sends `<message id@sender domain>`);
 * 3. `From` is the email of a thread's contact (case-insensitively): the most recently updated
 *    such thread;
 * 4. otherwise unmatched: nothing is stored.
 * A message whose own Message-ID is one the outbox sent (our message come back, e.g. a copy to
 * ourselves) is skipped.
 *
 * A bounce makes the contact `bounced`, and a reply that asks to hear no more makes it
 * `suppressed`, only when the message answers one we sent (rule 1 or 2): anyone can write a
 * `From` or a report that names a contact, and only who received our message knows its id. Found
 * by rule 3 alone, such a message is stored and classified, and the contact stays as it was.
 *
 * Stored once per thread by its identity (`inboundIdentity`): one already stored is a
 * `duplicate` before anything is asked of the model, and the unique index catches the copy
 * another writer stored meanwhile.
 */
import { isoAt, type Clock } from '../../domain/clock.js';
import type { HumanReplyClassification, ThreadClassification } from '../../domain/enums.js';
import { newId } from '../../domain/ids.js';
import type { Logger } from '../../logger.js';
import type { ReplyClassifier } from '../../providers/index.js';
import {
  latestThreadOfContactEmail,
  storedInboundMessage,
  threadsOfOutboundMessages,
  type InboundThread,
  type InboundWrite,
} from '../../repos/inbox.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inboundIdentity, type InboundMessage } from './message.js';
import {
  asksToStop,
  classifyByHeaders,
  classifyByPhrases,
  failedRecipients,
  ownText,
  SUPPRESSION_REASON,
  threadChanges,
} from './rules.js';

/** What became of one message: the values of `outreach_inbox_messages_total{result}`. */
export type InboxResult = 'matched' | 'unmatched' | 'duplicate' | 'bounce' | 'skipped' | 'error';

/** A message read and decided, before anything is written. */
export interface Decision {
  result: InboxResult;
  threadId: string | null;
  /** The stored message's id (`msg_…`): the new one, or the one already stored for a duplicate. */
  messageId: string | null;
  classification: ThreadClassification | null;
  /** Why it was skipped or unmatched, for the log. */
  reason?: string;
  /** What to write when `result` is `matched` or `bounce` (it may still turn out a duplicate). */
  write?: InboundWrite;
}

export interface RecordDeps {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /** The model for human replies (`providers.generator: openai`); without it the phrases decide. */
  classifier?: ReplyClassifier;
}

/** `<msg_x@example.com>` → `msg_x`: the part before the last `@` (or the whole id without one). */
export const localPart = (id: string): string => {
  const bare = id.startsWith('<') && id.endsWith('>') ? id.slice(1, -1) : id;
  const at = bare.lastIndexOf('@');
  return at < 0 ? bare : bare.slice(0, at);
};

/** The thread of the first of `ids` (in order) that names an outbound message in `threads`. */
const firstThread = (ids: readonly string[], threads: Map<string, InboundThread>) =>
  ids.map((id) => threads.get(localPart(id))).find((thread) => thread !== undefined);

/** A human reply's classification: the model's when there is one (a failure gives `unclassified`), else the phrases'. */
async function classifyHuman(
  deps: RecordDeps,
  message: InboundMessage,
  text: string,
): Promise<HumanReplyClassification> {
  if (!deps.classifier) return classifyByPhrases(text);
  try {
    return await deps.classifier.classify({ subject: message.subject, text });
  } catch (error) {
    deps.logger.log('warn', 'the model could not classify a reply; it is unclassified', {
      error: error instanceof Error ? error.message : String(error),
    });
    return 'unclassified';
  }
}

/**
 * Decides what becomes of `message` (see the module comment): its thread, classification and
 * the write that records it, without writing anything.
 * @param siteId the connection's site; null: every site.
 * @param receivedAt the server's internal date (ms since the epoch), the `sentAt` of a message
 * without a usable `Date`; null: now.
 * @throws what the store throws.
 */
export async function decide(
  deps: RecordDeps,
  message: InboundMessage,
  siteId: string | null,
  receivedAt: number | null,
): Promise<Decision> {
  const none = { threadId: null, messageId: null, classification: null };
  const byHeaders = classifyByHeaders(message);
  if (byHeaders.kind === 'notStored') return { result: 'skipped', ...none, reason: byHeaders.reason };
  const original = message.report?.originalMessageId ?? null;
  const replyIds = [...message.inReplyTo, ...[...message.references].reverse()];
  const outbound = await threadsOfOutboundMessages(
    deps.db,
    [message.messageId, original, ...replyIds].filter((id) => id !== null).map(localPart),
    siteId,
  );
  if (message.messageId && outbound.has(localPart(message.messageId)))
    return { result: 'skipped', ...none, reason: 'a message the outbox sent' };
  // Rules 1 and 2: the message answers one we sent (its report's original, or an id it replies to).
  const answered = (original ? outbound.get(localPart(original)) : undefined) ?? firstThread(replyIds, outbound);
  const thread = answered ?? (await latestThreadOfContactEmail(deps.db, message.from, siteId));
  if (!thread) return { result: 'unmatched', ...none, reason: 'no thread of this sender or conversation' };

  const identity = inboundIdentity(message);
  const stored = await storedInboundMessage(deps.db, identity, siteId);
  if (stored) return { result: 'duplicate', threadId: stored.threadId, messageId: stored.id, classification: null };

  const text = ownText(message.body);
  const classification: ThreadClassification =
    byHeaders.kind === 'human' ? await classifyHuman(deps, message, text) : byHeaders.kind;
  // Only a message that answers one we sent changes the contact: a forged From, or a report
  // that names a contact but no message of ours, is stored in the thread and changes nothing of it.
  let contact: InboundWrite['contact'];
  if (answered && classification === 'bounce') {
    const failed = failedRecipients(message.report!);
    if (failed.length === 0 || failed.includes(thread.contactEmail.toLowerCase()))
      contact = { id: thread.contactId, change: { status: 'bounced' } };
  } else if (answered && classification === 'not_interested' && asksToStop(text))
    contact = { id: thread.contactId, change: { status: 'suppressed', reason: SUPPRESSION_REASON } };
  const id = newId('msg');
  const changes = threadChanges(classification);
  return {
    result: classification === 'bounce' ? 'bounce' : 'matched',
    threadId: thread.threadId,
    messageId: id,
    classification,
    write: {
      message: {
        id,
        threadId: thread.threadId,
        inboundMessageId: identity,
        fromEmail: message.from,
        toEmails: message.to,
        ccEmails: message.cc,
        subject: message.subject,
        body: message.body,
        sentAt: isoAt(message.date ?? receivedAt ?? deps.clock.now()),
        classification,
        threadStatus: changes.status,
        outcome: changes.outcome,
      },
      contact,
    },
  };
}

/**
 * `decisions` after their writes were attempted: a write that found its message already stored
 * (`stored[i]` false) becomes a `duplicate`.
 */
export function settle(decisions: readonly Decision[], stored: readonly boolean[]): Decision[] {
  let next = 0;
  return decisions.map((d) => {
    if (!d.write) return d;
    return stored[next++] ? d : { ...d, result: 'duplicate', messageId: null, classification: null };
  });
}
