/**
 * Prospects (contract §2 "Prospect", §4): list with filters and search, and detail, scope
 * `prospects:read`; a prospect's contacts, scope `contacts:read` (decisions.md §2). Both path forms.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listProspectContacts } from '../repos/contacts.js';
import { listProspects, requireProspect } from '../repos/prospects.js';
import { requireSite } from '../repos/sites.js';
import { Id, PageQuery, errorResponses, offsetOf, okResponse, page, paginated } from '../schemas/common.js';
import { PROSPECT_STATUSES } from '../domain/enums.js';
import { Contact, Prospect } from '../schemas/resources.js';
import { requireCallerProject } from './lookups.js';

const ProspectId = Id.openapi({ param: { name: 'prospectId', in: 'path' }, example: 'pr_trail_blog' });

const ListQuery = PageQuery.extend({
  siteId: Id.optional().openapi({
    param: { name: 'siteId', in: 'query' },
    description: 'Only prospects of this site of the project; an unknown site is 404',
  }),
  status: z
    .enum(PROSPECT_STATUSES)
    .optional()
    .openapi({ param: { name: 'status', in: 'query' } }),
  search: z
    .string()
    .max(200, 'search must be at most 200 characters')
    .optional()
    .openapi({
      param: { name: 'search', in: 'query' },
      description: 'Case-insensitive substring of title, domain, url or description; empty means no filter',
      example: 'hiking',
    }),
});

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/prospects'),
    operationId: operationId(group, 'listProspects'),
    tags: ['Prospects'],
    summary: 'List the prospects of a project',
    description:
      'Scope `prospects:read`. Newest first (createdAt, then id, both descending). `siteId` naming a site that is not in ' +
      'the project answers 404 NOT_FOUND.',
    ...withScope('prospects:read'),
    request: { params: groupParams(group), query: ListQuery },
    responses: { 200: okResponse(paginated(Prospect), 'A page of prospects'), ...errorResponses() },
  });

const detailRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/prospects/{prospectId}'),
    operationId: operationId(group, 'getProspect'),
    tags: ['Prospects'],
    summary: 'One prospect',
    description: 'Scope `prospects:read`.',
    ...withScope('prospects:read'),
    request: { params: groupParams(group, { prospectId: ProspectId }) },
    responses: { 200: okResponse(Prospect, 'The prospect'), ...errorResponses() },
  });

const contactsRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/prospects/{prospectId}/contacts'),
    operationId: operationId(group, 'listProspectContacts'),
    tags: ['Contacts'],
    summary: 'List the contacts of a prospect',
    description: 'Scope `contacts:read`. Newest first (createdAt, then id, both descending).',
    ...withScope('contacts:read'),
    request: { params: groupParams(group, { prospectId: ProspectId }), query: PageQuery },
    responses: { 200: okResponse(paginated(Contact), 'A page of contacts'), ...errorResponses() },
  });

export function registerProspects(app: OpenAPIHono<AppEnv>, { store }: AppDeps) {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const query = c.req.valid('query');
      const project = await requireCallerProject(c, store.db, group, c.req.valid('param'));
      if (query.siteId !== undefined) await requireSite(store.db, project.id, query.siteId);
      const { items, total } = await listProspects(
        store.db,
        { projectId: project.id, siteId: query.siteId, status: query.status, search: query.search },
        query.limit,
        offsetOf(query),
      );
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
    app.openapi(detailRoute(group), async (c) => {
      const params = c.req.valid('param');
      const project = await requireCallerProject(c, store.db, group, params);
      return c.json({ ok: true as const, data: await requireProspect(store.db, project.id, params.prospectId) }, 200);
    });
    app.openapi(contactsRoute(group), async (c) => {
      const params = c.req.valid('param');
      const query = c.req.valid('query');
      const project = await requireCallerProject(c, store.db, group, params);
      const prospect = await requireProspect(store.db, project.id, params.prospectId);
      const { items, total } = await listProspectContacts(store.db, prospect.id, query.limit, offsetOf(query));
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
  }
}
