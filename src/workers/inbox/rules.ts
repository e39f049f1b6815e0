/**
 * The classification of an inbound message and what it changes (decisions.md §17, the table):
 *
 * | classification   | when                                                                        | thread status | outcome  | contact      |
 * |------------------|-----------------------------------------------------------------------------|---------------|----------|--------------|
 * | `bounce`         | a delivery status notification with a recipient whose action is `failed` (or whose status is 5.x.x) | unchanged | unchanged | `bounced` |
 * | `out_of_office`  | automatic headers, and the subject or first lines say out of office, away, vacation or holiday | unchanged | unchanged | |
 * | `auto_reply`     | automatic headers, otherwise                                                 | unchanged     | unchanged |             |
 * | `not_interested` | not interested, no thanks, unsubscribe, remove me, stop emailing, …          | `replied`     | `negative` | `suppressed` for the last three |
 * | `interested`     | interested, sounds good, happy to, yes please, send it over, let's           | `replied`     | `positive` |             |
 * | `question`       | a question mark in the reply's own text, without the above                   | `replied`     | `neutral` |              |
 * | `unclassified`   | anything else                                                                | `replied`     | unchanged |              |
 *
 * A notification whose recipients were only `delayed` (4.x.x), or that reports a success, is
 * not stored (`notStored`). "Automatic" is `Auto-Submitted` other than `no`, `X-Autoreply`,
 * `X-Autorespond` or `Precedence: auto_reply`.
 *
 * Human replies are read in their own words: the text above the quoted original (lines that
 * start with `>`, and everything from an "On … wrote:", "-----Original Message-----" or an
 * Outlook-style "From:" header block on, are left out), at most `OWN_TEXT_CHARS` of it. Phrases
 * are matched as whole words, case-insensitively, on text cut into words by a single linear
 * scan: no regular expression runs over the message.
 */
import type {
  HumanReplyClassification,
  ThreadClassification,
  ThreadOutcome,
  ThreadStatus,
} from '../../domain/enums.js';
import type { DeliveryReport, InboundMessage } from './message.js';

/** Characters of a reply's own text that the phrases are looked for in. */
export const OWN_TEXT_CHARS = 4000;
/** Lines of the reply (after the subject) that may say it is an out-of-office. */
const FIRST_LINES = 5;

const OUT_OF_OFFICE = ['out of office', 'out of the office', 'away', 'vacation', 'holiday', 'holidays'];
/** Phrases that ask to hear no more: `not_interested`, and the contact is `suppressed`. */
const STOP = ['unsubscribe', 'remove me', 'stop emailing', 'stop emailing me'];
const NOT_INTERESTED = [
  'not interested',
  'not really interested',
  'not be interested',
  'no longer interested',
  'no thanks',
  'no thank you',
  ...STOP,
];
const INTERESTED = ['interested', 'sounds good', 'happy to', 'yes please', 'send it over', "let's"];

/** The suppression reason a contact gets when its reply asks to hear no more. */
export const SUPPRESSION_REASON = 'asked by reply to receive no more messages';

/**
 * `text` as lower-case words joined by single spaces, with a space at each end, so that
 * `words.includes(' happy to ')` finds the phrase as whole words. Letters, digits and the
 * apostrophe (’ read as ') make words; anything else separates them.
 */
export function wordsOf(text: string): string {
  let out = ' ';
  for (const char of text.toLowerCase()) {
    const c = char === '\u2019' ? "'" : char;
    const wordChar = c === "'" || (c >= '0' && c <= '9') || c.toLowerCase() !== c.toUpperCase();
    if (wordChar) out += c;
    else if (!out.endsWith(' ')) out += ' ';
  }
  return out.endsWith(' ') ? out : `${out} `;
}

const saysAny = (words: string, phrases: readonly string[]) => phrases.some((p) => words.includes(` ${p} `));

/** The first line of a quoted original in a reply: what comes from there on is not the reply's own text. */
function startsQuote(line: string): boolean {
  const trimmed = line.trim();
  const lower = trimmed.toLowerCase();
  return (
    (lower.startsWith('on ') && lower.endsWith('wrote:')) ||
    (lower.startsWith('le ') && lower.endsWith('a écrit :')) ||
    (lower.startsWith('-----') && lower.includes('original message')) ||
    lower.startsWith('________________') ||
    (lower.startsWith('from:') && lower.includes('@'))
  );
}

/** The reply's own text: its lines before the quoted original, quoted (`>`) lines left out, at most `OWN_TEXT_CHARS`. */
export function ownText(body: string): string {
  const kept: string[] = [];
  let length = 0;
  for (const line of body.slice(0, OWN_TEXT_CHARS * 4).split('\n')) {
    if (startsQuote(line)) break;
    if (line.trimStart().startsWith('>')) continue;
    kept.push(line);
    length += line.length + 1;
    if (length >= OWN_TEXT_CHARS) break;
  }
  return kept.join('\n').slice(0, OWN_TEXT_CHARS).trim();
}

/** Whether the message's headers say it was sent automatically (decisions.md §17). */
export function isAutomatic(headers: ReadonlyMap<string, string>): boolean {
  const autoSubmitted = headers.get('auto-submitted');
  if (autoSubmitted !== undefined && autoSubmitted.trim().toLowerCase().split(';')[0]!.trim() !== 'no') return true;
  if (headers.has('x-autoreply') || headers.has('x-autorespond')) return true;
  return headers.get('precedence')?.trim().toLowerCase() === 'auto_reply';
}

/** `failed` for a notification that some recipient failed, `delayed` when only delays are reported, else `other`. */
export function deliveryOutcome(report: DeliveryReport): 'failed' | 'delayed' | 'other' {
  const failed = report.recipients.some((r) => r.action === 'failed' || (r.action === '' && r.status.startsWith('5.')));
  if (failed) return 'failed';
  const delayed = report.recipients.some(
    (r) => r.action === 'delayed' || (r.action === '' && r.status.startsWith('4.')),
  );
  return delayed ? 'delayed' : 'other';
}

/** The addresses the notification says failed (lower case). */
export const failedRecipients = (report: DeliveryReport): string[] =>
  report.recipients
    .filter((r) => r.action === 'failed' || (r.action === '' && r.status.startsWith('5.')))
    .flatMap((r) => (r.address ? [r.address] : []));

/** A human reply's classification by the phrases of the table, from its own text. */
export function classifyByPhrases(text: string): HumanReplyClassification {
  const words = wordsOf(text);
  if (saysAny(words, NOT_INTERESTED)) return 'not_interested';
  if (saysAny(words, INTERESTED)) return 'interested';
  return text.includes('?') ? 'question' : 'unclassified';
}

/** Whether a reply's own text asks to hear no more (unsubscribe, remove me, stop emailing). */
export const asksToStop = (text: string): boolean => saysAny(wordsOf(text), STOP);

/**
 * How a message is classified before any model is asked: `bounce`, `notStored` (a delay or a
 * success notification), `out_of_office` or `auto_reply` from the headers, or `human` (the
 * phrases or the model decide, see `classifyByPhrases`).
 */
export function classifyByHeaders(
  message: InboundMessage,
): { kind: 'bounce' | 'out_of_office' | 'auto_reply' | 'human' } | { kind: 'notStored'; reason: string } {
  if (message.report) {
    const outcome = deliveryOutcome(message.report);
    if (outcome === 'failed') return { kind: 'bounce' };
    return {
      kind: 'notStored',
      reason: outcome === 'delayed' ? 'a delivery delay notification' : 'a delivery status notification of no failure',
    };
  }
  if (!isAutomatic(message.headers)) return { kind: 'human' };
  const firstLines = ownText(message.body)
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, FIRST_LINES);
  const words = wordsOf([message.subject ?? '', ...firstLines].join('\n'));
  return { kind: saysAny(words, OUT_OF_OFFICE) ? 'out_of_office' : 'auto_reply' };
}

/** What a classification changes on the thread (undefined: unchanged), per the table. */
export function threadChanges(classification: ThreadClassification): {
  status?: ThreadStatus;
  outcome?: ThreadOutcome;
} {
  switch (classification) {
    case 'bounce':
    case 'out_of_office':
    case 'auto_reply':
      return {};
    case 'not_interested':
      return { status: 'replied', outcome: 'negative' };
    case 'interested':
      return { status: 'replied', outcome: 'positive' };
    case 'question':
      return { status: 'replied', outcome: 'neutral' };
    case 'unclassified':
      return { status: 'replied' };
  }
}
