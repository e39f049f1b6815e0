/**
 * Tracked backlinks (contract §2 "Backlink", §4, §9.3): list and detail with checks, scope
 * `backlinks:read` (decisions.md §2), under both path forms.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { type BacklinkRecord, listBacklinkChecks, listBacklinks, requireBacklink } from '../repos/backlinks.js';
import { jsonText } from '../http/json-text.js';
import { requireSite } from '../repos/sites.js';
import {
  Id,
  PageQuery,
  Pagination,
  queryInteger,
  errorResponses,
  offsetOf,
  okResponse,
  page,
  pageText,
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
  paginated,
} from '../schemas/common.js';
import { BACKLINK_STATUSES } from '../domain/enums.js';
import { Backlink, BacklinkCheck } from '../schemas/resources.js';
import { requireCallerProject } from './lookups.js';

const BacklinkId = Id.openapi({ param: { name: 'backlinkId', in: 'path' }, example: 'bl_guest_post' });

/** Contract §2 "Backlink (single record)": the list fields, `hasCheckError`, a page of checks. */
export const BacklinkDetail = Backlink.extend({
  hasCheckError: z.boolean().openapi({ description: '`hasError` of the newest check; false when there is none' }),
  checks: z.array(BacklinkCheck).openapi({ description: 'Newest checkedAt first, ties by id descending' }),
  pagination: Pagination.openapi({ description: 'Pagination of `checks`' }),
}).openapi('BacklinkDetail');

/** `limit` or its legacy alias `pageSize` (contract §9.3): 1–PAGE_SIZE_MAX, no default here so the handler can tell which was given. */
const pageSizeParam = (name: 'limit' | 'pageSize', description: string) =>
  queryInteger(name, 1, PAGE_SIZE_MAX).openapi({
    param: { name, in: 'query' },
    type: 'integer',
    minimum: 1,
    maximum: PAGE_SIZE_MAX,
    description,
    example: PAGE_SIZE_DEFAULT,
  });

const ListQuery = z.object({
  page: PageQuery.shape.page,
  limit: pageSizeParam(
    'limit',
    `Page size, 1–${PAGE_SIZE_MAX}; default ${PAGE_SIZE_DEFAULT}. Wins over \`pageSize\` when both are given.`,
  ),
  pageSize: pageSizeParam('pageSize', 'Legacy alias of `limit` (same rules).'),
  siteId: Id.optional().openapi({
    param: { name: 'siteId', in: 'query' },
    description: 'Only backlinks of this site of the project; an unknown site is 404',
  }),
  status: z
    .enum(BACKLINK_STATUSES)
    .optional()
    .openapi({ param: { name: 'status', in: 'query' } }),
});

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/backlinks'),
    operationId: operationId(group, 'listBacklinks'),
    tags: ['Backlinks'],
    summary: 'List the tracked backlinks of a project',
    description:
      'Scope `backlinks:read`. Newest first (createdAt, then id, both descending). `siteId` naming a site that is not in ' +
      'the project answers 404 NOT_FOUND. `pageSize` is a legacy alias of `limit`; `limit` wins when both are given.',
    ...withScope('backlinks:read'),
    request: { params: groupParams(group), query: ListQuery },
    responses: { 200: okResponse(paginated(Backlink), 'A page of backlinks'), ...errorResponses() },
  });

const detailRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/backlinks/{backlinkId}'),
    operationId: operationId(group, 'getBacklink'),
    tags: ['Backlinks'],
    summary: 'One backlink with a page of its checks',
    description:
      'Scope `backlinks:read`. `page` and `limit` page through the checks, newest checkedAt first (ties by id descending); ' +
      '`hasCheckError` is the `hasError` of the newest check (false when there is none).',
    ...withScope('backlinks:read'),
    request: { params: groupParams(group, { backlinkId: BacklinkId }), query: PageQuery },
    responses: { 200: okResponse(BacklinkDetail, 'The backlink and a page of its checks'), ...errorResponses() },
  });

export function registerBacklinks(app: OpenAPIHono<AppEnv>, { store }: AppDeps) {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const query = c.req.valid('query');
      const paging = { page: query.page, limit: query.limit ?? query.pageSize ?? PAGE_SIZE_DEFAULT };
      const project = await requireCallerProject(c, store.db, group, c.req.valid('param'));
      if (query.siteId !== undefined) await requireSite(store.db, project.id, query.siteId);
      const { items, total } = await listBacklinks(
        store.db,
        { projectId: project.id, siteId: query.siteId, status: query.status },
        paging.limit,
        offsetOf(paging),
      );
      return jsonText<{ ok: true; data: ReturnType<typeof page<BacklinkRecord>> }>(c, pageText(items, paging, total));
    });
    app.openapi(detailRoute(group), async (c) => {
      const params = c.req.valid('param');
      const query = c.req.valid('query');
      const project = await requireCallerProject(c, store.db, group, params);
      const backlink = await requireBacklink(store.db, project.id, params.backlinkId);
      const { items, total, hasCheckError } = await listBacklinkChecks(
        store.db,
        backlink.id,
        query.limit,
        offsetOf(query),
      );
      const { data: checks, pagination } = page(items, query, total);
      return c.json({ ok: true as const, data: { ...backlink, hasCheckError, checks, pagination } }, 200);
    });
  }
}
