/** `GET /me`: the calling account, its token and its limits (contract §2 "Account"). */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { ACTIVE_TOKEN_SQL, MAX_ACTIVE_TOKENS } from '../repos/tokens.js';
import { errorResponses, okResponse } from '../schemas/common.js';
import { Me } from '../schemas/me.js';
import { isoAt } from '../domain/clock.js';

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
  // One statement: the token's metadata, the account's project count and its active tokens.
  const meStatement = store.sqlite.prepare(`
    SELECT t.id, t.name, t.scopes, t.token_prefix, t.last_four, t.created_at, t.expires_at, t.last_used_at,
      (SELECT count(*) FROM projects p WHERE p.account_id = t.account_id) AS project_count,
      (SELECT count(*) FROM api_tokens a WHERE a.account_id = t.account_id AND ${ACTIVE_TOKEN_SQL}) AS active_token_count
    FROM api_tokens t WHERE t.id = @tokenId`);
  app.openapi(getMe, (c) => {
    const { account, tokenId } = c.get('caller');
    const token = meStatement.get({ tokenId, now: isoAt(clock.now()) }) as {
      id: string; name: string; scopes: string; token_prefix: string; last_four: string;
      created_at: string; expires_at: string | null; last_used_at: string | null;
      project_count: number; active_token_count: number;
    };
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
            pageSizeMax: 100,
            pageSizeDefault: 25,
            maxBodyBytes: config.limits.maxBodyBytes,
          },
        },
      },
      200,
    );
  });
}
