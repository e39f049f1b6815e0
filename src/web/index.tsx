/**
 * The settings area (decisions.md §18): server-rendered pages under `/settings` where a person
 * signs in with their account's email and password and manages its API tokens. Outside
 * `/api/public/v1`: API tokens are neither needed nor accepted here, and no answer is the API's
 * JSON envelope, failures included (`errorResponse` renders them as pages).
 *
 * Every answer under `/settings` carries `Cache-Control: no-store` and the headers of §18
 * (hono/secure-headers): `Content-Security-Policy: default-src 'self'; script-src 'self';
 * frame-ancestors 'none'; form-action 'self'` (no inline script or style anywhere),
 * `X-Content-Type-Options: nosniff`, `Referrer-Policy: same-origin`, `X-Frame-Options: DENY`.
 * Every form post must come from the area's own origin (hono/csrf on the `Origin` header, the
 * origin being the one the browser used: `Host`, or `X-Forwarded-Host`/`-Proto` from a trusted
 * proxy) and be at most 64 KiB; forms that change something also carry the session's
 * anti-forgery value (./forms.ts).
 *
 * Pages: `/settings` (→ API access), `/settings/sign-in`, `/settings/sign-out`,
 * `/settings/api-access` and its create form, `/settings/api-access/tokens/:id/revoke`; static
 * files under `/settings/assets/`. Without a live session every page but sign-in answers 303 to
 * the sign-in page and shows no data.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import { secureHeaders } from 'hono/secure-headers';
import type { AppDeps, PageArea } from '../http/context.js';
import { nulPaths } from '../http/nul.js';
import { describeError } from '../http/refusals.js';
import { registerApiAccess } from './api-access.js';
import { SETTINGS_ASSET_TYPES, settingsAssets, type SettingsAssetName } from './assets.js';
import { MAX_FORM_BYTES, PageError } from './forms.js';
import { ErrorPage, renderPage } from './layout.js';
import { API_ACCESS_PATH, SETTINGS_BASE } from './paths.js';
import { registerRevoke } from './revoke.js';
import { requireSession, type SettingsEnv } from './session.js';
import { registerSignIn } from './sign-in.js';

const FORGED =
  'This form was refused: it was sent from another site (its Origin is not this one). Nothing was changed.';

/** The answer to any failure inside the area, as a page. */
function failureOf(error: unknown): { status: number; message: string } {
  if (error instanceof PageError) return { status: error.status, message: error.message };
  if (error instanceof HTTPException && error.status === 403) return { status: 403, message: FORGED };
  return { status: 500, message: 'Something went wrong on the server. Try again; if it goes on, tell its operator.' };
}

/** Builds the area over the app's dependencies; it plugs into the app as a `PageArea` (src/app.ts). */
export function settingsArea(deps: AppDeps): PageArea {
  const app = new Hono<SettingsEnv>();
  const noStore: MiddlewareHandler = async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  };
  const headers = secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      frameAncestors: ["'none'"],
      formAction: ["'self'"],
    },
    xFrameOptions: 'DENY',
    referrerPolicy: 'same-origin',
    // Whether a host is HTTPS-only is its operator's to say (at the proxy), not this area's.
    strictTransportSecurity: false,
  });
  const sameOrigin = csrf({
    // The Origin header alone decides (§18); Sec-Fetch-Site is not taken instead of it.
    origin: (origin, c) => origin === deps.clientOf(c).origin,
    secFetchSite: () => false,
  });
  const limit = bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: () => {
      throw new PageError(413, 'The form sent was too large. Nothing was changed.');
    },
  });
  // No page takes a NUL character (U+0000) in its address, which no store may be given
  // (src/http/nul.ts); form fields are checked where they are read (readForm).
  const plainAddress: MiddlewareHandler = async (c, next) => {
    if (c.req.path.includes('\u0000') || nulPaths(c.req.queries(), 'query').length > 0)
      throw new PageError(400, 'This address holds a NUL character (U+0000), which no page takes.');
    await next();
  };
  // (csrf checks unsafe methods only, and a request without a body passes the body limit.)
  for (const path of [SETTINGS_BASE, `${SETTINGS_BASE}/*`])
    app.use(path, noStore, headers, sameOrigin, limit, plainAddress);

  const home = requireSession(deps);
  app.get(SETTINGS_BASE, home, (c) => c.redirect(API_ACCESS_PATH, 303));
  app.get(`${SETTINGS_BASE}/`, home, (c) => c.redirect(API_ACCESS_PATH, 303));
  for (const [name, type] of Object.entries(SETTINGS_ASSET_TYPES))
    app.get(`${SETTINGS_BASE}/assets/${name}`, (c) =>
      c.body(settingsAssets()[name as SettingsAssetName], 200, { 'Content-Type': type }),
    );
  registerSignIn(app, deps);
  registerApiAccess(app, deps);
  registerRevoke(app, deps);

  const errorResponse = async (c: Context, status: number, message: string, extra: Record<string, string> = {}) => {
    const render = async () => {
      c.res = await renderPage(c, <ErrorPage status={status} message={message} />, status, extra);
    };
    // The area's own header middleware, run around the page, so it carries the same headers.
    await noStore(c, async () => {
      await headers(c, render);
    });
    return c.res;
  };
  app.onError((error, c) => {
    const { status, message } = failureOf(error);
    if (status === 500)
      deps.logger.log('error', 'settings area failure', {
        requestId: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        // Message and stack in the server's log only, never on the page (decisions.md §4, §15).
        error: describeError(error),
      });
    return renderPage(c, <ErrorPage status={status} message={message} />, status);
  });

  return {
    mount: (parent) => {
      parent.route('/', app);
    },
    owns: (path) => path === SETTINGS_BASE || path.startsWith(`${SETTINGS_BASE}/`),
    errorResponse,
  };
}
