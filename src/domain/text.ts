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

/**
 * The NUL character (U+0000), which no store may be given: PostgreSQL cannot hold it in text (a
 * statement given one fails), so a NUL that reached the database answered 500 there and 200 on
 * SQLite (issue #28 item 5). Input a client sends is refused (the API's validation step, the
 * settings pages' pipeline, the import: `nulPaths`); text from outside that nobody can resend
 * (mail, pages, a provider's answer) is kept with each NUL replaced (`withoutNul`), so the same
 * message or page reads the same on both stores.
 */
export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * The paths (`['items', 0, 'name']`) of every string in `value` that holds U+0000, object keys
 * included (the key's path). `value` is plain JSON-like data (strings, numbers, booleans, null,
 * arrays and objects), walked to any depth; an empty list when there is none.
 */
export function nulPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path] : [];
  if (typeof value !== 'object' || value === null) return [];
  const found: (string | number)[][] = [];
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, i) => [i, item])
    : Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof key === 'string' && key.includes('\u0000')) found.push([...path, key]);
    else found.push(...nulPaths(item, [...path, key]));
  }
  return found;
}

/** `text` with each NUL (U+0000) replaced by U+FFFD, the replacement character; `text` itself when it has none. */
export const withoutNul = (text: string): string =>
  text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
