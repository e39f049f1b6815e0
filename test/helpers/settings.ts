/**
 * Helpers for the settings area's tests (decisions.md §18): the demo accounts' passwords, and a
 * small HTTP client that keeps the session cookie as a browser does, sends the page's own
 * `Origin` on form posts, and checks on every answer what every settings answer must carry.
 */
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { isoAt } from '../../src/domain/clock.js';
import { hashPassword } from '../../src/domain/passwords.js';
import { setAccountPassword } from '../../src/repos/sessions.js';
import { DEMO_ACCOUNT_ID, DEMO_PASSWORD, OTHER_ACCOUNT_ID } from '../../src/seed/demo.js';

export const DEMO_EMAIL = 'owner@trailhead.test';
export const OTHER_EMAIL = 'owner@northwind.test';
export { DEMO_PASSWORD };
export const OTHER_PASSWORD = 'northwind-password';

/** The exact headers every settings answer carries (decisions.md §18). */
export const SETTINGS_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

let hashes: Promise<[string, string]> | undefined;
/**
 * Gives acct_demo `DEMO_PASSWORD` and acct_other `OTHER_PASSWORD` (hashed once per process: each
 * hash is a tenth of a second of scrypt).
 */
export async function giveDemoPasswords(db: Kysely<Database>, nowMs: number): Promise<void> {
  hashes ??= Promise.all([hashPassword(DEMO_PASSWORD), hashPassword(OTHER_PASSWORD)]);
  const [demo, other] = await hashes;
  await setAccountPassword(db, DEMO_ACCOUNT_ID, demo, isoAt(nowMs));
  await setAccountPassword(db, OTHER_ACCOUNT_ID, other, isoAt(nowMs));
}

export interface PageAnswer {
  status: number;
  headers: Headers;
  /** The body (HTML for every page). */
  html: string;
  /** `Location`, for a redirect. */
  location: string | null;
}

/** The value of the hidden `_csrf` field of the first form of `html` that has one. */
export function antiForgeryOf(html: string): string {
  const value = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  assert.ok(value, 'the page has an anti-forgery field');
  return value;
}

/**
 * A browser without a browser: one cookie jar (the session cookie), redirects not followed, and
 * on every answer the §18 headers and an HTML (never JSON) body checked.
 */
export class SettingsClient {
  cookie: string | undefined;
  /** Every `Set-Cookie` received, as sent. */
  readonly setCookies: string[] = [];

  constructor(
    readonly origin: string,
    /** Headers sent with every request (a proxy's `X-Forwarded-*`). */
    readonly extraHeaders: Record<string, string> = {},
  ) {}

  async request(method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...this.extraHeaders, ...init.headers };
    if (this.cookie) headers.cookie = this.cookie;
    const res = await fetch(`${this.origin}${path}`, { method, headers, body: init.body, redirect: 'manual' });
    const html = await res.text();
    for (const [name, value] of Object.entries(SETTINGS_HEADERS))
      assert.equal(res.headers.get(name), value, `${method} ${path}: ${name}`);
    assert.doesNotMatch(res.headers.get('content-type') ?? '', /json/, `${method} ${path}: never the API envelope`);
    const set = res.headers.get('set-cookie');
    if (set) {
      this.setCookies.push(set);
      const [pair] = set.split(';');
      this.cookie = /Max-Age=0/i.test(set) || pair!.endsWith('=') ? undefined : pair;
    }
    return { status: res.status, headers: res.headers, html, location: res.headers.get('location') };
  }

  get(path: string, headers: Record<string, string> = {}): Promise<PageAnswer> {
    return this.request('GET', path, { headers });
  }

  /**
   * Posts `fields` as a form from this client's origin (`origin: null` sends none, a string
   * sends that one).
   */
  post(
    path: string,
    fields: Record<string, string | string[]>,
    options: { origin?: string | null; headers?: Record<string, string> } = {},
  ): Promise<PageAnswer> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(fields))
      for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      ...options.headers,
    };
    const origin = options.origin === undefined ? this.origin : options.origin;
    if (origin !== null) headers.origin = origin;
    return this.request('POST', path, { body: body.toString(), headers });
  }

  /** Signs in; asserts the 303 to API access. */
  async signIn(email: string, password: string): Promise<void> {
    const res = await this.post('/settings/sign-in', { email, password });
    assert.equal(res.status, 303, `sign-in of ${email}: ${res.html.slice(0, 300)}`);
    assert.equal(res.location, '/settings/api-access');
  }

  /** The API access page's anti-forgery value (signed in). */
  async antiForgery(): Promise<string> {
    const page = await this.get('/settings/api-access');
    assert.equal(page.status, 200);
    return antiForgeryOf(page.html);
  }
}
