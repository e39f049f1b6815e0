/**
 * Inbox threads of a site and their messages (contract §2 "Thread", §4; decisions.md §5, §10,
 * §11), scope `outreach:read` (decisions.md §2), under both path forms. The reply is in
 * `replies.ts`.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupParams, groupPath, operationId } from '../http/groups.js';
import { withScope } from '../http/middleware/scope.js';
import { listThreadMessages, listThreads, requireThread } from '../repos/threads.js';
import { PageQuery, errorResponses, offsetOf, okResponse, page, paginated } from '../schemas/common.js';
import { Thread, ThreadMessage } from '../schemas/resources.js';
import { SiteIdParam, ThreadIdParam } from '../schemas/writes.js';
import { requireCallerSite } from './lookups.js';

const listRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}/threads'),
    operationId: operationId(group, 'listThreads'),
    tags: ['Threads'],
    summary: 'List the inbox threads of a site',
    description:
      'Scope `outreach:read`. Newest updatedAt first, ties by id descending. Each thread carries its `contact` and `prospect`.',
    ...withScope('outreach:read'),
    request: { params: groupParams(group, { siteId: SiteIdParam }), query: PageQuery },
    responses: { 200: okResponse(paginated(Thread), 'A page of threads'), ...errorResponses() },
  });

const messagesRoute = (group: Group) =>
  createRoute({
    method: 'get',
    path: groupPath(group, '/sites/{siteId}/threads/{threadId}/messages'),
    operationId: operationId(group, 'listThreadMessages'),
    tags: ['Threads'],
    summary: 'List the messages of an inbox thread',
    description:
      'Scope `outreach:read`. Oldest sentAt first (ties by id ascending), then the messages without sentAt (queued for ' +
      "delivery, or failed) oldest createdAt first (ties by id). `{threadId}` is the thread's id or its `threadId`.",
    ...withScope('outreach:read'),
    request: { params: groupParams(group, { siteId: SiteIdParam, threadId: ThreadIdParam }), query: PageQuery },
    responses: { 200: okResponse(paginated(ThreadMessage), "A page of the thread's messages"), ...errorResponses() },
  });

export function registerThreads(app: OpenAPIHono<AppEnv>, { store }: AppDeps): void {
  for (const group of GROUPS) {
    app.openapi(listRoute(group), async (c) => {
      const params = c.req.valid('param');
      const query = c.req.valid('query');
      const { site } = await requireCallerSite(c, store.db, group, params);
      const { items, total } = await listThreads(store.db, site.id, query.limit, offsetOf(query));
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
    app.openapi(messagesRoute(group), async (c) => {
      const params = c.req.valid('param');
      const query = c.req.valid('query');
      const { site } = await requireCallerSite(c, store.db, group, params);
      const thread = await requireThread(store.db, site.id, params.threadId);
      const { items, total } = await listThreadMessages(store.db, thread.id, query.limit, offsetOf(query));
      return c.json({ ok: true as const, data: page(items, query, total) }, 200);
    });
  }
}
