/**
 * API tokens (contract §5): `oapi_` + 43 base62 characters of 32 random bytes + a 6-character
 * base62 CRC-32 checksum of the random part, so a secret scanner can recognise a leaked token
 * and we can refuse a mistyped one without a database lookup. Only the hex SHA-256 of the whole
 * token is stored.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hasControlCharacters } from './text.js';

export const TOKEN_PREFIX = 'oapi_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 43;
const CHECKSUM_CHARS = 6;

function toBase62(value: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  // Stryker disable next-line EqualityOperator: n <= 256 writes past the end of a 256-entry Uint32Array, which JavaScript ignores
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 of an ASCII string (tokens are printable ASCII). */
function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The checksum characters of a token's random part: its CRC-32 in base62 (checked on every request, so no BigInt). */
function checksumOf(random: string): string {
  let value = crc32(random);
  let out = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/** A new raw token. Shown once to its creator; never stored. */
export function generateToken(): string {
  const random = toBase62(BigInt(`0x${randomBytes(32).toString('hex')}`), RANDOM_CHARS);
  return `${TOKEN_PREFIX}${random}${checksumOf(random)}`;
}

/**
 * Whether `token` could be one of ours. Tokens in our format must carry a valid checksum;
 * tokens declared by an import document (any 32+ printable characters) are accepted as they are.
 */
export function isWellFormedToken(token: string): boolean {
  if (!/^[\x21-\x7e]{32,512}$/.test(token)) return false;
  if (!token.startsWith(TOKEN_PREFIX) || token.length !== TOKEN_PREFIX.length + RANDOM_CHARS + CHECKSUM_CHARS)
    return true;
  const random = token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + RANDOM_CHARS);
  return token.endsWith(checksumOf(random));
}

const TOKEN_SHAPED = new RegExp(`${TOKEN_PREFIX}[0-9A-Za-z_]+`, 'g');
/** A percent-encoded letter, digit or underscore: the characters a token is made of. */
const ENCODED_TOKEN_CHAR = /%(3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]|5[Ff])/g;

/**
 * `text` with every token-shaped string (`oapi_` and the letters, digits and underscores after
 * it) replaced by `oapi_[masked]`: how a token put where it does not belong (a query value, a
 * path, a user agent, an error message) is written wherever a request is recorded (contract
 * §5.4: tokens never in logs). Percent-encoded letters, digits and underscores are decoded first
 * (RFC 3986 §6.2.2.2: the same characters), so `oapi%5F…` is found too. Text without a token
 * comes back unchanged; with one, also with those characters decoded. Linear in its length.
 */
export function maskTokens(text: string): string {
  // Stryker disable next-line StringLiteral: only a shortcut; decoding text without a '%' changes nothing
  const decoded = text.includes('%')
    ? text.replace(ENCODED_TOKEN_CHAR, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : text;
  return decoded.includes(TOKEN_PREFIX) ? decoded.replace(TOKEN_SHAPED, `${TOKEN_PREFIX}[masked]`) : text;
}

/** Hex SHA-256 of a raw token: what the store keeps. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The parts of a token safe to show in listings: a short prefix and the last four characters. */
export function tokenHints(token: string): { prefix: string; lastFour: string } {
  return {
    prefix: token.slice(0, token.startsWith(TOKEN_PREFIX) ? TOKEN_PREFIX.length + 4 : 4),
    lastFour: token.slice(-4),
  };
}

/** Most characters (Unicode code points) of a token's name. */
export const TOKEN_NAME_MAX = 100;

/**
 * What is wrong with `name` as a token's name (1–100 characters, no control or format character:
 * Unicode categories Cc and Cf, so no line break, C1 control or direction override; decisions.md
 * §18), in words for the person who typed it; undefined when nothing is. The one rule of the API
 * access page, `tokens create` and the import.
 */
export function tokenNameProblem(name: string): string | undefined {
  const length = [...name].length;
  if (name.trim() === '') return `Give the token a name (1–${TOKEN_NAME_MAX} characters).`;
  if (length > TOKEN_NAME_MAX) return `A token name has at most ${TOKEN_NAME_MAX} characters (this one has ${length}).`;
  if (hasControlCharacters(name))
    return 'A token name cannot contain control or format characters (such as a line break or a direction override).';
  return undefined;
}
