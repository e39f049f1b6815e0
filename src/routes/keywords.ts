/**
 * Keywords of a site (contract §4 "keywords"), scope `sites:read` (decisions.md §2), under both
 * path forms.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listKeywords } from '../repos/keywords.js';
import { PageQuery, errorResponses, offsetOf, okResponse, page, paginated } from '../schemas/common.js';
import { Keyword } from '../schemas/resources.js';
import { SiteIdParam } from '../schemas/writes.js';
import { requireCallerSite } from './lookups.js';

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}/keywords'),
    operationId: operationId(group, 'listKeywords'),
    tags: ['Keywords'],
    summary: 'List the keywords of a site',
    description: 'Scope `sites:read`. Newest first (createdAt, then id, both descending).',
    ...withScope('sites:read'),
    request: { params: groupParams(group, { siteId: SiteIdParam }), query: PageQuery },
    responses: { 200: okResponse(paginated(Keyword), 'A page of keywords'), ...errorResponses() },
  });

export function registerKeywords(app: OpenAPIHono<AppEnv>, { store }: AppDeps): void {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const params = c.req.valid('param');
      const query = c.req.valid('query');
      const { site } = await requireCallerSite(c, store.db, group, params);
      const { items, total } = await listKeywords(store.db, site.id, query.limit, offsetOf(query));
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
  }
}
