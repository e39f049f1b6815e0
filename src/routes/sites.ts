/** Sites of a project (contract §2 "Site", §4): list and detail, scope `sites:read`. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listSites, requireSite } from '../repos/sites.js';
import { Id, PageQuery, errorResponses, offsetOf, okResponse, page, paginated } from '../schemas/common.js';
import { Site } from '../schemas/projects.js';
import { requireCallerProject } from './lookups.js';

const SiteId = Id.openapi({ param: { name: 'siteId', in: 'path' }, example: 'site_acme_blog' });

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites'),
    operationId: operationId(group, 'listSites'),
    tags: ['Sites'],
    summary: 'List the sites of a project',
    description: 'Scope `sites:read`. Newest first (createdAt, then id).',
    ...withScope('sites:read'),
    request: { params: groupParams(group), query: PageQuery },
    responses: { 200: okResponse(paginated(Site), 'A page of sites'), ...errorResponses() },
  });

const detailRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}'),
    operationId: operationId(group, 'getSite'),
    tags: ['Sites'],
    summary: 'One site',
    description: 'Scope `sites:read`.',
    ...withScope('sites:read'),
    request: { params: groupParams(group, { siteId: SiteId }) },
    responses: { 200: okResponse(Site, 'The site'), ...errorResponses() },
  });

export function registerSites(app: OpenAPIHono<AppEnv>, { store }: AppDeps) {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const query = c.req.valid('query');
      const project = await requireCallerProject(c, store.db, group, c.req.valid('param'));
      const { items, total } = await listSites(store.db, project.id, query.limit, offsetOf(query));
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
    app.openapi(detailRoute(group), async (c) => {
      const params = c.req.valid('param');
      const project = await requireCallerProject(c, store.db, group, params);
      return c.json({ ok: true as const, data: await requireSite(store.db, project.id, params.siteId) }, 200);
    });
  }
}
