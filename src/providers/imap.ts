/**
 * Reading one mailbox over IMAP, read-only (decisions.md §17), with `imapflow`.
 *
 * The mailbox is opened with EXAMINE, and messages are read with `UID FETCH … BODY.PEEK[]`, so
 * no flag (`\Seen` included) changes; besides those, only NOOP, STATUS and `UID SEARCH` are sent
 * (and the login's own commands): never STORE, COPY, MOVE, EXPUNGE or CLOSE. What
 * the server sends is bounded: one literal (a message) by the caller's `maxBytes` plus a margin,
 * one response line by `MAX_LINE_BYTES`, and every wait by `timeoutMs`.
 *
 * Errors are `ImapError`s whose messages are safe to log: they say what failed (the login was
 * refused, the connection was refused or timed out, the mailbox does not exist, …), never the
 * command sent (a LOGIN carries the password) and never the password.
 */
import type { ImapFlow as ImapClient } from 'imapflow';

/** Where and how to read one mailbox. */
export interface MailboxSettings {
  host: string;
  port: number;
  /** TLS from the start; false: STARTTLS when the server offers it, else plain. */
  secure: boolean;
  user: string;
  password: string;
  /** The mailbox name, e.g. `INBOX`. */
  mailbox: string;
  /** Connecting, the greeting, and each wait for the server, ms. */
  timeoutMs: number;
  /** The largest message the caller reads, bytes: a larger literal ends the connection. */
  maxBytes: number;
}

/** The mailbox as EXAMINE reported it. */
export interface MailboxStatus {
  uidValidity: number;
  /** The UID the next message will get (the highest UID + 1, or more). */
  uidNext: number;
  /** Messages in the mailbox. */
  exists: number;
}

/** A message's UID, size (bytes) and the server's internal date (ms since the epoch; null when not given). */
export interface MessageEntry {
  uid: number;
  size: number;
  internalDate: number | null;
}

/** A message as fetched: its UID and its full source (RFC 5322 bytes). */
export interface FetchedMessage {
  uid: number;
  source: Buffer;
}

/** A login to one mailbox, kept open between passes when the caller wants. */
export interface MailboxSession {
  /** EXAMINE (read-only) the mailbox again; its status now. */
  examine(): Promise<MailboxStatus>;
  /**
   * The mailbox's status by NOOP and STATUS (UIDVALIDITY, UIDNEXT, MESSAGES), without selecting it
   * again: Dovecot answers from its index (0.4 ms against 57 ms for EXAMINE on a mailbox of
   * 40,000 messages, measured), so an idle pass of a kept session costs nearly nothing.
   */
  status(): Promise<MailboxStatus>;
  /** The messages with a UID above `afterUid`, ascending (after `examine`). */
  listAfter(afterUid: number): Promise<MessageEntry[]>;
  /** The messages whose internal date is on or after the day of `since` (ms since the epoch), ascending by UID. */
  listSince(since: number): Promise<MessageEntry[]>;
  /** The sources of `uids` (UID FETCH … BODY.PEEK[]), as the server sends them; a message that vanished meanwhile is left out. */
  fetch(uids: number[]): AsyncIterable<FetchedMessage>;
  /** False once the connection is closed or broken: open a new session. */
  readonly usable: boolean;
  /** LOGOUT, then close the socket; never throws. */
  close(): Promise<void>;
}

/** A failure to reach, log in to or read a mailbox; the message is safe to log. */
export class ImapError extends Error {
  constructor(
    message: string,
    /** `login`: the server refused the credentials; `connect`: it could not be reached or failed the session; `mailbox`: no such mailbox. */
    readonly kind: 'login' | 'connect' | 'mailbox',
  ) {
    super(message);
    this.name = 'ImapError';
  }
}

/** Longest response line read (a SEARCH answer of 100,000 UIDs is about 700 KB), bytes. */
const MAX_LINE_BYTES = 4 * 1024 * 1024;
/** UIDs per `UID FETCH` of sizes, so that one response stays small. */
const LIST_CHUNK = 5000;

interface ImapFailure {
  code?: string;
  authenticationFailed?: boolean;
  mailboxMissing?: boolean;
  responseText?: string;
  serverResponseCode?: string;
}

/** An `ImapError` for what imapflow threw: its kind and a message without the command or the password. */
function describe(error: unknown, settings: MailboxSettings): ImapError {
  const e = (error ?? {}) as ImapFailure;
  if (e.authenticationFailed || e.serverResponseCode === 'AUTHENTICATIONFAILED')
    return new ImapError(`the IMAP server refused the login of ${settings.user}`, 'login');
  if (e.mailboxMissing)
    return new ImapError(`the mailbox ${JSON.stringify(settings.mailbox)} does not exist`, 'mailbox');
  const where = `${settings.host}:${settings.port}`;
  const code = typeof e.code === 'string' ? e.code : '';
  const detail =
    code === 'ECONNREFUSED'
      ? `the connection to ${where} was refused`
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? `the host ${settings.host} was not found`
        : /TIMEOUT$/i.test(code)
          ? `${where} did not answer within ${settings.timeoutMs} ms`
          : `IMAP ${where}: ${code || 'failure'}${e.responseText ? `: ${e.responseText}` : ''}`;
  // A server could echo anything back: the password never leaves this function.
  const safe = settings.password ? detail.split(settings.password).join('***') : detail;
  return new ImapError(safe.replace(/\s+/g, ' ').slice(0, 300), 'connect');
}

const ms = (date: Date | string | undefined): number | null => {
  if (date === undefined) return null;
  const value = typeof date === 'string' ? Date.parse(date) : date.getTime();
  return Number.isNaN(value) ? null : value;
};

/**
 * Connects and logs in to `settings.host` as `settings.user`.
 * @throws ImapError `login` when the credentials are refused, `connect` when the server cannot
 * be reached, times out or breaks the session.
 */
export async function openMailboxSession(settings: MailboxSettings): Promise<MailboxSession> {
  // Loaded at the first connection, not at start: imapflow costs every process's start about
  // 50-70 ms (required alone, three runs), and only a server with inbox.enabled uses it.
  const { ImapFlow } = await import('imapflow');
  const client: ImapClient = new ImapFlow({
    host: settings.host,
    port: settings.port,
    secure: settings.secure,
    auth: { user: settings.user, pass: settings.password },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
    maxLiteralSize: settings.maxBytes + 64 * 1024,
    maxResponseSize: settings.maxBytes + MAX_LINE_BYTES + 64 * 1024,
    maxLineLength: MAX_LINE_BYTES,
  });
  // A broken socket is reported as an 'error' event too; the command that was waiting rejects.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    client.close();
    throw describe(error, settings);
  }
  const run = async <T>(command: () => Promise<T>): Promise<T> => {
    try {
      return await command();
    } catch (error) {
      throw describe(error, settings);
    }
  };
  const entries = async (range: string | number[]): Promise<MessageEntry[]> => {
    const found: MessageEntry[] = [];
    for await (const m of client.fetch(range, { uid: true, size: true, internalDate: true }, { uid: true }))
      found.push({ uid: m.uid, size: m.size ?? 0, internalDate: ms(m.internalDate) });
    return found.sort((a, b) => a.uid - b.uid);
  };
  return {
    get usable() {
      return client.usable;
    },
    examine: () =>
      run(async () => {
        const box = await client.mailboxOpen(settings.mailbox, { readOnly: true });
        return { uidValidity: Number(box.uidValidity), uidNext: box.uidNext, exists: box.exists };
      }),
    status: () =>
      run(async () => {
        // NOOP first: the server takes in what arrived since (STATUS alone may answer from the
        // selected mailbox's view as it was).
        await client.noop();
        const box = await client.status(settings.mailbox, { uidValidity: true, uidNext: true, messages: true });
        if (!box) throw Object.assign(new Error('STATUS refused'), { mailboxMissing: true });
        return { uidValidity: Number(box.uidValidity), uidNext: box.uidNext ?? 0, exists: box.messages ?? 0 };
      }),
    listAfter: (afterUid) =>
      run(async () => {
        // `n:*` also answers the highest message when every UID is below n (RFC 3501 §6.4.8).
        const listed = await entries(`${afterUid + 1}:*`);
        return listed.filter((m) => m.uid > afterUid);
      }),
    listSince: (since) =>
      run(async () => {
        const uids = await client.search({ since: new Date(since) }, { uid: true });
        if (!uids || uids.length === 0) return [];
        const sorted = [...uids].sort((a, b) => a - b);
        const listed: MessageEntry[] = [];
        for (let i = 0; i < sorted.length; i += LIST_CHUNK)
          listed.push(...(await entries(sorted.slice(i, i + LIST_CHUNK))));
        return listed;
      }),
    async *fetch(uids) {
      if (uids.length === 0) return;
      try {
        for await (const m of client.fetch(uids, { uid: true, source: true }, { uid: true }))
          if (m.source) yield { uid: m.uid, source: m.source };
      } catch (error) {
        throw describe(error, settings);
      }
    },
    async close() {
      try {
        if (client.usable) await client.logout();
      } catch {
        // closed below either way
      }
      client.close();
    },
  };
}
