/**
 * Sign-in and sign-out of the settings area (decisions.md §18).
 *
 * - `GET /settings/sign-in`: the form ("Email", "Password", "Sign in"); a person already signed in
 *   goes on to API access.
 * - `POST /settings/sign-in`: a wrong password and an unknown email (or an account without a
 *   password) get the same message after the same work: one failure recorded, one account lookup,
 *   one scrypt verification (against a stand-in hash when there is no account). After 5 failures
 *   for one email or 20 from one client address within 15 minutes, sign-in is refused (429,
 *   `Retry-After`) until enough of them leave the window, even with the right password, with a
 *   message that says when to try again. An attempt counts as a failure from its start (so
 *   attempts sent at once count each other) until it succeeds. The email is counted by its
 *   `signInEmail` form, the one the lookup uses; an IPv6 client by its /64 (`clientKey`). A
 *   sign-in that finds the scrypt queue full (2 hashing, 16 waiting) is refused at once (429,
 *   `Retry-After: 1`) and not counted. A success clears the email's failures, starts a session
 *   and goes to API access (303).
 * - `POST /settings/sign-out`: ends the session (anti-forgery value required).
 *
 * Each outcome is logged at `info` with the account id (when known) and the client address, never
 * the email or password typed, and counted in `outreach_settings_sign_ins_total{result}`.
 */
import type { Hono } from 'hono';
import { isoAt } from '../domain/clock.js';
import { ScryptBusyError, verifyPassword } from '../domain/passwords.js';
import {
  MAX_FAILURES_PER_CLIENT,
  MAX_FAILURES_PER_EMAIL,
  SESSION_MAX_AGE_MS,
  SIGN_IN_WINDOW_MS,
  clientKey,
  emailKey,
  signInAllowedAt,
} from '../domain/sign-in.js';
import type { AppDeps } from '../http/context.js';
import {
  clearSignInFailures,
  deleteExpiredSignInRows,
  forgetSignInFailure,
  recentSignInFailures,
  recordSignInFailure,
  signInAccountByEmail,
} from '../repos/sessions.js';
import { checkAntiForgery, field, readForm } from './forms.js';
import { Layout, renderPage } from './layout.js';
import { API_ACCESS_PATH, SETTINGS_BASE, SIGN_IN_PATH } from './paths.js';
import { readSession, requireSession, startSession, stopSession, type SettingsEnv } from './session.js';

/** Longest email read, characters (RFC 5321 allows 254). */
const MAX_EMAIL = 320;

const WRONG = 'That email and password do not match an account that can sign in here. Check both and try again.';

interface SignInProps {
  email?: string;
  /** A problem with the attempt, shown above the form and tied to the fields. */
  error?: string;
  /** A sentence about the last session (signed out, ended). */
  notice?: string;
}

function SignInPage(props: SignInProps) {
  const invalid = props.error !== undefined ? 'true' : undefined;
  return (
    <Layout title="Sign in">
      <h1>Sign in</h1>
      <p>Sign in with your account's email and password to manage its API tokens.</p>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      {props.error && (
        <div class="error-summary" role="alert" id="sign-in-error">
          <p>{props.error}</p>
        </div>
      )}
      <form method="post" action={SIGN_IN_PATH} novalidate>
        <div class="field">
          <label for="email">Email</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="username"
            required
            maxlength={MAX_EMAIL}
            value={props.email ?? ''}
            aria-invalid={invalid}
            aria-describedby={invalid && 'sign-in-error'}
          />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
            aria-invalid={invalid}
            aria-describedby={invalid && 'sign-in-error'}
          />
        </div>
        <button type="submit">Sign in</button>
      </form>
    </Layout>
  );
}

/** `HH:MM UTC` of `ms`. */
const clockTime = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;

export function registerSignIn(app: Hono<SettingsEnv>, deps: AppDeps): void {
  const { logger, metrics, clock } = deps;

  app.get(SIGN_IN_PATH, async (c) => {
    const session = await readSession(deps, c);
    if (typeof session !== 'string') return c.redirect(API_ACCESS_PATH, 303);
    const query = c.req.query();
    const notice =
      session === 'ended' || 'ended' in query
        ? 'Your session ended. Sign in again to go on.'
        : 'signed-out' in query
          ? 'You are signed out.'
          : undefined;
    return renderPage(c, <SignInPage notice={notice} />);
  });

  app.post(SIGN_IN_PATH, async (c) => {
    const form = await readForm(c);
    const email = field(form, 'email').trim().slice(0, MAX_EMAIL);
    const password = field(form, 'password');
    if (email === '' || password === '')
      return renderPage(c, <SignInPage email={email} error="Enter your email and your password." />, 422);

    const db = deps.store.db;
    const now = clock.now();
    const clientAddress = deps.clientOf(c).address ?? 'unknown';
    // An IPv6 client is counted by its /64 (clientKey); the log names the address itself.
    const keys = { emailKey: emailKey(email), clientAddress: clientKey(clientAddress) };
    const idleMs = deps.config.settings.sessionIdleMinutes * 60_000;
    await deleteExpiredSignInRows(db, {
      failuresBeforeIso: isoAt(now - SIGN_IN_WINDOW_MS),
      idleBeforeIso: isoAt(now - idleMs),
      createdBeforeIso: isoAt(now - SESSION_MAX_AGE_MS),
    });
    // Counted as a failure from now on, so attempts sent at once see each other: of those, at
    // most the limit are tried (possibly fewer: each may see all the others), the rest refused.
    const attempt = await recordSignInFailure(db, { ...keys, atIso: isoAt(now) });
    const others = await recentSignInFailures(db, keys, isoAt(now - SIGN_IN_WINDOW_MS), attempt);
    const allowedAt = Math.max(
      signInAllowedAt(others.byEmail, MAX_FAILURES_PER_EMAIL) ?? 0,
      signInAllowedAt(others.byClient, MAX_FAILURES_PER_CLIENT) ?? 0,
    );
    /** A refused attempt (429): it is not one more failure, and the page says when to try again. */
    const refuse = async (why: string, retryAfterS: number, error: string, fields: Record<string, unknown> = {}) => {
      await forgetSignInFailure(db, attempt);
      metrics?.settingsSignIns.inc({ result: 'limited' });
      logger.log('info', `settings sign-in refused: ${why}`, { clientAddress, ...fields });
      return renderPage(c, <SignInPage email={email} error={error} />, 429, { 'Retry-After': String(retryAfterS) });
    };
    if (allowedAt > now) {
      const minutes = Math.ceil((allowedAt - now) / 60_000);
      return refuse(
        'too many failed attempts',
        Math.max(1, Math.ceil((allowedAt - now) / 1000)),
        `Too many failed sign-ins. Try again after ${clockTime(allowedAt)} (in ${minutes} minute${minutes === 1 ? '' : 's'}).`,
        { retryAt: isoAt(allowedAt) },
      );
    }

    const found = await signInAccountByEmail(db, email);
    // Verified against a stand-in without an account, so both cases take the same time.
    let verified: boolean;
    try {
      verified = await verifyPassword(password, found?.passwordHash, deps.scrypt);
    } catch (error) {
      if (!(error instanceof ScryptBusyError)) throw error;
      return refuse(
        'too many sign-ins being checked at once',
        error.retryAfterS,
        'Too many sign-ins are being checked right now. Try again in a moment.',
      );
    }
    if (!verified) {
      metrics?.settingsSignIns.inc({ result: 'failed' });
      logger.log('info', 'settings sign-in failed', { accountId: found?.account.id ?? null, clientAddress });
      return renderPage(c, <SignInPage email={email} error={WRONG} />, 422);
    }
    await clearSignInFailures(db, keys.emailKey);
    await startSession(deps, c, found!.account);
    metrics?.settingsSignIns.inc({ result: 'ok' });
    logger.log('info', 'settings sign-in', { accountId: found!.account.id, clientAddress });
    return c.redirect(API_ACCESS_PATH, 303);
  });

  app.post(`${SETTINGS_BASE}/sign-out`, requireSession(deps), async (c) => {
    const session = c.var.session;
    checkAntiForgery(await readForm(c), session.antiForgery);
    await stopSession(deps, c, session);
    logger.log('info', 'settings sign-out', {
      accountId: session.account.id,
      clientAddress: deps.clientOf(c).address,
    });
    return c.redirect(`${SIGN_IN_PATH}?signed-out`, 303);
  });
}
