/**
 * Blocked domains of a project (contract §4 "blocked domains"): the domains outreach skips,
 * scope `prospects:read` (decisions.md §2), under both path forms.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listBlockedDomains } from '../repos/blocked-domains.js';
import { PageQuery, errorResponses, offsetOf, okResponse, page, paginated } from '../schemas/common.js';
import { BlockedDomain } from '../schemas/resources.js';
import { requireCallerProject } from './lookups.js';

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/blocked-domains'),
    operationId: operationId(group, 'listBlockedDomains'),
    tags: ['Blocked domains'],
    summary: 'List the blocked domains of a project',
    description: 'Scope `prospects:read`. Newest first (createdAt, then id, both descending).',
    ...withScope('prospects:read'),
    request: { params: groupParams(group), query: PageQuery },
    responses: { 200: okResponse(paginated(BlockedDomain), 'A page of blocked domains'), ...errorResponses() },
  });

export function registerBlockedDomains(app: OpenAPIHono<AppEnv>, { store }: AppDeps): void {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const query = c.req.valid('query');
      const project = await requireCallerProject(c, store.db, group, c.req.valid('param'));
      const { items, total } = await listBlockedDomains(store.db, project.id, query.limit, offsetOf(query));
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
  }
}
