/** `GET /me`: the calling account, its token and its limits (contract §2 "Account"). */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { MAX_ACTIVE_TOKENS, tokenForMe } from '../repos/tokens.js';
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

export function registerMe(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const { store, config, clock } = deps;
  app.openapi(getMe, async (c) => {
    const { account, tokenId } = c.get('caller');
    // The caller's token was just authenticated: its row is there.
    const token = (await tokenForMe(store.db, tokenId, clock.now()))!;
    const projects = token.project_count;
    return c.json(
      {
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
      },
      200,
    );
  });
}
