/**
 * The settings area's shared page frame (decisions.md §18), rendered on the server with Hono's
 * JSX: the document head (stylesheet, and the copy script where a page needs it, both from
 * `/settings/assets/`), a header with "Sign out" for a signed-in person, and the page in `main`.
 * Also the error page every failure of the area answers with (never the API's envelope).
 */
// First: hono/jsx must find no AsyncLocalStorage at its first render (see the module).
import './render-context.js';
import type { Child } from 'hono/jsx';
import type { Context } from 'hono';
import { SETTINGS_BASE } from './paths.js';

export interface LayoutProps {
  /** The page's own title (the document title adds the area's name). */
  title: string;
  /** The signed-in session's anti-forgery value: shows "Sign out". */
  antiForgery?: string;
  /** Load the copy button's script (the page that shows a new token). */
  copyScript?: boolean;
  children?: Child;
}

export function Layout(props: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · outreach-api settings`}</title>
        <link rel="stylesheet" href={`${SETTINGS_BASE}/assets/settings.css`} />
        {props.copyScript && <script src={`${SETTINGS_BASE}/assets/copy.js`} defer />}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to the page
        </a>
        <header class="top">
          <p>outreach-api settings</p>
          {props.antiForgery !== undefined && (
            <form method="post" action={`${SETTINGS_BASE}/sign-out`}>
              <AntiForgeryField value={props.antiForgery} />
              <button type="submit" class="secondary">
                Sign out
              </button>
            </form>
          )}
        </header>
        <main id="main">{props.children}</main>
      </body>
    </html>
  );
}

/** The name of the anti-forgery form field. */
export const ANTI_FORGERY_FIELD = '_csrf';

/** The hidden anti-forgery field every form that changes something carries. */
export function AntiForgeryField(props: { value: string }) {
  return <input type="hidden" name={ANTI_FORGERY_FIELD} value={props.value} />;
}

/** Renders `page` as an HTML document with `status`. */
export async function renderPage(c: Context, page: Child, status = 200, headers: Record<string, string> = {}) {
  const body = `<!doctype html>${await (page as { toString(): string | Promise<string> }).toString()}`;
  return c.html(body, status as 200, headers);
}

const TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Refused',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Too large',
  500: 'Something went wrong',
  503: 'Unavailable',
};

/** The page of a failure: its status as a title, `message`, and the way back. */
export function ErrorPage(props: { status: number; message: string; antiForgery?: string }) {
  const title = TITLES[props.status] ?? 'Error';
  return (
    <Layout title={title} antiForgery={props.antiForgery}>
      <h1>{title}</h1>
      <p>{props.message}</p>
      <p>
        <a href={`${SETTINGS_BASE}/api-access`}>Back to API access</a>
      </p>
    </Layout>
  );
}

/** `2026-11-01 12:00 UTC` in a `<time>` element, or `text` when there is no time. */
export function When(props: { iso: string | null; none: string }) {
  if (props.iso === null) return <>{props.none}</>;
  return <time datetime={props.iso}>{`${props.iso.slice(0, 10)} ${props.iso.slice(11, 16)} UTC`}</time>;
}
