/**
 * An inbound message as the inbox rules read it (decisions.md §17), from its RFC 5322 source
 * (parsed by `mailparser`: MIME, encoded words, charsets, quoted-printable and base64, HTML to
 * text) or from the fields of the fixture's `POST /__admin/inbound`.
 *
 * Only what the rules need is kept: the ids it refers to, the addresses, the subject, the text,
 * the `Date`, whether its headers say it was sent automatically, and, for a delivery status
 * notification (`multipart/report; report-type=delivery-status`, RFC 3464), the recipients'
 * actions and statuses and the original message's Message-ID. Every piece of the source read
 * here by our own code is bounded (`MAX_PART_CHARS`, `MAX_REFERENCES`), and read without regular
 * expressions that could backtrack.
 */
import { createHash } from 'node:crypto';
import type { AddressObject, HeaderValue, ParsedMail, StructuredHeader } from 'mailparser';

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
/** HTML longer than this (characters) is not turned into text: its message gets an empty body. */
const MAX_HTML_CHARS = 2 * 1024 * 1024;
/** The largest header block of one MIME part, bytes. */
const MAX_HEAD_BYTES = 256 * 1024;

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

/**
 * Parses an RFC 5322 message (at most `inbox.maxBytes`, which the caller checked).
 * @throws UnreadableMessage when mailparser refuses it or it has no `From` address.
 */
export async function parseMessage(source: Buffer | string): Promise<InboundMessage> {
  // Loaded at the first message, not at start (about 30-50 ms of every process's start otherwise).
  const { simpleParser } = await import('mailparser');
  let mail: ParsedMail;
  try {
    mail = await simpleParser(source, {
      keepDeliveryStatus: true,
      ignoreEmbedded: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
      checksumAlgo: false,
      maxHtmlLengthToParse: MAX_HTML_CHARS,
      maxHeadSize: MAX_HEAD_BYTES,
    });
  } catch (error) {
    throw new UnreadableMessage(`the message could not be parsed: ${(error as Error).message}`.slice(0, 200));
  }
  const from = addresses(mail.from)[0];
  if (!from) throw new UnreadableMessage('the message has no From address');
  const headers = new Map<string, string>();
  for (const [name, value] of mail.headers) headers.set(name, headerText(value));
  const dateLine = mail.headerLines.find((h) => h.key === 'date')?.line ?? '';
  const dateHeader = dateLine.slice(dateLine.indexOf(':') + 1).trim();
  const date = dateHeader ? Date.parse(dateHeader) : Number.NaN;
  const contentType = mail.headers.get('content-type') as StructuredHeader | undefined;
  const isReport =
    contentType?.value === 'multipart/report' &&
    (contentType.params?.['report-type'] ?? '').toLowerCase() === 'delivery-status';
  const references = Array.isArray(mail.references) ? mail.references.join(' ') : (mail.references ?? '');
  return {
    messageId: mail.messageId ? (messageIds(mail.messageId)[0] ?? null) : null,
    inReplyTo: messageIds(mail.inReplyTo ?? ''),
    references: messageIds(references).slice(-MAX_REFERENCES),
    from,
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    subject: mail.subject ?? null,
    body: (mail.text ?? '').trim(),
    date: Number.isNaN(date) ? null : date,
    dateHeader,
    headers,
    report: isReport ? deliveryReport(mail.attachments) : null,
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
