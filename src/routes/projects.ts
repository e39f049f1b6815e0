/**
 * Projects and workspaces (decisions.md §1, §2): `GET /projects`, `GET /workspaces` and the detail
 * in each form, each needing the scope of its form.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listProjects } from '../repos/projects.js';
import { PageQuery, errorResponses, offsetOf, okResponse, page, paginated } from '../schemas/common.js';
import { Project } from '../schemas/projects.js';
import { requireCallerProject } from './lookups.js';

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: `/${group.name}`,
    operationId: operationId(group, 'listProjects'),
    tags: [group.tag],
    summary: `List the account's ${group.name}`,
    description: `Scope \`${group.listScope}\`. Newest first (createdAt, then id).`,
    ...withScope(group.listScope),
    request: { query: PageQuery },
    responses: { 200: okResponse(paginated(Project), `A page of ${group.name}`), ...errorResponses() },
  });

const detailRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group),
    operationId: operationId(group, 'getProject'),
    tags: [group.tag],
    summary: `One ${group.name === 'projects' ? 'project' : 'workspace'}`,
    description: `Scope \`${group.listScope}\`.`,
    ...withScope(group.listScope),
    request: { params: groupParams(group) },
    responses: { 200: okResponse(Project, 'The project'), ...errorResponses() },
  });

export function registerProjects(app: OpenAPIHono<AppEnv>, { store }: AppDeps) {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const query = c.req.valid('query');
      const { items, total } = await listProjects(store.db, c.get('caller').account.id, query.limit, offsetOf(query));
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
    app.openapi(detailRoute(group), async (c) => {
      const project = await requireCallerProject(c, store.db, group, c.req.valid('param'));
      return c.json({ ok: true as const, data: project }, 200);
    });
  }
}
