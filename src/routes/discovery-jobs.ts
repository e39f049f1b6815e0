/**
 * Discovery jobs of a site (contract §2 "Discovery job", "Discovery job detail", §4;
 * decisions.md §5, §10, §11): list, and detail with a page of the job's queries, scope
 * `prospects:read` (decisions.md §2), under both path forms.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listDiscoveryJobs, listDiscoveryQueries, requireDiscoveryJob } from '../repos/discovery-jobs.js';
import { Id, PageQuery, Pagination, errorResponses, offsetOf, okResponse, page, paginated } from '../schemas/common.js';
import { DiscoveryJob, DiscoveryQuery } from '../schemas/resources.js';
import { SiteIdParam } from '../schemas/writes.js';
import { requireCallerSite } from './lookups.js';

const JobId = Id.openapi({ param: { name: 'jobId', in: 'path' }, example: 'job_0001' });

/** Contract §2 "Discovery job detail": the job, its number of queries and a page of them. */
export const DiscoveryJobDetail = z
  .object({
    job: DiscoveryJob,
    queryCount: z.number().int().openapi({ description: 'Number of queries of the job (all pages)' }),
    queries: z
      .array(DiscoveryQuery)
      .openapi({ description: 'Oldest startedAt first, not-started queries last; ties by id' }),
    pagination: Pagination.openapi({ description: 'Pagination of `queries`' }),
  })
  .openapi('DiscoveryJobDetail');

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}/discovery-jobs'),
    operationId: operationId(group, 'listDiscoveryJobs'),
    tags: ['Discovery jobs'],
    summary: 'List the discovery jobs of a site',
    description:
      'Scope `prospects:read`. Newest first (createdAt, then id, both descending). Prospect discovery and contact discovery ' +
      '(`type: contact_discovery`, `subjectType: prospect`) jobs alike.',
    ...withScope('prospects:read'),
    request: { params: groupParams(group, { siteId: SiteIdParam }), query: PageQuery },
    responses: { 200: okResponse(paginated(DiscoveryJob), 'A page of discovery jobs'), ...errorResponses() },
  });

const detailRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}/discovery-jobs/{jobId}'),
    operationId: operationId(group, 'getDiscoveryJob'),
    tags: ['Discovery jobs'],
    summary: 'One discovery job with a page of its queries',
    description:
      'Scope `prospects:read`. `page` and `limit` page through the queries: oldest startedAt first, queries not started yet ' +
      '(startedAt null) last, ties by id ascending. `queryCount` is the number of all its queries.',
    ...withScope('prospects:read'),
    request: { params: groupParams(group, { siteId: SiteIdParam, jobId: JobId }), query: PageQuery },
    responses: { 200: okResponse(DiscoveryJobDetail, 'The job and a page of its queries'), ...errorResponses() },
  });

export function registerDiscoveryJobs(app: OpenAPIHono<AppEnv>, { store }: AppDeps): void {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const params = c.req.valid('param');
      const query = c.req.valid('query');
      const { site } = await requireCallerSite(c, store.db, group, params);
      const { items, total } = await listDiscoveryJobs(store.db, site.id, query.limit, offsetOf(query));
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
    app.openapi(detailRoute(group), async (c) => {
      const params = c.req.valid('param');
      const query = c.req.valid('query');
      const { site } = await requireCallerSite(c, store.db, group, params);
      const job = await requireDiscoveryJob(store.db, site.id, params.jobId);
      const { items, total } = await listDiscoveryQueries(store.db, job.id, query.limit, offsetOf(query));
      const { data: queries, pagination } = page(items, query, total);
      return c.json({ ok: true as const, data: { job, queryCount: total, queries, pagination } }, 200);
    });
  }
}
