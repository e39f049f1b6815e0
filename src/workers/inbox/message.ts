/**
 * An inbound message as the inbox rules read it (decisions.md §17), from its RFC 5322 source
 * (parsed by `mailparser`: MIME, encoded words, charsets, quoted-printable and base64; its HTML
 * turned into text by `./html.ts`) or from the fields of the fixture's
 * `POST /__admin/inbound`.
 *
 * Only what the rules need is kept: the ids it refers to, the addresses, the subject, the text,
 * the `Date`, whether its headers say it was sent automatically, and, for a delivery status
 * notification (`multipart/report; report-type=delivery-status`, RFC 3464), the recipients'
 * actions and statuses and the original message's Message-ID. Anyone can send a message, and it
 * is read before anything knows whether it answers one of ours, so reading one is bounded in
 * size (`MAX_HEAD_BYTES`, `MAX_PARTS`, the HTML's `MAX_HTML_CHARS`), in what is kept
 * (`MAX_BODY_CHARS`, `MAX_SUBJECT_CHARS`, `MAX_PART_CHARS`, `MAX_REFERENCES`) and in time
 * (`inbox.parseTimeoutMs`), never holds the event loop for long (see `parseMessage`), and runs
 * no regular expression that could backtrack (docs/security.md "Reading other people's mail").
 */
import { createHash } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import type { AddressObject, HeaderValue, MailParser, StructuredHeader } from 'mailparser';
import { cut, MAX_SUBJECT_CHARS, withoutNul } from '../../domain/text.js';
import { htmlText } from './html.js';

/** One recipient of a delivery status notification (RFC 3464 §2.3). */
export interface DeliveryRecipient {
  /** `Final-Recipient` (else `Original-Recipient`) address, lower case; null when absent. */
  address: string | null;
  /** `failed`, `delayed`, `delivered`, `relayed`, `expanded` (lower case), or '' when absent. */
  action: string;
  /** The status code, e.g. `5.1.1`; '' when absent. */
  status: string;
}

/** What a delivery status notification says. */
export interface DeliveryReport {
  recipients: DeliveryRecipient[];
  /** The Message-ID of the message it is about (from its `message/rfc822` or `text/rfc822-headers` part). */
  originalMessageId: string | null;
}

export interface InboundMessage {
  /** `<…>` as received (trimmed); null when the message has none. */
  messageId: string | null;
  /** The ids of `In-Reply-To`, in order, each `<…>`. */
  inReplyTo: string[];
  /** The ids of `References`, in order (oldest first), at most the last `MAX_REFERENCES`. */
  references: string[];
  /** The `From` address, as written (its case kept). */
  from: string;
  to: string[];
  cc: string[];
  /** Encoded words decoded; null when absent. */
  subject: string | null;
  /** The text part, else the HTML part as plain text; '' when neither. */
  body: string;
  /** The `Date` header, ms since the epoch; null when absent or not a date. */
  date: number | null;
  /** The raw `Date` header value ('' when absent), for the identity of a message without Message-ID. */
  dateHeader: string;
  /** Header names (lower case) → their first value, as text. */
  headers: Map<string, string>;
  /** Set for a delivery status notification. */
  report: DeliveryReport | null;
}

/** Why a message was not read: it could not be parsed, or it has no sender address. */
export class UnreadableMessage extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'UnreadableMessage';
  }
}

/** Characters of a report part (the status fields, the original's headers) read. */
const MAX_PART_CHARS = 64 * 1024;
/** References ids kept (the last ones: the newest messages of the conversation). */
export const MAX_REFERENCES = 100;
/** The largest header block of one MIME part, bytes. */
const MAX_HEAD_BYTES = 256 * 1024;
/** Characters of a message's text that are kept (its stored `body`). */
export const MAX_BODY_CHARS = 64 * 1024;
/**
 * The most MIME parts a message may have (mailparser's `maxChildNodes`); one with more is
 * unreadable. mailparser's splitter compares each line that starts with `--` with the boundary of
 * every multipart open around it, so its time grows with the nesting times the size: 8 MB of such
 * lines inside 998 nested multiparts took 20 s in all and held the event loop 193 ms at a time,
 * inside 127 of them 1.9 s and 18 ms (measured on the 2-core development machine).
 */
export const MAX_PARTS = 128;

/** The `<…>` ids in `text`, in order (an id without brackets, alone in the value, is bracketed). */
export function messageIds(text: string): string[] {
  const ids: string[] = [];
  let at = 0;
  for (;;) {
    const open = text.indexOf('<', at);
    if (open < 0) break;
    const close = text.indexOf('>', open + 1);
    if (close < 0) break;
    const id = text.slice(open + 1, close).trim();
    if (id && !id.includes('<')) ids.push(`<${id}>`);
    at = close + 1;
  }
  if (ids.length === 0) {
    const bare = text.trim();
    if (bare && !/[\s<>]/.test(bare)) ids.push(`<${bare}>`);
  }
  return ids;
}

/** A header's value as text (mailparser parses some into objects). */
function headerText(value: HeaderValue | undefined): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.length ? headerText(value[0] as HeaderValue) : '';
  if (value instanceof Date) return value.toISOString();
  if ('value' in value && typeof value.value === 'string') return value.value;
  if ('text' in value && typeof value.text === 'string') return value.text;
  return '';
}

const addresses = (field: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(field) ? field : field ? [field] : [])
    .flatMap((group) => group.value.flatMap((a) => [a, ...(a.group ?? [])]))
    .map((a) => a.address ?? '')
    .filter((a) => a.includes('@'));

/**
 * Header fields of an RFC 822 header block or an RFC 3464 status part, folded lines joined, in
 * groups separated by blank lines (the per-message group, then one per recipient); names lower
 * case. Reads at most `MAX_PART_CHARS` characters.
 */
export function headerGroups(text: string): Map<string, string>[] {
  const groups: Map<string, string>[] = [];
  let group = new Map<string, string>();
  let last: string | null = null;
  for (const rawLine of text.slice(0, MAX_PART_CHARS).split('\n')) {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === '') {
      if (group.size) groups.push(group);
      group = new Map();
      last = null;
      continue;
    }
    if ((line[0] === ' ' || line[0] === '\t') && last !== null) {
      group.set(last, `${group.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last = line.slice(0, colon).trim().toLowerCase();
    if (!group.has(last)) group.set(last, line.slice(colon + 1).trim());
  }
  if (group.size) groups.push(group);
  return groups;
}

/** `rfc822; ana@example.com` → `ana@example.com` (lower case); null when there is no address. */
const typedAddress = (value: string | undefined): string | null => {
  if (!value) return null;
  const address = value.slice(value.indexOf(';') + 1).trim();
  return address.includes('@') ? address.toLowerCase() : null;
};

/** The notification's recipients and original Message-ID, from its parts (see `DeliveryReport`). */
function deliveryReport(attachments: { contentType: string; content: Buffer }[]): DeliveryReport {
  const recipients: DeliveryRecipient[] = [];
  let originalMessageId: string | null = null;
  for (const part of attachments) {
    const type = part.contentType.toLowerCase();
    const text = () => part.content.subarray(0, MAX_PART_CHARS).toString('utf8');
    if (type === 'message/delivery-status' || type === 'message/global-delivery-status') {
      // The first group is about the message; each later one about a recipient.
      for (const fields of headerGroups(text()).slice(1))
        recipients.push({
          address: typedAddress(fields.get('final-recipient') ?? fields.get('original-recipient')),
          action: (fields.get('action') ?? '').toLowerCase(),
          status: (fields.get('status') ?? '').split(/\s/)[0] ?? '',
        });
    } else if (
      originalMessageId === null &&
      (type === 'message/rfc822' || type === 'text/rfc822-headers' || type === 'message/global-headers')
    ) {
      const id = headerGroups(text())[0]?.get('message-id');
      originalMessageId = id ? (messageIds(id)[0] ?? null) : null;
    }
  }
  return { recipients, originalMessageId };
}

/** A part of a message that mailparser hands over as an attachment. */
interface MessageAttachment {
  type: 'attachment';
  contentType: string;
  content: Readable;
  release: (() => void) | null;
}

/** What mailparser's `MailParser` stream gives: its attachments, then the text of the message. */
type MessageItem = MessageAttachment | { type: 'text'; text?: string; html?: string };

/** The parts a delivery status notification is read from (`deliveryReport`). */
const REPORT_PARTS = new Set([
  'message/delivery-status',
  'message/global-delivery-status',
  'message/rfc822',
  'text/rfc822-headers',
  'message/global-headers',
]);

interface ReadParts {
  text: string;
  html: string;
  attachments: { contentType: string; content: Buffer }[];
}

/** Bytes of a message's source handed to the parser at a time (see `readSource`). */
const SOURCE_SLICE_BYTES = 16 * 1024;

/**
 * Takes what `parser` gives into `parts`, as mailparser's simpleParser reads it (an attachment's
 * content to its end, then the next item): the text, the HTML, and the first `MAX_PART_CHARS`
 * bytes of each part a report is read from (other attachments are read and dropped).
 */
function collect(parser: MailParser, parts: ReadParts): void {
  let reading = false;
  const next = () => {
    reading = true;
    for (let item = parser.read() as MessageItem | null; item !== null; item = parser.read() as MessageItem | null) {
      if (item.type === 'text') {
        parts.text = item.text ?? '';
        parts.html = item.html ?? '';
        continue;
      }
      const attachment = item;
      const kept: Buffer[] | null = REPORT_PARTS.has(attachment.contentType.toLowerCase()) ? [] : null;
      let bytes = 0;
      attachment.content.on('error', () => {});
      attachment.content.on('data', (chunk: Buffer) => {
        if (kept && bytes < MAX_PART_CHARS) kept.push(chunk.subarray(0, MAX_PART_CHARS - bytes));
        bytes += chunk.length;
      });
      attachment.content.on('end', () => {
        if (kept) parts.attachments.push({ contentType: attachment.contentType, content: Buffer.concat(kept) });
        attachment.release?.();
        next();
      });
      return;
    }
    reading = false;
  };
  parser.on('readable', () => {
    if (!reading) next();
  });
}

/**
 * Reads `source` with mailparser's `MailParser` stream: its splitter goes through what it is given
 * 16 KiB at a time with a turn of the event loop between, and each part is handled in a turn of
 * its own; it turns no HTML into text (`skipHtmlToText`) and makes no HTML of text. The source is
 * handed over `SOURCE_SLICE_BYTES` at a time, as fast as the parser takes it ('drain'), so that
 * once `signal` is aborted (the parser destroyed) nothing more reaches it: an abandoned message
 * costs at most the slices in flight, not the rest of its source.
 * @returns the parser (its `headers` and `headerLines` read) and what `collect` kept.
 * @throws what mailparser throws (a message it refuses); `signal`'s reason once it is aborted.
 */
async function readSource(Parser: typeof MailParser, source: Buffer, signal: AbortSignal) {
  const parser = new Parser({
    keepDeliveryStatus: true,
    ignoreEmbedded: true,
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
    checksumAlgo: false,
    maxHeadSize: MAX_HEAD_BYTES,
    maxChildNodes: MAX_PARTS,
  });
  const parts: ReadParts = { text: '', html: '', attachments: [] };
  let settled = false;
  let resume: (() => void) | undefined;
  const done = new Promise<void>((resolve, reject) => {
    const settle = () => {
      settled = true;
      signal.removeEventListener('abort', stop);
      resume?.();
    };
    const stop = () => {
      settle();
      reject(signal.reason);
      parser.destroy();
      // What the parser took in waits in its input buffer (up to 16 chunks of 64 KiB) for its
      // splitter, which goes on after the parser is destroyed: dropping that buffer leaves the
      // splitter the chunk in hand. (An internal of mailparser 3: without it, up to 1 MiB more.)
      (parser as unknown as { chunkedPassthrough?: Writable }).chunkedPassthrough?.destroy();
    };
    signal.addEventListener('abort', stop, { once: true });
    // After the first error or the abort, what mailparser still emits has a listener and goes nowhere.
    parser.on('error', (error) => {
      settle();
      reject(error);
    });
    parser.on('end', () => {
      settle();
      resolve();
    });
  });
  // Awaited below; a rejection while the source is still being handed over is not unhandled.
  done.catch(() => {});
  collect(parser, parts);
  for (let at = 0; at < source.length && !settled; at += SOURCE_SLICE_BYTES)
    if (!parser.write(source.subarray(at, at + SOURCE_SLICE_BYTES)) && !settled)
      await new Promise<void>((wake) => {
        resume = wake;
        parser.once('drain', wake);
      });
  if (!settled) parser.end();
  await done;
  return { parser, parts };
}

/**
 * Parses an RFC 5322 message (at most `inbox.maxBytes`, which the caller checked) within
 * `timeoutMs` (`inbox.parseTimeoutMs`) and without holding the event loop: through `readSource`,
 * then, when it has no text, its HTML through `htmlText` (at most `MAX_HTML_CHARS` of it, in 16
 * KiB slices). The body is at most `MAX_BODY_CHARS`, the subject at most `MAX_SUBJECT_CHARS`.
 * @throws UnreadableMessage when mailparser refuses it, it has no `From` address, or it was not
 * read within `timeoutMs`.
 */
export async function parseMessage(source: Buffer | string, timeoutMs: number): Promise<InboundMessage> {
  // Loaded at the first message, not at start (about 30-50 ms of every process's start otherwise),
  // and before the deadline starts: loading it is no time the message took.
  const { MailParser: Parser } = await import('mailparser');
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    const bytes = typeof source === 'string' ? Buffer.from(source) : source;
    return await readMessage(Parser, bytes, deadline.signal);
  } catch (error) {
    if (deadline.signal.aborted)
      throw new UnreadableMessage(`the message was not read within inbox.parseTimeoutMs (${timeoutMs} ms)`);
    if (error instanceof UnreadableMessage) throw error;
    throw new UnreadableMessage(`the message could not be parsed: ${(error as Error).message}`.slice(0, 200));
  } finally {
    clearTimeout(timer);
  }
}

/** `parseMessage` until `signal` is aborted. */
async function readMessage(Parser: typeof MailParser, source: Buffer, signal: AbortSignal): Promise<InboundMessage> {
  const { parser, parts } = await readSource(Parser, source, signal);
  const mailHeaders = parser.headers || new Map<string, HeaderValue>();
  const from = addresses(mailHeaders.get('from') as AddressObject | undefined)[0];
  if (!from) throw new UnreadableMessage('the message has no From address');
  const headers = new Map<string, string>();
  for (const [name, value] of mailHeaders) headers.set(name, headerText(value));
  const dateLine = (parser.headerLines || []).find((h) => h.key === 'date')?.line ?? '';
  const dateHeader = dateLine.slice(dateLine.indexOf(':') + 1).trim();
  const date = dateHeader ? Date.parse(dateHeader) : Number.NaN;
  const contentType = mailHeaders.get('content-type') as StructuredHeader | undefined;
  const isReport =
    contentType?.value === 'multipart/report' &&
    (contentType.params?.['report-type'] ?? '').toLowerCase() === 'delivery-status';
  const referencesHeader = mailHeaders.get('references') as string | string[] | undefined;
  const references = Array.isArray(referencesHeader) ? referencesHeader.join(' ') : (referencesHeader ?? '');
  const subject = mailHeaders.get('subject') as string | undefined;
  let body = parts.text.trim();
  if (!body && parts.html) body = await htmlText(parts.html, MAX_BODY_CHARS, signal);
  return nulFree({
    messageId: messageIds(headerText(mailHeaders.get('message-id')))[0] ?? null,
    inReplyTo: messageIds(headerText(mailHeaders.get('in-reply-to'))),
    references: messageIds(references).slice(-MAX_REFERENCES),
    from,
    to: addresses(mailHeaders.get('to') as AddressObject | AddressObject[] | undefined),
    cc: addresses(mailHeaders.get('cc') as AddressObject | AddressObject[] | undefined),
    subject: subject === undefined ? null : cut(subject, MAX_SUBJECT_CHARS),
    body: cut(body, MAX_BODY_CHARS).trimEnd(),
    date: Number.isNaN(date) ? null : date,
    dateHeader,
    headers,
    report: isReport ? deliveryReport(parts.attachments) : null,
  });
}

/**
 * `message` with each NUL (U+0000) in its text replaced by U+FFFD (`withoutNul`): a message is
 * text from outside that no store may be given a NUL of (PostgreSQL refuses one, issue #28), and
 * that its sender cannot be asked to send again, so it is kept, not refused.
 */
function nulFree(message: InboundMessage): InboundMessage {
  const clean = (texts: string[]) => texts.map(withoutNul);
  const orNull = (text: string | null) => (text === null ? null : withoutNul(text));
  const headers = new Map<string, string>();
  for (const [name, value] of message.headers) headers.set(withoutNul(name), withoutNul(value));
  const { report } = message;
  return {
    ...message,
    messageId: orNull(message.messageId),
    inReplyTo: clean(message.inReplyTo),
    references: clean(message.references),
    from: withoutNul(message.from),
    to: clean(message.to),
    cc: clean(message.cc),
    subject: orNull(message.subject),
    body: withoutNul(message.body),
    dateHeader: withoutNul(message.dateHeader),
    headers,
    report: report && {
      recipients: report.recipients.map((r) => ({
        address: orNull(r.address),
        action: withoutNul(r.action),
        status: withoutNul(r.status),
      })),
      originalMessageId: orNull(report.originalMessageId),
    },
  };
}

/** The fields of `POST /__admin/inbound` (decisions.md §17 "For CI users"). */
export interface InboundFields {
  from: string;
  to?: string[];
  subject: string;
  body: string;
  inReplyTo?: string;
  references?: string[];
  /** Extra headers (`Auto-Submitted`, `Message-ID`, …), by name. */
  headers?: Record<string, string>;
  /** ISO 8601. */
  date?: string;
}

/** An inbound message from `fields`, read as a parsed source would be. */
export function messageOfFields(fields: InboundFields): InboundMessage {
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(fields.headers ?? {})) headers.set(name.toLowerCase(), value);
  const date = fields.date === undefined ? Number.NaN : Date.parse(fields.date);
  const messageId = headers.get('message-id');
  return {
    messageId: messageId ? (messageIds(messageId)[0] ?? null) : null,
    inReplyTo: messageIds(fields.inReplyTo ?? headers.get('in-reply-to') ?? ''),
    references: (fields.references ?? messageIds(headers.get('references') ?? ''))
      .flatMap((id) => messageIds(id))
      .slice(-MAX_REFERENCES),
    from: fields.from,
    to: fields.to ?? [],
    cc: [],
    subject: fields.subject,
    body: fields.body.trim(),
    date: Number.isNaN(date) ? null : date,
    dateHeader: fields.date ?? '',
    headers,
    report: null,
  };
}

/**
 * The identity of `message` within a thread (decisions.md §17 "Stored once"): its Message-ID,
 * or, without one, `hash:` and the hex SHA-256 of its From, Date, Subject and body.
 */
export function inboundIdentity(message: InboundMessage): string {
  if (message.messageId) return message.messageId;
  const hash = createHash('sha256');
  for (const part of [message.from.toLowerCase(), message.dateHeader, message.subject ?? '', message.body])
    hash.update(part).update('\u0000');
  return `hash:${hash.digest('hex')}`;
}
