/**
 * `GET /me`: the calling account, its token and its limits (contract §2 "Account").
 *
 * The answer's JSON text is kept with the cached token row it was made from (decisions.md §16
 * "Caches"): the row is the same object only while the store's change stamp is unchanged and no
 * token of the account expired (`tokenForMe`), and the account the same object only while the
 * token lookup's cache holds (`cachedTokenLookup`), so a kept text is the one the same request
 * would build afresh. It saves building and serializing the object on every request.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv, Caller } from '../http/context.js';
import { jsonText } from '../http/json-text.js';
import { MAX_ACTIVE_TOKENS, type TokenForMe, tokenForMe } from '../repos/tokens.js';
import { errorResponses, okResponse, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../schemas/common.js';
import { Me } from '../schemas/me.js';

const getMe = createRoute({
  method: 'get',
  path: '/me',
  operationId: 'getMe',
  tags: ['Account'],
  summary: 'The calling account, the token used and the current limits',
  description: 'Needs any valid token; no scope.',
  responses: { 200: okResponse(Me, 'The account'), ...errorResponses('me') },
});

/** A kept answer: its JSON text, and the account row it was made with. */
interface KeptAnswer {
  account: Caller['account'];
  text: string;
}

export function registerMe(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const { store, config, clock } = deps;
  // Keyed by the cached row itself: a row the cache dropped takes its answer with it.
  const answers = new WeakMap<TokenForMe, KeptAnswer>();
  app.openapi(getMe, async (c) => {
    const { account, tokenId } = c.get('caller');
    // The caller's token was just authenticated: its row is there.
    const token = (await tokenForMe(store.db, tokenId, clock.now()))!;
    let kept = answers.get(token);
    if (kept?.account !== account) {
      kept = { account, text: JSON.stringify(answer(account, token)) };
      answers.set(token, kept);
    }
    // The bytes `c.json(answer(…))` would send.
    return jsonText<ReturnType<typeof answer>>(c, kept.text);
  });

  /** The answer's envelope for `account` and its token row. */
  function answer(account: Caller['account'], token: TokenForMe) {
    const projects = token.project_count;
    return {
      ok: true as const,
      data: {
        owner: {
          id: account.id,
          email: account.email,
          name: account.name,
          plan: account.plan,
          planExpiresAt: account.plan_expires_at,
          createdAt: account.created_at,
        },
        token: {
          id: token.id,
          name: token.name,
          scopes: JSON.parse(token.scopes) as string[],
          prefix: token.token_prefix,
          lastFour: token.last_four,
          createdAt: token.created_at,
          expiresAt: token.expires_at,
          lastUsedAt: token.last_used_at,
        },
        projectCount: projects,
        workspaceCount: projects,
        activeTokenCount: token.active_token_count,
        limits: {
          requestsPerMinute: config.limits.requestsPerMinute,
          activeTokensPerAccount: MAX_ACTIVE_TOKENS,
          pageSizeMax: PAGE_SIZE_MAX,
          pageSizeDefault: PAGE_SIZE_DEFAULT,
          maxBodyBytes: config.limits.maxBodyBytes,
        },
      },
    };
  }
}
