/**
 * Step 4 of an inbox pass's recording (decisions.md §17; the pass is `./pass.ts`): the decided
 * messages of one mailbox written in groups, with the position they leave the mailbox at.
 */
import { isoAt } from '../../domain/clock.js';
import type { MessageEntry } from '../../providers/imap.js';
import { type BatchPosition, recordInboxBatch } from '../../repos/inbox.js';
import { settle, type Decision, type InboxResult } from './record.js';
import { type ConnectionSummary, type InboxDeps, type InboxPassOptions, leaseMs } from './types.js';

const RESULT_FIELD = {
  matched: 'matched',
  unmatched: 'unmatched',
  duplicate: 'duplicates',
  bounce: 'bounces',
  skipped: 'skipped',
  error: 'errors',
} as const satisfies Record<InboxResult, keyof ConnectionSummary>;

/** The longest a decided message waits before it is recorded, ms (see `MailboxRecorder`). */
const RECORD_WITHIN_MS = 100;

/**
 * Records a mailbox's decided messages (`recordInboxBatch`) with the position they leave it at,
 * a group of them per transaction: at most `RECORD_WITHIN_MS` after the first of the group was
 * decided (by a timer, so that a message that takes long to handle, a hostile one read up to
 * `inbox.parseTimeoutMs` or one the model is slow about, never holds back those decided before
 * it), and at the end of each batch (at most `BATCH_MESSAGES`). A pass stopped at any point (a
 * crash, kill -9) has recorded all but the last `RECORD_WITHIN_MS` of its work, and the position
 * never passes a message it has not recorded.
 *
 * The position moves over the batch's messages in UID order, each decided, up to the first whose
 * handling failed (`error`): that one and those after it are read again next pass (the ones
 * after it stored meanwhile are dropped as duplicates then). Each recorded message is counted in
 * the summary, the metric and `onMessage`. A failed write ends the pass: `check()` throws it.
 */
export class MailboxRecorder {
  private batch: readonly MessageEntry[] = [];
  /** The batch's messages before this one are in `position.lastUid` (or a failed one stopped it). */
  private cursor = 0;
  private decided = new Map<number, Decision>();
  /** Decided and not yet handed to a write, in the order decided. */
  private pending: Decision[] = [];
  private blocked = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The writes, one after another. */
  private writing: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | null = null;
  /** The position handed to the last write; none yet. */
  private written: number | undefined;

  constructor(
    private readonly deps: InboxDeps,
    private readonly connectionId: string,
    private readonly summary: ConnectionSummary,
    private readonly options: InboxPassOptions,
    private readonly position: Omit<BatchPosition, 'leaseUntil'>,
  ) {}

  startBatch(batch: readonly MessageEntry[]): void {
    this.batch = batch;
    this.cursor = 0;
    this.decided = new Map();
  }

  has(uid: number): boolean {
    return this.decided.has(uid);
  }

  /** `decision` for message `uid` of the batch, recorded within `RECORD_WITHIN_MS`. */
  add(uid: number, decision: Decision): void {
    this.decided.set(uid, decision);
    this.pending.push(decision);
    this.timer ??= setTimeout(() => void this.record(), RECORD_WITHIN_MS);
  }

  /**
   * Hands what is pending to a write with the position it leaves the mailbox at (at least
   * `endOfMailbox`, the mailbox's last UID, when the whole batch was handled); resolves when that
   * write is done (a failure is kept for `check()`).
   */
  record(endOfMailbox?: number): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (; !this.blocked && this.cursor < this.batch.length; this.cursor++) {
      const decision = this.decided.get(this.batch[this.cursor]!.uid);
      if (!decision) break;
      if (decision.result === 'error') this.blocked = true;
      else this.position.lastUid = this.batch[this.cursor]!.uid;
    }
    if (endOfMailbox !== undefined && !this.blocked && this.cursor === this.batch.length)
      this.position.lastUid = Math.max(this.position.lastUid, endOfMailbox);
    const decisions = this.pending;
    this.pending = [];
    const lastUid = this.position.lastUid;
    // Nothing new to write (the timer took all there was just before the batch ended).
    if (decisions.length === 0 && lastUid === this.written) return this.writing;
    this.written = lastUid;
    this.writing = this.writing.then(() => this.write(decisions, lastUid));
    return this.writing;
  }

  private async write(decisions: Decision[], lastUid: number): Promise<void> {
    if (this.failure) return;
    const { store, clock, config, logger, metrics } = this.deps;
    try {
      const writes = decisions.flatMap((d) => (d.write ? [d.write] : []));
      const stored = await recordInboxBatch(store.db, writes, isoAt(clock.now()), {
        ...this.position,
        lastUid,
        leaseUntil: isoAt(clock.now() + leaseMs(config)),
      });
      for (const decision of settle(decisions, stored)) {
        this.summary.fetched++;
        this.summary[RESULT_FIELD[decision.result]]++;
        metrics?.inboxMessages.inc({ result: decision.result });
        if (decision.result === 'unmatched')
          logger.log('debug', 'an inbound message matched no thread', { connectionId: this.connectionId });
        this.options.onMessage?.(this.connectionId, decision.result);
      }
    } catch (error) {
      this.failure = { error };
    }
  }

  /** @throws what a write threw (the store, `LeaseLost`): the pass ends. */
  check(): void {
    if (this.failure) throw this.failure.error;
  }

  /** Stops the timer and waits for the writes under way; what is still pending is not recorded. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
  }
}
