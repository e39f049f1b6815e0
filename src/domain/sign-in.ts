/**
 * The rules of the settings area's sign-in and sessions (decisions.md §18), without storage or
 * HTTP: session ids and what is derived from them, when a session has ended, and the attempt
 * limit.
 *
 * A session id is 32 random bytes (256 bits) in base64url, held only by the browser's cookie;
 * the database keeps its SHA-256 (`sessionIdHash`). The form's anti-forgery value is another
 * hash of the same id (`antiForgeryValue`): every instance can compute it from the cookie,
 * nothing more is stored, and neither hash gives the other or the id.
 */
import { createHash, randomBytes } from 'node:crypto';
import ipaddr from 'ipaddr.js';

/** A session ends this long after it began, whatever happens, ms (decisions.md §18). */
export const SESSION_MAX_AGE_MS = 12 * 60 * 60 * 1000;
/** Failed sign-ins are counted over this window, ms. */
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/** Failed sign-ins for one email within the window after which sign-in is refused. */
export const MAX_FAILURES_PER_EMAIL = 5;
/** Failed sign-ins from one client address within the window after which sign-in is refused. */
export const MAX_FAILURES_PER_CLIENT = 20;
/** Leading bits of an IPv6 address that name one client for the limit: a /64 is one site's network. */
export const CLIENT_IPV6_PREFIX_BITS = 64;

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** A new session id: 256 random bits, base64url (43 characters). */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether `value` could be a session id (checked before any lookup). */
export function isWellFormedSessionId(value: string | undefined): value is string {
  return value !== undefined && SESSION_ID.test(value);
}

/** Hex SHA-256 of a session id: what the database keeps. */
export function sessionIdHash(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/** The anti-forgery value of the forms of session `id` (base64url, 43 characters). */
export function antiForgeryValue(id: string): string {
  return createHash('sha256').update(`anti-forgery\0${id}`).digest('base64url');
}

/**
 * An email as sign-in compares it: trimmed, the ASCII letters A–Z lower-cased, every other
 * character left as it is. The one normalisation of both the account lookup (which compares it
 * with the stored email under SQL's `lower()`, ASCII-only on both stores: SQLite's built-in, and
 * PostgreSQL's under the columns' `COLLATE "C"`) and the attempt limit's key (`emailKey`), so
 * that every spelling that finds an account counts against that account's limit. Not
 * `toLowerCase()`, nor SQL's `lower()` of the typed value: PostgreSQL's lower-cases it by the
 * database's locale (İ → i, the Kelvin sign K → k), JavaScript's by Unicode (İ → i̇), and the two
 * disagreed: each `i` of an address doubled the attempts allowed (issue #28).
 */
export function signInEmail(email: string): string {
  return email.trim().replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** Hex SHA-256 of `signInEmail(email)`: the attempt limit's key (the email itself is not kept). */
export function emailKey(email: string): string {
  return createHash('sha256').update(signInEmail(email)).digest('hex');
}

/**
 * The client address the attempt limit counts by: an IPv4 address as it is (an IPv4-mapped IPv6
 * address as its IPv4 one); an IPv6 address as its /64 network, `2001:db8:1:2::/64`, since a
 * single host is commonly given a whole /64 and could otherwise take a fresh address for every
 * attempt; anything else (`unknown`) as it is.
 * @param address an address as `ClientInfo.address` gives it (a zone id, `%eth0`, is ignored).
 */
export function clientKey(address: string): string {
  const bare = address.replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return address;
  const parsed = ipaddr.process(bare);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/${CLIENT_IPV6_PREFIX_BITS}`);
  return `${network.toString()}/${CLIENT_IPV6_PREFIX_BITS}`;
}

/**
 * Whether a session begun at `createdAtMs` and last used at `lastSeenAtMs` has ended at `nowMs`:
 * `idleMs` without a request, or `SESSION_MAX_AGE_MS` after it began.
 */
export function sessionHasEnded(
  session: { createdAtMs: number; lastSeenAtMs: number },
  nowMs: number,
  idleMs: number,
): boolean {
  return nowMs - session.lastSeenAtMs >= idleMs || nowMs - session.createdAtMs >= SESSION_MAX_AGE_MS;
}

/**
 * When sign-in may be tried again, given the failures counted against one key (an email or a
 * client address) within the window, or undefined when it may be tried now.
 * @param failures times of the failures since `nowMs - SIGN_IN_WINDOW_MS`, ms, ascending.
 * @param limit `MAX_FAILURES_PER_EMAIL` or `MAX_FAILURES_PER_CLIENT`.
 * @returns ms since the epoch: when enough of those failures have left the window.
 */
export function signInAllowedAt(failures: readonly number[], limit: number): number | undefined {
  if (failures.length < limit) return undefined;
  return failures[failures.length - limit]! + SIGN_IN_WINDOW_MS;
}
