/**
 * Email sending accounts of a site (contract §2 "Email accounts", §4; decisions.md §11), scope
 * `outreach:read` (decisions.md §2), under both path forms. The one list that is not paginated
 * (decisions.md §5).
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listEmailAccounts } from '../repos/email-accounts.js';
import { errorResponses, okResponse } from '../schemas/common.js';
import { EmailAccounts } from '../schemas/resources.js';
import { SiteIdParam } from '../schemas/writes.js';
import { requireCallerSite } from './lookups.js';

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}/email-accounts'),
    operationId: operationId(group, 'listEmailAccounts'),
    tags: ['Email accounts'],
    summary: 'The email connections and senders of a site',
    description:
      'Scope `outreach:read`. Not paginated: every connection and every sender of the site, each list newest first ' +
      '(createdAt, then id, both descending).',
    ...withScope('outreach:read'),
    request: { params: groupParams(group, { siteId: SiteIdParam }) },
    responses: { 200: okResponse(EmailAccounts, 'Connections and senders'), ...errorResponses() },
  });

export function registerEmailAccounts(app: OpenAPIHono<AppEnv>, { store }: AppDeps): void {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const params = c.req.valid('param');
      const { site } = await requireCallerSite(c, store.db, group, params);
      return c.json({ ok: true as const, data: await listEmailAccounts(store.db, site.id) }, 200);
    });
  }
}
