/**
 * Characters that are not text to show: Unicode's control characters (general category Cc: C0,
 * DEL and C1, such as U+009B, a terminal's Control Sequence Introducer) and format characters
 * (Cf: bidirectional overrides and isolates such as U+202E, zero-width characters, the byte
 * order mark, tag characters). A terminal acts on the first kind; the second reorders or hides
 * what is around it. Unicode's property escapes decide, so the list follows the Unicode version
 * of the runtime.
 */
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;
const EVERY_CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/gu;

/** Whether `text` holds a control (Cc) or format (Cf) character. */
export function hasControlCharacters(text: string): boolean {
  return CONTROL_OR_FORMAT.test(text);
}

/**
 * `text` with each control (Cc) and format (Cf) character written as `\u{hex}` (a line feed as
 * `\u{a}`, U+202E as `\u{202e}`), everything else as it is: safe to write to a terminal, one line.
 */
export function escapeControlCharacters(text: string): string {
  return text.replace(EVERY_CONTROL_OR_FORMAT, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/**
 * The longest subject, characters: RFC 5322's line limit (998). An outgoing subject is cut to it
 * (the subject of a reply comes from an inbound message, which anyone writes), and so is the
 * stored subject of an inbound message.
 */
export const MAX_SUBJECT_CHARS = 998;

/** The first `max` characters of `text`, not splitting a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
