/**
 * Revoking a token from the settings area (decisions.md §18):
 * `GET /settings/api-access/tokens/:tokenId/revoke` is the confirmation naming the token, with a
 * "Revoke token" button that posts to the same path. The revocation is `revokeToken`
 * (src/repos/tokens.ts), as `outreach-api tokens revoke` does it: the token answers 401 from the
 * next API request on, on every instance. A token id of another account (or of none) is 404 and
 * changes nothing.
 */
import type { Hono } from 'hono';
import { isoAt } from '../domain/clock.js';
import type { AppDeps } from '../http/context.js';
import { listTokens, revokeToken } from '../repos/tokens.js';
import { checkAntiForgery, PageError, readForm } from './forms.js';
import { AntiForgeryField, Layout, When, renderPage } from './layout.js';
import { API_ACCESS_PATH, TOKENS_PATH } from './paths.js';
import { requireSession, type SettingsContext, type SettingsEnv } from './session.js';

const PATH = `${TOKENS_PATH}/:tokenId/revoke`;

/**
 * The signed-in account's token named by the path.
 * @throws PageError 404 when the account has no token with that id.
 */
async function ownToken(deps: AppDeps, c: SettingsContext) {
  const id = c.req.param('tokenId');
  const token = (await listTokens(deps.store.db, c.var.session.account.id)).find((t) => t.id === id);
  if (!token) throw new PageError(404, 'This account has no such token.');
  return token;
}

export function registerRevoke(app: Hono<SettingsEnv>, deps: AppDeps): void {
  app.get(PATH, requireSession(deps), async (c) => {
    const token = await ownToken(deps, c);
    if (token.revoked_at !== null) return c.redirect(`${API_ACCESS_PATH}?revoked=${encodeURIComponent(token.id)}`, 303);
    const scopes = (JSON.parse(token.scopes) as string[]).join(', ');
    return renderPage(
      c,
      <Layout title={`Revoke token “${token.name}”`} antiForgery={c.var.session.antiForgery}>
        <h1>Revoke token “{token.name}”?</h1>
        <dl class="token">
          <dt>Token</dt>
          <dd>
            <code>
              {token.token_prefix}…{token.last_four}
            </code>
          </dd>
          <dt>Scopes</dt>
          <dd>{scopes}</dd>
          <dt>Created</dt>
          <dd>
            <When iso={token.created_at} none="" />
          </dd>
        </dl>
        <p>
          Every request made with this token is refused from now on (401). This cannot be undone: a program that uses it
          needs a new token.
        </p>
        <form method="post" action={`${TOKENS_PATH}/${encodeURIComponent(token.id)}/revoke`} class="actions">
          <AntiForgeryField value={c.var.session.antiForgery} />
          <button type="submit" class="danger">
            Revoke token
          </button>
          <a href={API_ACCESS_PATH}>Cancel, keep the token</a>
        </form>
      </Layout>,
    );
  });

  app.post(PATH, requireSession(deps), async (c) => {
    const form = await readForm(c);
    checkAntiForgery(form, c.var.session.antiForgery);
    const token = await ownToken(deps, c);
    if (await revokeToken(deps.store.db, token.id, isoAt(deps.clock.now())))
      deps.logger.log('info', 'settings token revoked', {
        accountId: c.var.session.account.id,
        tokenId: token.id,
        clientAddress: deps.clientOf(c).address,
      });
    return c.redirect(`${API_ACCESS_PATH}?revoked=${encodeURIComponent(token.id)}`, 303);
  });
}
