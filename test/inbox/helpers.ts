/**
 * Shared pieces of the inbox tests (decisions.md §17): their dataset (an import document), raw
 * RFC 5322 messages as a mail client or a mail server would write them, and a test server with
 * `inbox.connections` pointing at a throwaway Dovecot.
 *
 * acct_in owns prj_in with site_in (connection conn_in, whose Dovecot login is its
 * accountEmail `me@trailgear.example`, the default; sender snd_in) and site_two (connection
 * conn_two, login `bob` given as `user`). site_in's threads:
 * - thr_ana: contact Ana (ana@blog.example), one outbound message `msg_out_ana` sent to her;
 * - thr_ana_old: an older thread with Ana (updated before thr_ana);
 * - thr_cat: contact Cat (cat@shop.example), no outbound message;
 * - thr_dan: contact Dan (dan@news.example), outbound `msg_out_dan`.
 * - thr_r1 … thr_r8: see `ROWS`.
 * site_two's thread thr_two has a contact with Ana's address too (updated last of all), so a
 * rule that looked past the connection's site would pick it.
 */
import type { ImportDocument } from '../../src/import/index.js';
import type { Logger } from '../../src/logger.js';
import { runInboxPass } from '../../src/workers/inbox/pass.js';
import type { ConnectionSummary, InboxPassOptions } from '../../src/workers/inbox/types.js';
import { parseMessage } from '../../src/workers/inbox/message.js';
import { loadConfig } from '../../src/config.js';
import { account, contact, project, prospect, site, thread } from '../helpers/fixture.js';
import type { TestDovecot } from '../helpers/dovecot.js';
import { startTestServer, type HarnessOptions, type TestServer } from '../helpers/harness.js';
import { sqlAll, sqlGet } from '../helpers/sql.js';

export const T0 = '2026-10-01T09:00:00.000Z';
const stamp = { createdAt: T0, updatedAt: T0 };

/** The domain the outbox's Message-IDs of site_in end in (its sender's). */
export const SENDER_DOMAIN = 'trailgear.example';
export const ANA = 'ana@blog.example';
export const CAT = 'cat@shop.example';
export const DAN = 'dan@news.example';
/** conn_in's mailbox login (its accountEmail) and conn_two's. */
export const ME = `me@${SENDER_DOMAIN}`;
export const BOB = 'bob';
/** The password of every Dovecot user of the tests but bob. */
export const PASSWORD = 'me-imap-secret';
export const BOB_PASSWORD = 'bob-imap-secret';
/** Spare mailboxes, one per test, so that no test reads another's messages: `box1` … `box24`. */
export const BOXES = Array.from({ length: 24 }, (_, i) => `box${i + 1}`);
/** Dovecot users and their passwords (the server reads them from `PASSWORD_ENV`'s variables). */
export const USERS: Record<string, string> = {
  [ME]: PASSWORD,
  [BOB]: BOB_PASSWORD,
  ...Object.fromEntries(BOXES.map((box) => [box, PASSWORD])),
};
export const PASSWORD_ENV = { me: 'OUTREACH_TEST_INBOX_ME', bob: 'OUTREACH_TEST_INBOX_BOB' };

const outbound = (id: string, to: string, sentAt: string) => ({
  id,
  direction: 'outbound' as const,
  status: 'sent' as const,
  fromEmail: `me@${SENDER_DOMAIN}`,
  toEmails: [to],
  subject: 'A guest post idea',
  body: 'Would you be interested in a guest post? Let us know.',
  sentAt,
  createdAt: sentAt,
});

/**
 * Threads `thr_r1` … `thr_r8` of site_in, each with its own contact (`r1@rows.example`, …) and
 * outbound message (`msg_out_r1`, …), awaiting a reply: one per classification row.
 */
export const ROWS = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8'] as const;

export function inboxFixture(): ImportDocument {
  return {
    accounts: [account('acct_in', { email: 'owner@trailgear.example', name: 'Trail Gear', ...stamp })],
    projects: [project('prj_in', 'acct_in', stamp)],
    sites: [
      site('site_in', 'prj_in', { domain: SENDER_DOMAIN, url: `https://${SENDER_DOMAIN}/`, ...stamp }),
      site('site_two', 'prj_in', { domain: 'second.example', url: 'https://second.example/', ...stamp }),
    ],
    prospects: [
      prospect('pr_blog', 'site_in', { domain: 'blog.example', url: 'https://blog.example/post', ...stamp }),
      prospect('pr_shop', 'site_in', { domain: 'shop.example', url: 'https://shop.example/post', ...stamp }),
      prospect('pr_news', 'site_in', { domain: 'news.example', url: 'https://news.example/post', ...stamp }),
      prospect('pr_two', 'site_two', { domain: 'blog.example', url: 'https://blog.example/other', ...stamp }),
      prospect('pr_rows', 'site_in', { domain: 'rows.example', url: 'https://rows.example/post', ...stamp }),
    ],
    contacts: [
      contact('con_ana', 'pr_blog', { email: ANA, fullName: 'Ana Author', ...stamp }),
      contact('con_cat', 'pr_shop', { email: CAT, fullName: 'Cat Shop', ...stamp }),
      contact('con_dan', 'pr_news', { email: DAN, fullName: 'Dan News', ...stamp }),
      contact('con_two', 'pr_two', { email: 'Ana@Blog.example', ...stamp }),
      ...ROWS.map((r) => contact(`con_${r}`, 'pr_rows', { email: `${r}@rows.example`, ...stamp })),
    ],
    threads: [
      thread('thr_ana', 'site_in', 'pr_blog', 'con_ana', {
        status: 'awaiting_reply',
        outboundCount: 1,
        createdAt: T0,
        updatedAt: '2026-10-02T09:00:00.000Z',
        messages: [outbound('msg_out_ana', ANA, '2026-10-02T09:00:00.000Z')],
      }),
      thread('thr_ana_old', 'site_in', 'pr_blog', 'con_ana', { createdAt: T0, updatedAt: '2026-10-01T10:00:00.000Z' }),
      thread('thr_cat', 'site_in', 'pr_shop', 'con_cat', { createdAt: T0, updatedAt: T0 }),
      thread('thr_dan', 'site_in', 'pr_news', 'con_dan', {
        status: 'awaiting_reply',
        outboundCount: 1,
        createdAt: T0,
        updatedAt: T0,
        messages: [outbound('msg_out_dan', DAN, T0)],
      }),
      thread('thr_two', 'site_two', 'pr_two', 'con_two', { createdAt: T0, updatedAt: '2026-10-05T09:00:00.000Z' }),
      ...ROWS.map((r) =>
        thread(`thr_${r}`, 'site_in', 'pr_rows', `con_${r}`, {
          status: 'awaiting_reply',
          outboundCount: 1,
          createdAt: T0,
          updatedAt: T0,
          messages: [outbound(`msg_out_${r}`, `${r}@rows.example`, T0)],
        }),
      ),
    ],
    emailConnections: [
      { id: 'conn_in', siteId: 'site_in', provider: 'smtp', status: 'disconnected', accountEmail: ME, ...stamp },
      {
        id: 'conn_two',
        siteId: 'site_two',
        provider: 'smtp',
        status: 'connected',
        accountEmail: 'me@second.example',
        ...stamp,
      },
    ],
    emailSenders: [
      {
        id: 'snd_in',
        siteId: 'site_in',
        connectionId: 'conn_in',
        status: 'active',
        displayName: 'Mia from Trail Gear',
        email: `me@${SENDER_DOMAIN}`,
        ...stamp,
      },
    ],
  };
}

/** Which mailboxes the connections read. */
export interface MailboxChoice {
  /** conn_in's login; default its accountEmail (ME). */
  user?: string;
  /** conn_in's mailbox; default INBOX. */
  mailbox?: string;
  /** Whether conn_two (bob's INBOX) is configured too; default true. */
  two?: boolean;
}

/** `inbox.connections` for `dovecot` (see `MailboxChoice`). */
export function inboxConnections(dovecot: TestDovecot, choice: MailboxChoice = {}) {
  const at = { host: dovecot.host, port: dovecot.port, secure: false };
  return {
    conn_in: {
      ...at,
      ...(choice.user ? { user: choice.user } : {}),
      passwordEnv: PASSWORD_ENV.me,
      mailbox: choice.mailbox ?? 'INBOX',
    },
    ...(choice.two === false ? {} : { conn_two: { ...at, user: BOB, passwordEnv: PASSWORD_ENV.bob } }),
  };
}

/** Sets the passwords' environment variables of this process (the server reads them there). */
export function setPasswords(passwords: { me?: string; bob?: string } = { me: PASSWORD, bob: BOB_PASSWORD }): void {
  process.env[PASSWORD_ENV.me] = passwords.me ?? '';
  process.env[PASSWORD_ENV.bob] = passwords.bob ?? '';
}

/** A test server over `inboxFixture()` reading `dovecot` (the inbox timer off: tests drive it). */
export function startInboxServer(
  dovecot: TestDovecot,
  choice: MailboxChoice = {},
  options: HarnessOptions = {},
): Promise<TestServer> {
  setPasswords();
  return startTestServer({
    fixture: inboxFixture() as Record<string, unknown>,
    ...options,
    config: {
      'limits.requestsPerMinute': 0,
      'outbox.pollIntervalMs': 3_600_000,
      'inbox.intervalMs': 3_600_000,
      'inbox.connections': inboxConnections(dovecot, choice),
      ...options.config,
    },
  });
}

export interface MailParts {
  from?: string;
  to?: string;
  subject?: string;
  body?: string;
  messageId?: string | null;
  inReplyTo?: string;
  references?: string;
  /** ISO 8601, or null for no Date header. */
  date?: string | null;
  headers?: Record<string, string>;
  /** A whole body part with its own Content-Type (e.g. HTML), instead of `body` as text/plain. */
  contentType?: string;
  transferEncoding?: string;
}

let counter = 0;

/** A message as a mail client writes it (CRLF lines; `Message-ID` made up unless given or null). */
export function mail(parts: MailParts = {}): string {
  const lines = [
    `From: ${parts.from ?? `Ana Author <${ANA}>`}`,
    `To: ${parts.to ?? `me@${SENDER_DOMAIN}`}`,
    `Subject: ${parts.subject ?? 'Re: A guest post idea'}`,
  ];
  if (parts.date !== null) lines.push(`Date: ${new Date(parts.date ?? '2026-11-01T12:00:00.000Z').toUTCString()}`);
  if (parts.messageId !== null)
    lines.push(`Message-ID: ${parts.messageId ?? `<reply-${++counter}-${process.pid}@blog.example>`}`);
  if (parts.inReplyTo) lines.push(`In-Reply-To: ${parts.inReplyTo}`);
  if (parts.references) lines.push(`References: ${parts.references}`);
  for (const [name, value] of Object.entries(parts.headers ?? {})) lines.push(`${name}: ${value}`);
  lines.push('MIME-Version: 1.0');
  lines.push(`Content-Type: ${parts.contentType ?? 'text/plain; charset=utf-8'}`);
  lines.push(`Content-Transfer-Encoding: ${parts.transferEncoding ?? '8bit'}`);
  return `${lines.join('\r\n')}\r\n\r\n${(parts.body ?? 'Thanks for writing.').replace(/\r?\n/g, '\r\n')}\r\n`;
}

/** The Message-ID the outbox gives thread message `id` sent from site_in's sender. */
export const outboxId = (id: string) => `<${id}@${SENDER_DOMAIN}>`;

/**
 * A delivery status notification (RFC 3464) about `original` (a Message-ID) to `recipient`, as
 * a mail server writes one: `multipart/report; report-type=delivery-status`, a human part, the
 * status part and the original's headers (`text/rfc822-headers`) or whole message (`message/rfc822`).
 */
export function dsn(options: {
  original: string;
  recipient: string;
  action: 'failed' | 'delayed' | 'delivered';
  status: string;
  embed?: 'headers' | 'message';
  messageId?: string;
  /** Its `From`; default the reporting server's MAILER-DAEMON. */
  from?: string;
}): string {
  const boundary = `report-${++counter}`;
  const originalHeaders = [
    `From: Mia <me@${SENDER_DOMAIN}>`,
    `To: ${options.recipient}`,
    'Subject: A guest post idea',
    `Message-ID: ${options.original}`,
  ].join('\r\n');
  const embedded =
    options.embed === 'message'
      ? `Content-Type: message/rfc822\r\n\r\n${originalHeaders}\r\n\r\nWould you be interested?\r\n`
      : `Content-Type: text/rfc822-headers\r\n\r\n${originalHeaders}\r\n`;
  return [
    `From: ${options.from ?? 'Mail Delivery System <MAILER-DAEMON@mx.blog.example>'}`,
    `To: me@${SENDER_DOMAIN}`,
    'Subject: Undelivered Mail Returned to Sender',
    `Date: ${new Date('2026-11-01T12:00:00.000Z').toUTCString()}`,
    `Message-ID: ${options.messageId ?? `<dsn-${counter}-${process.pid}@mx.blog.example>`}`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=us-ascii',
    '',
    `This is the mail system. Your message to ${options.recipient} could not be delivered.`,
    '',
    `--${boundary}`,
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.blog.example',
    '',
    `Final-Recipient: rfc822; ${options.recipient}`,
    `Original-Recipient: rfc822;${options.recipient}`,
    `Action: ${options.action}`,
    `Status: ${options.status}`,
    'Diagnostic-Code: smtp; 550 5.1.1 user unknown',
    '',
    `--${boundary}`,
    embedded,
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

/** A row of the store (either kind: test/helpers/sql.ts), for assertions; throws when there is none. */
export async function row<T = Record<string, any>>(t: TestServer, sql: string, ...params: unknown[]): Promise<T> {
  const found = await sqlGet<T>(t.store, sql, ...params);
  if (found === undefined) throw new Error(`no row: ${sql}`);
  return found;
}

/** Rows of the store (either kind: test/helpers/sql.ts), for assertions. */
export const rows = <T = Record<string, any>>(t: TestServer, sql: string, ...params: unknown[]): Promise<T[]> =>
  sqlAll<T>(t.store, sql, ...params);

/** One pass of the inbox sync over `t`'s store, as its worker runs it; resolves with the summaries. */
export const pass = (t: TestServer, options: InboxPassOptions = {}) => {
  const { config, logger, metrics, providers } = t.server.app.deps;
  return runInboxPass(
    { store: t.store, clock: t.clock, config, logger, metrics, classifier: providers.replyClassifier },
    options,
  );
};

/** The summary of `connectionId` in `summaries`, without its time. */
export const summaryOf = (summaries: ConnectionSummary[], connectionId = 'conn_in') => {
  const { ms: _ms, ...rest } = summaries.find((s) => s.connectionId === connectionId)!;
  return rest;
};

/** The stored inbound message whose Message-ID is `messageId`, if any. */
export const storedAs = (t: TestServer, messageId: string) =>
  rows(t, 'SELECT * FROM thread_messages WHERE inbound_message_id = ?', messageId);

/** A logger that keeps every line (level, message and fields as one JSON text). */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, log: (level, message, fields) => lines.push(JSON.stringify({ level, message, ...fields })) };
}

/** Reads `source` as the sync does, within the default `inbox.parseTimeoutMs`. */
export const read = (source: string | Buffer) => parseMessage(source, loadConfig(undefined, {}).inbox.parseTimeoutMs);

/**
 * The slowest `/healthz` answer allowed while hostile mail is read, ms: far above what the reading
 * holds the event loop for (9-52 ms measured on the 2-core development machine; up to 870 ms, once,
 * with a load average of 15, where the tests' process gets a seventh of a core), far below the 9.8
 * to 14.7 s mailparser's own HTML to text held it.
 */
export const HEALTHZ_BOUND_MS = 2000;

/** The header lines of a hostile message, from a sender no thread knows (parsing comes before matching). */
const strangerHead = (subject: string, contentType: string) => [
  'From: Someone <someone@unknown.example>',
  `To: me@${SENDER_DOMAIN}`,
  `Subject: ${subject}`,
  `Message-ID: <hostile-${++counter}-${process.pid}@unknown.example>`,
  'MIME-Version: 1.0',
  `Content-Type: ${contentType}`,
  '',
];

/**
 * A message as the security review sent it (issue 28): from a sender no thread knows, a text part
 * and `parts` HTML parts of about `partBytes` each, of markup that html-to-text (mailparser's own
 * HTML to text) lays out in time that grows faster than its size: words inside 100 nested
 * blockquotes. Through mailparser with its HTML to text, one such part of 1 MB took 1.3 s, of 2 MB
 * 2.8 s, and four of 2 MB 14.7 s, on the event loop.
 */
export function hostileHtmlMail(parts: number, partBytes: number): string {
  const html = `<html><body>${'<blockquote>'.repeat(100)}${'ab '.repeat(Math.ceil(partBytes / 3))}</body></html>`;
  const lines = [
    ...strangerHead('A newsletter', 'multipart/mixed; boundary="part"'),
    '--part',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Our newsletter.',
  ];
  for (let i = 0; i < parts; i++) lines.push('--part', 'Content-Type: text/html; charset=utf-8', '', html);
  lines.push('--part--', '');
  return lines.join('\r\n');
}

/**
 * A message of `depth` nested multiparts whose boundaries share a 60-character prefix, then
 * `bytes` of lines that nearly match every one of them: mailparser's splitter compares each line
 * that starts with `--` with the boundary of every open multipart, so it takes time in the depth
 * times the size (127 deep, 8 MB: about 2 s on the 2-core development machine, in slices).
 */
export function boundaryMaze(depth: number, bytes: number): string {
  const prefix = 'x'.repeat(60);
  const boundary = (i: number) => `${prefix}${String(i).padStart(8, '0')}`;
  const lines = strangerHead('A maze', `multipart/mixed; boundary="${boundary(0)}"`);
  for (let i = 0; i < depth; i++)
    lines.push(`--${boundary(i)}`, `Content-Type: multipart/mixed; boundary="${boundary(i + 1)}"`, '');
  lines.push(`--${boundary(depth)}`, 'Content-Type: text/plain', '');
  const near = `--${prefix}zzzzzzzz`;
  lines.push(...Array.from({ length: Math.floor(bytes / (near.length + 2)) }, () => near), '');
  return lines.join('\r\n');
}

/**
 * Runs `work` while asking `origin`'s `/healthz` 5 ms after each answer; resolves with what `work`
 * resolved with, the slowest answer (ms, counted from when the question was due, so that a hold
 * of the event loop that delays the asking itself counts too, as it would for another client)
 * and how many answers came.
 */
export async function whileAskingHealth<T>(
  origin: string,
  work: () => Promise<T>,
): Promise<{ result: T; worstMs: number; answers: number }> {
  let done = false;
  let worstMs = 0;
  let answers = 0;
  const asking = (async () => {
    while (!done) {
      const due = performance.now() + 5;
      await new Promise((resolve) => setTimeout(resolve, 5));
      const res = await fetch(`${origin}/healthz`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      worstMs = Math.max(worstMs, performance.now() - due);
      answers++;
    }
  })();
  let result: T;
  try {
    result = await work();
  } finally {
    done = true;
    // The answer in flight when `work` ended counts too.
    await asking;
  }
  return { result, worstMs, answers };
}
