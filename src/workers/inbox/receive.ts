/**
 * One inbound message handed in outside any mailbox: the fixture's `POST /__admin/inbound`
 * (decisions.md §17 "For CI users"), through the same rules and writes as a pass (`./pass.ts`).
 */
import { isoAt } from '../../domain/clock.js';
import { notFound } from '../../domain/errors.js';
import { inboxConnections } from '../../repos/email-accounts.js';
import { recordInboxBatch, storedInboundMessage } from '../../repos/inbox.js';
import type { InboundMessage } from './message.js';
import { decide, type Decision } from './record.js';
import type { InboxDeps } from './types.js';

/** Where a message handed in by the fixture (`POST /__admin/inbound`) is looked for. */
export interface ReceiveOptions {
  /** The connection it came in on: rule 3 then looks at its site's threads; absent: every site's. */
  connectionId?: string;
}

/**
 * Matches and records one message outside any mailbox (decisions.md §17 "For CI users"): the same
 * rules and writes as a pass, counted in the same metric. Its `sentAt` without a `Date` is now.
 * @throws DomainError NOT_FOUND for an unknown `connectionId`; what the store throws.
 */
export async function receiveMessage(
  deps: Omit<InboxDeps, 'config' | 'env'>,
  message: InboundMessage,
  options: ReceiveOptions = {},
): Promise<Decision> {
  const { store, metrics } = deps;
  let siteId: string | null = null;
  if (options.connectionId !== undefined) {
    const connection = (await inboxConnections(store.db, [options.connectionId])).get(options.connectionId);
    if (!connection) throw notFound('Email connection');
    siteId = connection.siteId;
  }
  const decision = await decide({ ...deps, db: store.db }, message, siteId, null);
  let result = decision;
  if (decision.write) {
    const [stored] = await recordInboxBatch(store.db, [decision.write], isoAt(deps.clock.now()));
    if (!stored) {
      // Another writer stored it between the decision and the write: name its copy.
      const copy = await storedInboundMessage(store.db, decision.write.message.inboundMessageId, siteId);
      result = {
        result: 'duplicate',
        threadId: copy?.threadId ?? decision.threadId,
        messageId: copy?.id ?? null,
        classification: null,
      };
    }
  }
  metrics?.inboxMessages.inc({ result: result.result });
  return result;
}
