/**
 * Sessions of the settings area (decisions.md §18), in the shape of Lucia's session guide: a
 * random 256-bit id in the cookie `outreach_session` (`HttpOnly`, `SameSite=Strict`,
 * `Path=/settings`, `Secure` when the browser used HTTPS, directly or through a trusted proxy),
 * only its SHA-256 in the database, so every instance knows every session. A session ends after
 * `settings.sessionIdleMinutes` without a request, 12 hours after it began, on sign-out, and when
 * its account's password is set again (which deletes its row).
 *
 * The last-request time is written at most once a minute per session, so a page view costs no
 * write; the idle time is therefore counted to the minute.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { isoAt } from '../domain/clock.js';
import {
  SESSION_MAX_AGE_MS,
  antiForgeryValue,
  isWellFormedSessionId,
  newSessionId,
  sessionHasEnded,
  sessionIdHash,
} from '../domain/sign-in.js';
import type { AccountRow } from '../db/schema.js';
import type { AppDeps, AppEnv } from '../http/context.js';
import { createSession, endSession, sessionByIdHash, touchSession } from '../repos/sessions.js';
import { SETTINGS_BASE, SIGN_IN_PATH } from './paths.js';

export const SESSION_COOKIE = 'outreach_session';
/** How often a session's last-request time is written at most, ms. */
const TOUCH_EVERY_MS = 60_000;

/** A signed-in person's session, as the pages use it. */
export interface SignedIn {
  account: AccountRow;
  /** Hex SHA-256 of the session id (the database's key). */
  idHash: string;
  /** The anti-forgery value of this session's forms. */
  antiForgery: string;
}

export interface SettingsEnv {
  Variables: AppEnv['Variables'] & { session: SignedIn };
}
export type SettingsContext = Context<SettingsEnv>;

const cookieOptions = (deps: AppDeps, c: Context) =>
  ({
    httpOnly: true,
    sameSite: 'Strict',
    path: SETTINGS_BASE,
    secure: deps.clientOf(c).https,
  }) as const;

/** Why there is no session: none presented, or one that has ended (the sign-in page says so). */
export type NoSession = 'none' | 'ended';

/**
 * The request's session, or why there is none. An ended session is deleted and its cookie
 * cleared; a live one has its last-request time written when a minute has passed.
 */
export async function readSession(deps: AppDeps, c: Context): Promise<SignedIn | NoSession> {
  const id = getCookie(c, SESSION_COOKIE);
  if (id === undefined) return 'none';
  if (!isWellFormedSessionId(id)) {
    deleteCookie(c, SESSION_COOKIE, cookieOptions(deps, c));
    return 'none';
  }
  const idHash = sessionIdHash(id);
  const db = deps.store.db;
  const stored = await sessionByIdHash(db, idHash);
  const now = deps.clock.now();
  if (!stored || sessionHasEnded(stored, now, deps.config.settings.sessionIdleMinutes * 60_000)) {
    if (stored) await endSession(db, idHash);
    deleteCookie(c, SESSION_COOKIE, cookieOptions(deps, c));
    return stored ? 'ended' : 'none';
  }
  if (now - stored.lastSeenAtMs >= TOUCH_EVERY_MS) await touchSession(db, idHash, isoAt(now));
  return { account: stored.account, idHash, antiForgery: antiForgeryValue(id) };
}

/** Starts a session for `account`: stores its hash and sets the cookie. */
export async function startSession(deps: AppDeps, c: Context, account: AccountRow): Promise<void> {
  const id = newSessionId();
  await createSession(deps.store.db, {
    idHash: sessionIdHash(id),
    accountId: account.id,
    nowIso: isoAt(deps.clock.now()),
  });
  setCookie(c, SESSION_COOKIE, id, { ...cookieOptions(deps, c), maxAge: SESSION_MAX_AGE_MS / 1000 });
}

/** Ends the request's session (sign-out): deletes it and clears the cookie. */
export async function stopSession(deps: AppDeps, c: Context, session: SignedIn): Promise<void> {
  await endSession(deps.store.db, session.idHash);
  deleteCookie(c, SESSION_COOKIE, cookieOptions(deps, c));
}

/**
 * Every page but sign-in: without a live session, a 303 to the sign-in page (which says when a
 * session ended) and no data; with one, `c.var.session`.
 */
export function requireSession(deps: AppDeps): MiddlewareHandler<SettingsEnv> {
  return async (c, next) => {
    const session = await readSession(deps, c);
    if (typeof session === 'string')
      return c.redirect(session === 'ended' ? `${SIGN_IN_PATH}?ended` : SIGN_IN_PATH, 303);
    c.set('session', session);
    await next();
  };
}
