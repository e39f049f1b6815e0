/**
 * Outreach drafts of a site (contract §2 "Outreach draft", §4): list with a status filter, and
 * detail, scope `outreach:read` (decisions.md §2), under both path forms. The writes (edit,
 * regenerate) are in `draft-edits.ts`.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listDrafts, requireDraft } from '../repos/drafts.js';
import { PageQuery, errorResponses, offsetOf, okResponse, page, paginated } from '../schemas/common.js';
import { DRAFT_STATUSES } from '../domain/enums.js';
import { Draft } from '../schemas/resources.js';
import { DraftIdParam, SiteIdParam } from '../schemas/writes.js';
import { requireCallerSite } from './lookups.js';

const ListQuery = PageQuery.extend({
  status: z
    .enum(DRAFT_STATUSES)
    .optional()
    .openapi({ param: { name: 'status', in: 'query' }, description: 'Only drafts in this status' }),
});

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}/drafts'),
    operationId: operationId(group, 'listDrafts'),
    tags: ['Drafts'],
    summary: 'List the outreach drafts of a site',
    description:
      'Scope `outreach:read`. Newest first (createdAt, then id, both descending). Each draft carries its current `message` ' +
      '(null when it has none yet), its `prospect` and its `contact`.',
    ...withScope('outreach:read'),
    request: { params: groupParams(group, { siteId: SiteIdParam }), query: ListQuery },
    responses: { 200: okResponse(paginated(Draft), 'A page of drafts'), ...errorResponses() },
  });

const detailRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}/drafts/{draftId}'),
    operationId: operationId(group, 'getDraft'),
    tags: ['Drafts'],
    summary: 'One outreach draft',
    description: 'Scope `outreach:read`. The draft with its current `message`, its `prospect` and its `contact`.',
    ...withScope('outreach:read'),
    request: { params: groupParams(group, { siteId: SiteIdParam, draftId: DraftIdParam }) },
    responses: { 200: okResponse(Draft, 'The draft'), ...errorResponses() },
  });

export function registerDrafts(app: OpenAPIHono<AppEnv>, { store }: AppDeps): void {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const params = c.req.valid('param');
      const query = c.req.valid('query');
      const { site } = await requireCallerSite(c, store.db, group, params);
      const { items, total } = await listDrafts(
        store.db,
        { siteId: site.id, status: query.status },
        query.limit,
        offsetOf(query),
      );
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
    app.openapi(detailRoute(group), async (c) => {
      const params = c.req.valid('param');
      const { site } = await requireCallerSite(c, store.db, group, params);
      return c.json({ ok: true as const, data: await requireDraft(store.db, site.id, params.draftId) }, 200);
    });
  }
}
