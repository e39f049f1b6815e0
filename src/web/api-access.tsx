/**
 * The API access page (decisions.md §18), `GET /settings/api-access`, and its create form,
 * `POST /settings/api-access/tokens`.
 *
 * The page shows the account's name and plan, "N of 10 active tokens", the account's tokens
 * newest first (name, scopes, created, expires, last used, status), a "Revoke" button per active
 * token, and the create form: "Name" (1–100 characters), a checkbox per scope labelled with the
 * scope and a line on what it grants, "Expires" (never, 7, 30 or 90 days, or a date), "Create
 * token". Bad input re-shows the form with each problem next to its field and creates nothing.
 *
 * A token is made by `createToken` (src/repos/tokens.ts), the function `outreach-api tokens
 * create` calls: the scope list, the 10-token limit, expiry and hashing exist once. The raw token
 * is shown once, in the answer to the create (a read-only field labelled "New token", with a copy
 * button), and nowhere else: not in a URL, a redirect, a cookie, a log line or another page, and
 * the answer is `Cache-Control: no-store` like every page of the area.
 */
// First: this module renders when it loads, and hono/jsx must find no AsyncLocalStorage then.
import './render-context.js';
import type { Hono } from 'hono';
import { html, raw } from 'hono/html';
import { isoAt } from '../domain/clock.js';
import { SCOPES, SCOPE_GRANTS, type Scope } from '../domain/scopes.js';
import { TOKEN_NAME_MAX, tokenNameProblem } from '../domain/tokens.js';
import type { ApiTokenRow } from '../db/schema.js';
import type { AppDeps } from '../http/context.js';
import {
  MAX_ACTIVE_TOKENS,
  TokenLimitError,
  countActiveTokens,
  createToken,
  listTokens,
  tokenState,
} from '../repos/tokens.js';
import { checkAntiForgery, field, readForm, type Form } from './forms.js';
import { AntiForgeryField, Layout, When, renderPage } from './layout.js';
import { API_ACCESS_PATH, TOKENS_PATH } from './paths.js';
import { requireSession, type SettingsContext, type SettingsEnv } from './session.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The "Expires" choices: value → days (null: never; `date`: the date field). */
const EXPIRY_DAYS: Record<string, number | null> = { never: null, '7': 7, '30': 30, '90': 90 };
const EXPIRY_LABELS: [string, string][] = [
  ['never', 'Never'],
  ['7', 'In 7 days'],
  ['30', 'In 30 days'],
  ['90', 'In 90 days'],
  ['date', 'On a date (below)'],
];
const DEFAULT_EXPIRY = '30';

const LIMIT_MESSAGE = `This account has ${MAX_ACTIVE_TOKENS} active tokens, the most it may have. Revoke one to create another.`;

/** What the create form holds, as typed. */
interface CreateValues {
  name: string;
  scopes: string[];
  expires: string;
  expiresOn: string;
}

/** The create form's problems, by field (`limit`: the form as a whole). */
type CreateErrors = Partial<Record<'name' | 'scopes' | 'expires' | 'expiresOn' | 'limit', string>>;

const EMPTY_FORM: CreateValues = { name: '', scopes: [], expires: DEFAULT_EXPIRY, expiresOn: '' };

/**
 * Reads and checks the create form at `nowMs`.
 * @returns the values as typed, the problems by field, and when there are none, the token's expiry (ISO or null).
 */
function checkCreateForm(form: Form, nowMs: number) {
  const values: CreateValues = {
    name: field(form, 'name').trim(),
    scopes: form.get('scopes') ?? [],
    expires: field(form, 'expires'),
    expiresOn: field(form, 'expiresOn').trim(),
  };
  const errors: CreateErrors = {};
  const nameProblem = tokenNameProblem(values.name);
  if (nameProblem) errors.name = nameProblem;
  if (values.scopes.length === 0) errors.scopes = 'Choose at least one scope.';
  else if (values.scopes.some((s) => !(SCOPES as readonly string[]).includes(s)))
    errors.scopes = 'Choose scopes from the list only.';
  let expiresAt: string | null = null;
  if (values.expires === 'date') {
    const ms = /^\d{4}-\d{2}-\d{2}$/.test(values.expiresOn) ? Date.parse(`${values.expiresOn}T00:00:00Z`) : Number.NaN;
    if (Number.isNaN(ms) || isoAt(ms).slice(0, 10) !== values.expiresOn)
      errors.expiresOn = 'Enter the expiry date as a date, such as 2027-01-31.';
    else if (ms <= nowMs) errors.expiresOn = 'Choose an expiry date after today.';
    else expiresAt = isoAt(ms);
  } else if (values.expires in EXPIRY_DAYS) {
    const days = EXPIRY_DAYS[values.expires]!;
    expiresAt = days === null ? null : isoAt(nowMs + days * DAY_MS);
  } else errors.expires = 'Choose when the token expires.';
  return { values, errors, expiresAt };
}

/** An error next to its field, with the id the field's `aria-describedby` names. */
function FieldError(props: { id: string; message?: string }) {
  return props.message ? (
    <p class="error" id={props.id}>
      <span class="visually-hidden">Error: </span>
      {props.message}
    </p>
  ) : null;
}

const describedBy = (...ids: (string | false | undefined)[]) => ids.filter(Boolean).join(' ') || undefined;

interface PageProps {
  session: SettingsContext['var']['session'];
  tokens: ApiTokenRow[];
  activeCount: number;
  nowIso: string;
  values?: CreateValues;
  errors?: CreateErrors;
  /** The token just created: its name and raw value, shown once. */
  created?: { name: string; token: string };
  /** A sentence about what was just done (a revocation). */
  notice?: string;
}

/** `2026-11-01 12:00 UTC` in a `<time>` element, or `none` when there is no time (html template: a row is on every page view). */
const when = (iso: string | null, none: string) =>
  iso === null ? none : html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;

/**
 * A token's row. Written as an html template rather than JSX: ten of them are on every view of
 * the page, and as JSX they made most of its garbage (a props object and its entries per element).
 */
function tokenRow(t: ApiTokenRow, nowIso: string) {
  const state = tokenState(t, nowIso);
  const scopes = (JSON.parse(t.scopes) as string[]).join(' ');
  const revoke =
    state === 'active'
      ? html`<form method="get" action="${TOKENS_PATH}/${encodeURIComponent(t.id)}/revoke"><button type="submit" class="secondary">Revoke<span class="visually-hidden"> token ${t.name}</span></button></form>`
      : '';
  return html`<tr><td data-label="Name">${t.name}</td><td data-label="Scopes"><code class="scope-list">${scopes}</code></td><td data-label="Created">${when(t.created_at, '')}</td><td data-label="Expires">${when(t.expires_at, 'Never')}</td><td data-label="Last used">${when(t.last_used_at, 'Never')}</td><td data-label="Status"><span class="state-${state}">${state}</span></td><td data-label="Action">${revoke}</td></tr>`;
}

/** A scope's checkbox, its label and its line on what it grants. */
function ScopeItem(props: { scope: Scope; checked: boolean }) {
  const { scope } = props;
  return (
    <li>
      <input
        type="checkbox"
        id={`scope-${scope}`}
        name="scopes"
        value={scope}
        checked={props.checked}
        aria-describedby={`scope-${scope}-grants`}
      />
      <label for={`scope-${scope}`}>
        <code>{scope}</code>
      </label>
      <p class="hint" id={`scope-${scope}-grants`}>
        {SCOPE_GRANTS[scope]}
      </p>
    </li>
  );
}

/**
 * Each scope's item, ticked and not, rendered once, at the first page that shows them (not at
 * start: the server's first answer does not wait for pages): the same HTML on every page.
 */
let scopeItems: Map<string, ReturnType<typeof raw>> | undefined;
const scopeItem = (scope: Scope, checked: boolean) =>
  (scopeItems ??= new Map(
    SCOPES.flatMap((one) =>
      [true, false].map(
        (ticked) => [`${one} ${ticked}`, raw(String(<ScopeItem scope={one} checked={ticked} />))] as const,
      ),
    ),
  )).get(`${scope} ${checked}`)!;

function CreateForm(props: { values: CreateValues; errors: CreateErrors; antiForgery: string; atLimit: boolean }) {
  const { values, errors } = props;
  const problems = (['name', 'scopes', 'expires', 'expiresOn'] as const).filter((k) => errors[k]);
  const targets = {
    name: 'token-name',
    scopes: `scope-${SCOPES[0]}`,
    expires: 'token-expires',
    expiresOn: 'token-expires-on',
  };
  return (
    <form method="post" action={TOKENS_PATH} novalidate aria-labelledby="create-heading">
      {(problems.length > 0 || errors.limit) && (
        <div class="error-summary" role="alert">
          <h3>The token was not created</h3>
          <ul>
            {errors.limit && <li>{errors.limit}</li>}
            {problems.map((k) => (
              <li>
                <a href={`#${targets[k]}`}>{errors[k]}</a>
              </li>
            ))}
          </ul>
        </div>
      )}
      <AntiForgeryField value={props.antiForgery} />
      <div class="field">
        <label for="token-name">Name</label>
        <p class="hint" id="token-name-hint">
          1–{TOKEN_NAME_MAX} characters, to recognise the token by (such as “nightly export”).
        </p>
        <FieldError id="token-name-error" message={errors.name} />
        <input
          id="token-name"
          name="name"
          type="text"
          required
          maxlength={TOKEN_NAME_MAX}
          value={values.name}
          autocomplete="off"
          aria-invalid={errors.name ? 'true' : undefined}
          aria-describedby={describedBy('token-name-hint', errors.name && 'token-name-error')}
        />
      </div>
      <fieldset aria-describedby={describedBy('scopes-hint', errors.scopes && 'scopes-error')}>
        <legend>Scopes</legend>
        <p class="hint" id="scopes-hint">
          Choose at least one. A scope grants only what its line says; every token can read its own account (GET /me).
        </p>
        <FieldError id="scopes-error" message={errors.scopes} />
        <ul class="scopes">{SCOPES.map((scope) => scopeItem(scope, values.scopes.includes(scope)))}</ul>
      </fieldset>
      <div class="field">
        <label for="token-expires">Expires</label>
        <FieldError id="token-expires-error" message={errors.expires} />
        <select
          id="token-expires"
          name="expires"
          aria-invalid={errors.expires ? 'true' : undefined}
          aria-describedby={describedBy(errors.expires && 'token-expires-error')}
        >
          {EXPIRY_LABELS.map(([value, label]) => (
            <option value={value} selected={values.expires === value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="token-expires-on">Expiry date</label>
        <p class="hint" id="token-expires-on-hint">
          Used when “On a date” is chosen: the token stops working at 00:00 UTC on that day.
        </p>
        <FieldError id="token-expires-on-error" message={errors.expiresOn} />
        <input
          id="token-expires-on"
          name="expiresOn"
          type="date"
          value={values.expiresOn}
          aria-invalid={errors.expiresOn ? 'true' : undefined}
          aria-describedby={describedBy('token-expires-on-hint', errors.expiresOn && 'token-expires-on-error')}
        />
      </div>
      {props.atLimit && !errors.limit && <p class="notice">{LIMIT_MESSAGE}</p>}
      <button type="submit">Create token</button>
    </form>
  );
}

/** Where a session's anti-forgery value goes in the empty form rendered once (base64url never needs escaping). */
const ANTI_FORGERY_SLOT = 'ANTI-FORGERY-SLOT';
/** The empty create form (as on most page views), with and without the limit's note, each rendered at its first use. */
const emptyForms = new Map<boolean, string>();
/** The empty create form for a session: the HTML rendered once, with that session's value in it. */
const emptyCreateForm = (antiForgery: string, atLimit: boolean) => {
  let form = emptyForms.get(atLimit);
  if (form === undefined) {
    form = String(<CreateForm values={EMPTY_FORM} errors={{}} antiForgery={ANTI_FORGERY_SLOT} atLimit={atLimit} />);
    emptyForms.set(atLimit, form);
  }
  return raw(form.replace(ANTI_FORGERY_SLOT, antiForgery));
};

function ApiAccessPage(props: PageProps) {
  const { session, tokens, activeCount } = props;
  const account = session.account;
  return (
    <Layout title="API access" antiForgery={session.antiForgery} copyScript={props.created !== undefined}>
      <h1>API access</h1>
      <p class="account">
        Account <strong>{account.name}</strong> · plan <strong>{account.plan}</strong>
        {account.plan === 'pro' && account.plan_expires_at && (
          <>
            {' '}
            until <When iso={account.plan_expires_at} none="" />
          </>
        )}
      </p>
      {props.created && (
        <section class="new-token" aria-labelledby="new-token-heading">
          <h2 id="new-token-heading">Token “{props.created.name}” created</h2>
          <label for="new-token">New token</label>
          <div class="copy-row">
            <input
              id="new-token"
              type="text"
              readonly
              value={props.created.token}
              autocomplete="off"
              spellcheck={false}
              aria-describedby="new-token-once"
            />
            <button type="button" data-copy="new-token" data-status="copy-status" hidden>
              Copy
            </button>
          </div>
          <p id="new-token-once">
            <strong>Copy it now: it will not be shown again.</strong> Send it as{' '}
            <code>Authorization: Bearer &lt;token&gt;</code>.
          </p>
          <p id="copy-status" role="status" />
        </section>
      )}
      {props.notice && (
        <p class="notice ok" role="status">
          {props.notice}
        </p>
      )}
      <h2 id="tokens-heading">Tokens</h2>
      <p id="token-count">
        {activeCount} of {MAX_ACTIVE_TOKENS} active tokens
      </p>
      {tokens.length === 0 ? (
        <p>No tokens yet.</p>
      ) : (
        <table aria-labelledby="tokens-heading" aria-describedby="token-count">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>{tokens.map((t) => tokenRow(t, props.nowIso))}</tbody>
        </table>
      )}
      <h2 id="create-heading">Create a token</h2>
      {props.values || props.errors ? (
        <CreateForm
          values={props.values ?? EMPTY_FORM}
          errors={props.errors ?? {}}
          antiForgery={session.antiForgery}
          atLimit={activeCount >= MAX_ACTIVE_TOKENS}
        />
      ) : (
        emptyCreateForm(session.antiForgery, activeCount >= MAX_ACTIVE_TOKENS)
      )}
    </Layout>
  );
}

/**
 * Renders the page for the signed-in account with `extra` (a created token, form values and
 * errors, a notice), reading its tokens (newest first) and active count now.
 */
export async function renderApiAccess(
  deps: AppDeps,
  c: SettingsContext,
  extra: Partial<PageProps> = {},
  status = 200,
): Promise<Response> {
  const session = c.var.session;
  const nowIso = isoAt(deps.clock.now());
  const tokens = (await listTokens(deps.store.db, session.account.id)).reverse();
  const activeCount = await countActiveTokens(deps.store.db, session.account.id, nowIso);
  return renderPage(
    c,
    <ApiAccessPage session={session} tokens={tokens} activeCount={activeCount} nowIso={nowIso} {...extra} />,
    status,
  );
}

export function registerApiAccess(app: Hono<SettingsEnv>, deps: AppDeps): void {
  app.get(API_ACCESS_PATH, requireSession(deps), async (c) => {
    const revoked = c.req.query('revoked');
    const token = revoked
      ? (await listTokens(deps.store.db, c.var.session.account.id)).find((t) => t.id === revoked)
      : undefined;
    return renderApiAccess(deps, c, {
      notice: token?.revoked_at
        ? `Token “${token.name}” is revoked: requests with it are refused from now on.`
        : undefined,
    });
  });

  app.post(TOKENS_PATH, requireSession(deps), async (c) => {
    const session = c.var.session;
    const form = await readForm(c);
    checkAntiForgery(form, session.antiForgery);
    const nowMs = deps.clock.now();
    const { values, errors, expiresAt } = checkCreateForm(form, nowMs);
    if (Object.keys(errors).length > 0) return renderApiAccess(deps, c, { values, errors }, 422);
    let created: Awaited<ReturnType<typeof createToken>>;
    try {
      created = await createToken(
        deps.store.db,
        { accountId: session.account.id, name: values.name, scopes: values.scopes, expiresAt },
        isoAt(nowMs),
      );
    } catch (error) {
      if (error instanceof TokenLimitError)
        return renderApiAccess(deps, c, { values, errors: { limit: LIMIT_MESSAGE } }, 409);
      throw error;
    }
    deps.logger.log('info', 'settings token created', {
      accountId: session.account.id,
      tokenId: created.row.id,
      clientAddress: deps.clientOf(c).address,
    });
    return renderApiAccess(deps, c, { created: { name: created.row.name, token: created.token } });
  });
}
