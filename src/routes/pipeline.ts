/**
 * Pipeline status of a site (contract §4 "prospect discovery and pipeline status"): its
 * prospects, drafts, threads and backlinks counted by status, scope `prospects:read`
 * (decisions.md §2), under both path forms.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { getPipeline } from '../repos/pipeline.js';
import { errorResponses, okResponse } from '../schemas/common.js';
import { Pipeline } from '../schemas/resources.js';
import { SiteIdParam } from '../schemas/writes.js';
import { requireCallerSite } from './lookups.js';

const getRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}/pipeline'),
    operationId: operationId(group, 'getPipeline'),
    tags: ['Pipeline'],
    summary: 'Pipeline status of a site',
    description:
      "Scope `prospects:read`. The site's prospects, drafts, threads and backlinks counted by status; every status of each " +
      'list is present, 0 when the site has none.',
    ...withScope('prospects:read'),
    request: { params: groupParams(group, { siteId: SiteIdParam }) },
    responses: { 200: okResponse(Pipeline, 'Counts by status'), ...errorResponses() },
  });

export function registerPipeline(app: OpenAPIHono<AppEnv>, { store }: AppDeps): void {
  for (const group of GROUPS) {
    app.openapi(getRoute(group), async (c) => {
      const params = c.req.valid('param');
      const { site } = await requireCallerSite(c, store.db, group, params);
      return c.json({ ok: true as const, data: await getPipeline(store.db, site.id) }, 200);
    });
  }
}
