/**
 * Reply to a thread (contract §4 "Reply to thread"; decisions.md §7, §10), scope
 * `outreach:send`, both path forms, idempotent by `idempotencyKey`. The reply is queued in the
 * outbox in the same transaction as its idempotency record and delivered by the outbox worker
 * (`src/workers/outbox.ts`; the queue's statements are `src/repos/outbox.ts`'s); its `status` moves queued → sent or failed in the thread's messages.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { validationError } from '../domain/errors.js';
import { GROUPS, type Group, groupIdOf, groupParams, groupPath, operationId } from '../http/groups.js';
import { IdempotencyKeys, groupOperation } from '../http/middleware/idempotency.js';
import { writeAccess } from '../http/middleware/json-body.js';
import { requireWritablePlan } from '../http/middleware/plan.js';
import { activeSender } from '../repos/email-accounts.js';
import { outboxMessages, replySubject } from '../repos/outbox.js';
import { countOutbound, requireThread, threadRecordId } from '../repos/threads.js';
import { errorResponses, okResponse } from '../schemas/common.js';
import { ReplyResult } from '../schemas/resources.js';
import { ReplyBody, SiteIdParam, ThreadIdParam, jsonRequestBody } from '../schemas/writes.js';
import { requireCallerSite } from './lookups.js';

const REPLY_PATH = '/sites/{siteId}/threads/{threadId}/replies';

const replyRoute = (group: Group, maxBodyBytes: number) =>
  createRoute({
    method: 'post',
    path: groupPath(group, REPLY_PATH),
    operationId: operationId(group, 'replyToThread'),
    tags: ['Threads'],
    summary: 'Reply to a thread',
    description:
      'Scope `outreach:send`; a pro (unexpired) or lifetime plan. Accepts the reply for delivery and answers 202 ' +
      '`{ threadId, status: "queued" }`; the thread\'s `outboundCount` and `lastOutboundAt` move at once. The message is sent to ' +
      "the thread's contact (and `ccEmails`) from the site's first active sender by the configured mail transport, with retries; " +
      "it then shows `sent` or `failed` among the thread's messages. A site without an active sender is 422. `{threadId}` is " +
      "the thread's id or its `threadId`. Idempotent by `idempotencyKey` (24 h).",
    ...writeAccess('outreach:send', maxBodyBytes),
    request: {
      params: groupParams(group, { siteId: SiteIdParam, threadId: ThreadIdParam }),
      body: jsonRequestBody(ReplyBody),
    },
    responses: {
      202: okResponse(ReplyResult, 'Accepted and queued for delivery', { replayable: true }),
      ...errorResponses('write'),
    },
  });

export function registerReplies(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { store, clock, config } = deps;
  const keys = new IdempotencyKeys(store, clock, deps.shutdown.signal, config.workers.leaseMs);

  for (const group of GROUPS) {
    app.openapi(replyRoute(group, config.limits.maxBodyBytes), async (c) => {
      const params = c.req.valid('param');
      const body = c.req.valid('json');
      const ids = {
        projectId: groupIdOf(group, params),
        siteId: params.siteId,
        threadId: await threadRecordId(store.db, params.siteId, params.threadId),
      };
      const request = { operation: groupOperation('POST', REPLY_PATH), key: body.idempotencyKey, ids, body };
      const response = await keys.run(c, request, {
        check: async () => {
          const { site } = await requireCallerSite(c, store.db, group, params);
          const thread = await requireThread(store.db, site.id, ids.threadId);
          requireWritablePlan(c, clock);
          const sender = await activeSender(store.db, site.id);
          if (!sender) {
            throw validationError([
              {
                path: 'path.siteId',
                message: 'The site has no active email sender to send the reply from; activate one first',
              },
            ]);
          }
          return { thread, sender };
        },
        commit: async (trx, { thread, sender }, _: undefined, now) => {
          await outboxMessages.enqueue(
            trx,
            {
              threadId: thread.id,
              sender,
              to: [thread.contact.email],
              cc: body.ccEmails ?? [],
              subject: await replySubject(trx, thread.id, `Re: ${thread.prospect.title ?? thread.prospect.domain}`),
              body: body.body,
            },
            now,
          );
          await countOutbound(trx, thread.id, now);
          return { status: 202, data: { threadId: thread.id, status: 'queued' as const } };
        },
      });
      deps.notify?.('outbox');
      return response;
    });
  }
}
