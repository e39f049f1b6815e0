/**
 * Leads (contract §2 "Lead", §4; decisions.md §5, §6): list with views, filters and search, and
 * detail, scope `leads:read`, under both path forms.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listLeads, requireLead } from '../repos/leads.js';
import { requireSite } from '../repos/sites.js';
import { Id, PageQuery, errorResponses, offsetOf, okResponse, page, paginated } from '../schemas/common.js';
import { LEAD_STAGES, LEAD_TIERS, LEAD_TYPES, LEAD_VIEWS } from '../domain/enums.js';
import { Lead } from '../schemas/resources.js';
import { requireCallerProject } from './lookups.js';

const LeadId = Id.openapi({ param: { name: 'leadId', in: 'path' }, example: 'lead_reddit_boots' });

const ListQuery = PageQuery.extend({
  siteId: Id.optional().openapi({
    param: { name: 'siteId', in: 'query' },
    description: 'Only leads of this site of the project; an unknown site is 404',
  }),
  search: z
    .string()
    .max(200, 'search must be at most 200 characters')
    .optional()
    .openapi({
      param: { name: 'search', in: 'query' },
      description:
        'Case-insensitive substring of title, body, authorHandle or evidenceQuote; the hidden text of redacted leads never ' +
        'matches. Empty means no filter',
      example: 'hiking boots',
    }),
  view: z
    .enum(LEAD_VIEWS)
    .default('quality')
    .openapi({
      param: { name: 'view', in: 'query' },
      description: '`quality` (default): not dismissed, tier hot or warm; `all`: not dismissed; `archived`: dismissed',
    }),
  stage: z
    .enum(LEAD_STAGES)
    .optional()
    .openapi({ param: { name: 'stage', in: 'query' } }),
  tier: z
    .enum(LEAD_TIERS)
    .optional()
    .openapi({
      param: { name: 'tier', in: 'query' },
      description: 'Combined with the view: `view=quality&tier=explore` matches nothing',
    }),
  leadType: z
    .enum(LEAD_TYPES)
    .optional()
    .openapi({ param: { name: 'leadType', in: 'query' } }),
  platform: z
    .string()
    .max(100, 'platform must be at most 100 characters')
    .optional()
    .openapi({
      param: { name: 'platform', in: 'query' },
      description: 'Exact platform name (e.g. `reddit`); empty means no filter',
      example: 'reddit',
    }),
});

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/leads'),
    operationId: operationId(group, 'listLeads'),
    tags: ['Leads'],
    summary: 'List the leads of a project',
    description:
      'Scope `leads:read`. Highest score first, then newest postedAt (leads without one last), then id descending. ' +
      'Redacted leads have `title`, `body` and `evidenceQuote` null. `siteId` naming a site that is not in the project ' +
      'answers 404 NOT_FOUND.',
    ...withScope('leads:read'),
    request: { params: groupParams(group), query: ListQuery },
    responses: { 200: okResponse(paginated(Lead), 'A page of leads'), ...errorResponses() },
  });

const detailRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/leads/{leadId}'),
    operationId: operationId(group, 'getLead'),
    tags: ['Leads'],
    summary: 'One lead',
    description:
      'Scope `leads:read`. Dismissed leads are returned too; a redacted lead has `title`, `body` and `evidenceQuote` null.',
    ...withScope('leads:read'),
    request: { params: groupParams(group, { leadId: LeadId }) },
    responses: { 200: okResponse(Lead, 'The lead'), ...errorResponses() },
  });

export function registerLeads(app: OpenAPIHono<AppEnv>, { store }: AppDeps) {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const query = c.req.valid('query');
      const project = await requireCallerProject(c, store.db, group, c.req.valid('param'));
      if (query.siteId !== undefined) await requireSite(store.db, project.id, query.siteId);
      const { items, total } = await listLeads(
        store.db,
        {
          projectId: project.id,
          siteId: query.siteId,
          view: query.view,
          stage: query.stage,
          tier: query.tier,
          leadType: query.leadType,
          platform: query.platform,
          search: query.search,
        },
        query.limit,
        offsetOf(query),
      );
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
    app.openapi(detailRoute(group), async (c) => {
      const params = c.req.valid('param');
      const project = await requireCallerProject(c, store.db, group, params);
      return c.json({ ok: true as const, data: await requireLead(store.db, project.id, params.leadId) }, 200);
    });
  }
}
