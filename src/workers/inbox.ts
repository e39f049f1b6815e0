/**
 * The inbox sync (decisions.md §17): one implementation of a pass, run by `serve` as a background
 * worker (when `inbox.enabled`, every `inbox.intervalMs`) and by `outreach-api inbox sync` in the
 * foreground.
 *
 * A pass takes each configured connection (`inbox.connections`, at most `CONNECTIONS_AT_ONCE` at
 * a time), and for each:
 * 1. takes the connection's lease, so that one instance syncs it at a time (decisions.md §16);
 *    a connection whose lease another holds is left to it (`busy`);
 * 2. logs in and EXAMINEs the mailbox (read-only: see `../providers/imap.ts`); a session `serve`
 *    kept open from the last pass asks STATUS first, and selects the mailbox again only when
 *    something is new;
 * 3. lists the new messages: those above the last UID handled, when the mailbox's UIDVALIDITY is
 *    the one recorded; otherwise (a first read, or UIDVALIDITY changed) those of the last
 *    `inbox.initialDays`, whose copies already stored are then dropped as duplicates;
 * 4. fetches them in batches of at most `BATCH_MESSAGES` messages and `BATCH_BYTES` bytes: a
 *    message over `inbox.maxBytes` is skipped unread, one that cannot be parsed or is not read
 *    within `inbox.parseTimeoutMs` is skipped, each other one is decided (`./inbox-record.ts`);
 *    the decided messages are recorded in groups (`MailboxRecorder`), each group's writes in one
 *    transaction with the mailbox's new last UID and the renewed lease. A message whose handling
 *    failed keeps the last UID below it, so that it is read again next pass (the others after it
 *    are stored, and dropped as duplicates then);
 * 5. records the connection's health (a good pass: `connected`; a failed login or connection:
 *    `error`, logged with the connection's id and never the password) and gives the lease up.
 *
 * Every message read ends in exactly one result (`fetched` is their sum), counted in the summary
 * and in `outreach_inbox_messages_total{result}`.
 */
import { randomBytes } from 'node:crypto';
import { isoAt, type Clock } from '../domain/clock.js';
import type { Config } from '../config.js';
import type { Store } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { ReplyClassifier } from '../providers/index.js';
import {
  ImapError,
  openMailboxSession,
  type MailboxSession,
  type MailboxSettings,
  type MailboxStatus,
  type MessageEntry,
} from '../providers/imap.js';
import { inboxConnections, type InboxConnectionRow } from '../repos/email-accounts.js';
import {
  type BatchPosition,
  endInboxPass,
  LeaseLost,
  mailboxPosition,
  recordInboxBatch,
  takeInboxLease,
} from '../repos/inbox.js';
import { storedInboundMessage } from '../repos/inbox.js';
import { notFound } from '../domain/errors.js';
import { parseMessage, UnreadableMessage, type InboundMessage } from './inbox-message.js';
import { decide, settle, type Decision, type InboxResult } from './inbox-record.js';
import { createWorker, type Worker } from './worker.js';

/** Connections synced at the same time. */
export const CONNECTIONS_AT_ONCE = 4;
/** Messages read and committed together. */
export const BATCH_MESSAGES = 50;
/** Message bytes read together (a batch holds at least one message, whatever its size). */
export const BATCH_BYTES = 8 * 1024 * 1024;
const DAY_MS = 86_400_000;

/** How long a lease lasts, ms: renewed at every batch, and longer than two waits on the server. */
export const leaseMs = (config: Config): number => Math.max(60_000, 3 * config.inbox.timeoutMs);

export interface InboxDeps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** Counts each message by result when metrics are on. */
  metrics?: Metrics;
  /** The model for human replies (`providers.generator: openai`). */
  classifier?: ReplyClassifier;
  /** Where the passwords are read (the variables `passwordEnv` names); default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** What a pass did for one connection. `fetched` is the sum of the six results. */
export interface ConnectionSummary {
  connectionId: string;
  /** `ok`: the mailbox was read; `error`: it could not be (see `error`); `busy`: another instance holds its lease. */
  status: 'ok' | 'error' | 'busy';
  error: string | null;
  fetched: number;
  matched: number;
  unmatched: number;
  duplicates: number;
  bounces: number;
  skipped: number;
  errors: number;
  /** Wall time, ms. */
  ms: number;
}

export interface InboxPassOptions {
  /** Only these connections (CLI `--connection`); default every one of `inbox.connections`. */
  connectionIds?: string[];
  /** Stops the pass after the batch in hand (it is recorded). */
  signal?: AbortSignal;
  /** The lease holder; default a new random one. */
  holder?: string;
  /** Sessions to reuse and keep (by connection id); default: each is opened and closed by the pass. */
  sessions?: Map<string, MailboxSession>;
  /** Called once the messages of a connection are listed, with how many will be read. */
  onStart?: (connectionId: string, total: number) => void;
  /** Called after each message's result is recorded. */
  onMessage?: (connectionId: string, result: InboxResult) => void;
}

const RESULT_FIELD = {
  matched: 'matched',
  unmatched: 'unmatched',
  duplicate: 'duplicates',
  bounce: 'bounces',
  skipped: 'skipped',
  error: 'errors',
} as const satisfies Record<InboxResult, keyof ConnectionSummary>;

/**
 * The mailbox's address, `imap://user@host:port/mailbox` (user and mailbox percent-encoded): the
 * key of its recorded position, so that pointing a connection at another login, server or
 * mailbox starts that one from its own first read.
 */
export const mailboxAddress = (settings: Pick<MailboxSettings, 'user' | 'host' | 'port' | 'mailbox'>): string =>
  `imap://${encodeURIComponent(settings.user)}@${settings.host}:${settings.port}/${encodeURIComponent(settings.mailbox)}`;

/** A new lease holder id (random, never from the fixture's seeded ids). */
export const newHolder = (): string => `inbox_${randomBytes(8).toString('hex')}`;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Messages of `entries` in batches of at most `BATCH_MESSAGES` and `BATCH_BYTES` (sizes over `maxBytes` count nothing). */
function batches(entries: readonly MessageEntry[], maxBytes: number): MessageEntry[][] {
  const out: MessageEntry[][] = [];
  let batch: MessageEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entry.size > maxBytes ? 0 : entry.size;
    if (batch.length && (batch.length >= BATCH_MESSAGES || bytes + size > BATCH_BYTES)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(entry);
    bytes += size;
  }
  if (batch.length) out.push(batch);
  return out;
}

/**
 * Runs one pass over the configured connections (see the module comment).
 * @throws what the store throws while looking the connections up (the pass could not run);
 * anything that fails for one connection is in its summary instead.
 */
export async function runInboxPass(deps: InboxDeps, options: InboxPassOptions = {}): Promise<ConnectionSummary[]> {
  const configured = deps.config.inbox.connections;
  const ids = options.connectionIds ?? Object.keys(configured);
  const rows = await inboxConnections(deps.store.db, ids);
  const holder = options.holder ?? newHolder();
  const summaries: ConnectionSummary[] = [];
  let next = 0;
  const lane = async () => {
    while (next < ids.length) {
      const id = ids[next++]!;
      summaries.push(await syncConnection(deps, id, rows.get(id), holder, options));
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONNECTIONS_AT_ONCE, ids.length) }, lane));
  return ids.map((id) => summaries.find((s) => s.connectionId === id)!);
}

/** One connection's part of a pass. Never throws: a failure is in the summary (and the log). */
async function syncConnection(
  deps: InboxDeps,
  connectionId: string,
  row: InboxConnectionRow | undefined,
  holder: string,
  options: InboxPassOptions,
): Promise<ConnectionSummary> {
  const { store, clock, config, logger } = deps;
  const started = performance.now();
  const summary: ConnectionSummary = {
    connectionId,
    status: 'ok',
    error: null,
    fetched: 0,
    matched: 0,
    unmatched: 0,
    duplicates: 0,
    bounces: 0,
    skipped: 0,
    errors: 0,
    ms: 0,
  };
  const done = (status: ConnectionSummary['status'], error: string | null = null) => {
    summary.status = status;
    summary.error = error;
    summary.ms = Math.round(performance.now() - started);
    return summary;
  };
  const mailbox = config.inbox.connections[connectionId];
  if (!mailbox) return done('error', 'not in inbox.connections');
  if (!row) {
    logger.log('warn', 'inbox.connections names an email connection that does not exist', { connectionId });
    return done('error', 'no email connection with this id');
  }
  const now = () => isoAt(clock.now());
  const until = () => isoAt(clock.now() + leaseMs(config));
  try {
    if (!(await takeInboxLease(store.db, connectionId, holder, now(), until()))) return done('busy');
  } catch (error) {
    logger.log('error', 'the inbox lease could not be taken', { connectionId, error: messageOf(error) });
    return done('error', 'the store failed');
  }
  let healthy: boolean | null = null;
  try {
    const password = (deps.env ?? process.env)[mailbox.passwordEnv];
    if (!password)
      throw new ImapError(`the environment variable ${mailbox.passwordEnv} (passwordEnv) is not set`, 'login');
    const settings: MailboxSettings = {
      host: mailbox.host,
      port: mailbox.port,
      secure: mailbox.secure,
      user: mailbox.user ?? row.accountEmail,
      password,
      mailbox: mailbox.mailbox,
      timeoutMs: config.inbox.timeoutMs,
      maxBytes: config.inbox.maxBytes,
    };
    const kept = options.sessions?.get(connectionId);
    options.sessions?.delete(connectionId);
    let session: MailboxSession | undefined;
    let status: MailboxStatus | undefined;
    // A kept session has its mailbox selected from the last pass: STATUS tells whether anything
    // is new without selecting it again.
    let selected = false;
    if (kept?.usable) {
      // A kept session the server has dropped meanwhile (a restart, an idle timeout) may not
      // know it yet: its first command fails, and a new login is tried before anything is said.
      try {
        status = await kept.status();
        session = kept;
      } catch (error) {
        if (!(error instanceof ImapError) || error.kind !== 'connect') throw error;
      }
    }
    if (!session) {
      await kept?.close();
      session = await openMailboxSession(settings);
      status = undefined;
    }
    options.sessions?.set(connectionId, session);
    try {
      if (!status) {
        status = await session.examine();
        selected = true;
      }
      await readMailbox(deps, session, { status, selected }, row, mailboxAddress(settings), holder, summary, options);
    } finally {
      if (!options.sessions || !session.usable) {
        options.sessions?.delete(connectionId);
        await session.close();
      }
    }
    healthy = true;
    return done('ok');
  } catch (error) {
    if (error instanceof ImapError) {
      healthy = false;
      logger.log('warn', 'the mailbox of an email connection could not be read', {
        connectionId,
        error: error.message,
      });
      const kept = options.sessions?.get(connectionId);
      options.sessions?.delete(connectionId);
      await kept?.close();
      return done('error', error.message);
    }
    const message = error instanceof LeaseLost ? error.message : 'the store failed';
    logger.log('error', 'the inbox pass of an email connection failed', { connectionId, error: messageOf(error) });
    return done('error', message);
  } finally {
    try {
      await endInboxPass(store.db, connectionId, holder, healthy, now());
    } catch (error) {
      logger.log('error', 'the end of an inbox pass could not be recorded', { connectionId, error: messageOf(error) });
    }
  }
}

/**
 * Steps 3–4 of the module comment for one mailbox (`mailbox`: its `mailboxAddress`), counting
 * into `summary`. `seen.status` is what EXAMINE (`selected`) or STATUS said at the start.
 */
async function readMailbox(
  deps: InboxDeps,
  session: MailboxSession,
  seen: { status: MailboxStatus; selected: boolean },
  connection: InboxConnectionRow,
  mailbox: string,
  holder: string,
  summary: ConnectionSummary,
  options: InboxPassOptions,
): Promise<void> {
  const { store, clock, config, logger } = deps;
  const position = await mailboxPosition(store.db, connection.id, mailbox);
  let { status } = seen;
  const idle =
    position !== undefined && position.uidValidity === status.uidValidity && status.uidNext - 1 <= position.lastUid;
  if (idle) {
    options.onStart?.(connection.id, 0);
    return;
  }
  // Something to read: the mailbox (selected again when STATUS told) as it is now.
  if (!seen.selected) status = await session.examine();
  const same = position !== undefined && position.uidValidity === status.uidValidity;
  if (position && !same)
    logger.log('info', 'the mailbox UIDVALIDITY changed: reading its last days again', {
      connectionId: connection.id,
      initialDays: config.inbox.initialDays,
    });
  let entries: MessageEntry[] = [];
  if (!same) entries = await session.listSince(clock.now() - config.inbox.initialDays * DAY_MS);
  else if (status.uidNext - 1 > position.lastUid) entries = await session.listAfter(position.lastUid);
  options.onStart?.(connection.id, entries.length);
  // Nothing new under a known UIDVALIDITY: nothing to write.
  if (same && entries.length === 0) return;

  const recorder = new MailboxRecorder(deps, connection.id, summary, options, {
    connectionId: connection.id,
    mailbox,
    uidValidity: status.uidValidity,
    lastUid: same ? position.lastUid : 0,
    holder,
  });
  const parts = batches(entries, config.inbox.maxBytes);
  if (parts.length === 0) parts.push([]);
  try {
    for (const [index, batch] of parts.entries()) {
      recorder.startBatch(batch);
      const skip = (uid: number, reason: string) => {
        recorder.add(uid, { result: 'skipped', threadId: null, messageId: null, classification: null, reason });
        logger.log('warn', 'an inbound message was skipped', { connectionId: connection.id, uid, reason });
      };
      for (const entry of batch)
        if (entry.size > config.inbox.maxBytes) skip(entry.uid, `over inbox.maxBytes (${entry.size} bytes)`);
      const wanted = batch.filter((e) => e.size <= config.inbox.maxBytes).map((e) => e.uid);
      for await (const fetched of session.fetch(wanted)) {
        if (fetched.source.length > config.inbox.maxBytes)
          skip(fetched.uid, `over inbox.maxBytes (${fetched.source.length} bytes)`);
        else
          try {
            const message = await parseMessage(fetched.source, config.inbox.parseTimeoutMs);
            const receivedAt = batch.find((entry) => entry.uid === fetched.uid)?.internalDate ?? null;
            recorder.add(fetched.uid, await decide({ ...deps, db: store.db }, message, connection.siteId, receivedAt));
          } catch (error) {
            if (error instanceof UnreadableMessage) skip(fetched.uid, error.message);
            else {
              recorder.add(fetched.uid, { result: 'error', threadId: null, messageId: null, classification: null });
              logger.log('error', 'an inbound message could not be handled; it is read again next pass', {
                connectionId: connection.id,
                uid: fetched.uid,
                error: messageOf(error),
              });
            }
          }
        recorder.check();
      }
      for (const entry of batch) if (!recorder.has(entry.uid)) skip(entry.uid, 'no longer in the mailbox');
      await recorder.record(index === parts.length - 1 ? status.uidNext - 1 : undefined);
      recorder.check();
      if (options.signal?.aborted) break;
    }
  } finally {
    await recorder.close();
  }
}

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
class MailboxRecorder {
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

/**
 * The sync as a worker of `serve`: a pass at start, then every `inbox.intervalMs`, keeping each
 * connection's session open between passes. `stop()` ends the pass in progress after the batch in
 * hand, then logs out of every mailbox.
 */
export function createInboxWorker(deps: InboxDeps): Worker {
  const sessions = new Map<string, MailboxSession>();
  const holder = newHolder();
  const step = async (stopping: AbortSignal) => {
    const summaries = await runInboxPass(deps, { signal: stopping, holder, sessions });
    for (const summary of summaries) if (summary.fetched > 0) deps.logger.log('info', 'inbox pass', { ...summary });
    // Messages that failed are read again next pass: they are not work done (`drain()` ends).
    return summaries.reduce((n, s) => n + s.fetched - s.errors, 0);
  };
  const worker = createWorker('inbox', deps.config.inbox.intervalMs, step, deps.logger);
  return {
    ...worker,
    async stop() {
      await worker.stop();
      await Promise.all([...sessions.values()].map((s) => s.close()));
      sessions.clear();
    },
  };
}

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
