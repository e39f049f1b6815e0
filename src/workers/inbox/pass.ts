/**
 * The inbox sync (decisions.md §17): one implementation of a pass, run by `serve` as a background
 * worker (when `inbox.enabled`, every `inbox.intervalMs`) and by `outreach-api inbox sync` in the
 * foreground.
 *
 * A pass takes each configured connection (`inbox.connections`, at most `CONNECTIONS_AT_ONCE` at
 * a time), and for each:
 * 1. takes the connection's lease, so that one instance syncs it at a time (decisions.md §16);
 *    a connection whose lease another holds is left to it (`busy`);
 * 2. logs in and EXAMINEs the mailbox (read-only: see `../../providers/imap.ts`); a session `serve`
 *    kept open from the last pass asks STATUS first, and selects the mailbox again only when
 *    something is new;
 * 3. lists the new messages: those above the last UID handled, when the mailbox's UIDVALIDITY is
 *    the one recorded; otherwise (a first read, or UIDVALIDITY changed) those of the last
 *    `inbox.initialDays`, whose copies already stored are then dropped as duplicates;
 * 4. fetches them in batches of at most `BATCH_MESSAGES` messages and `BATCH_BYTES` bytes: a
 *    message over `inbox.maxBytes` is skipped unread, one that cannot be parsed or is not read
 *    within `inbox.parseTimeoutMs` is skipped, each other one is decided (`./record.ts`);
 *    the decided messages are recorded in groups (`MailboxRecorder`, `./recorder.ts`), each group's writes in one
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
import { isoAt } from '../../domain/clock.js';
import {
  ImapError,
  openMailboxSession,
  type MailboxSession,
  type MailboxSettings,
  type MailboxStatus,
  type MessageEntry,
} from '../../providers/imap.js';
import { inboxConnections, type InboxConnectionRow } from '../../repos/email-accounts.js';
import { endInboxPass, LeaseLost, mailboxPosition, takeInboxLease } from '../../repos/inbox.js';
import { createWorker, type Worker } from '../worker.js';
import { parseMessage, UnreadableMessage } from './message.js';
import { decide } from './record.js';
import { MailboxRecorder } from './recorder.js';
import { type ConnectionSummary, type InboxDeps, type InboxPassOptions, leaseMs } from './types.js';

/** Connections synced at the same time. */
export const CONNECTIONS_AT_ONCE = 4;
/** Messages read and committed together. */
export const BATCH_MESSAGES = 50;
/** Message bytes read together (a batch holds at least one message, whatever its size). */
export const BATCH_BYTES = 8 * 1024 * 1024;
const DAY_MS = 86_400_000;

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
