/**
 * Draft writes (contract §4 "Edit draft", "Regenerate draft"; decisions.md §7, §10), scope
 * `outreach:write`, both path forms. The edit is naturally idempotent (it sets values) and takes
 * no key; regenerate is idempotent by the `Idempotency-Key` header.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { isoAt } from '../domain/clock.js';
import { inTransaction } from '../db/connection.js';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupIdOf, groupParams, groupPath, operationId } from '../http/groups.js';
import { IdempotencyKeys, groupOperation, providerFailure } from '../http/middleware/idempotency.js';
import { writeAccess } from '../http/middleware/json-body.js';
import { requireWritablePlan } from '../http/middleware/plan.js';
import { requireContactRow } from '../repos/contacts.js';
import { draftWrites, type DraftRecord, requireDraft, toDraftMessage } from '../repos/drafts.js';
import { requireProspect } from '../repos/prospects.js';
import { errorResponses, okResponse } from '../schemas/common.js';
import { Draft } from '../schemas/resources.js';
import {
  DraftEditBody,
  DraftIdParam,
  RegenerateBody,
  RegenerateHeaders,
  SiteIdParam,
  jsonRequestBody,
} from '../schemas/writes.js';
import { requireCallerSite } from './lookups.js';

const DRAFT_PATH = '/sites/{siteId}/drafts/{draftId}';
const REGENERATE_PATH = `${DRAFT_PATH}/regenerate`;

const editRoute = (group: Group, maxBodyBytes: number) =>
  createRoute({
    method: 'patch',
    path: groupPath(group, DRAFT_PATH),
    operationId: operationId(group, 'updateDraft'),
    tags: ['Drafts'],
    summary: 'Edit a draft',
    description:
      "Scope `outreach:write`; a pro (unexpired) or lifetime plan. Replaces the subject and body of the draft's current message " +
      "and advances the draft's and the message's `updatedAt`. Naturally idempotent: no key.",
    ...writeAccess('outreach:write', maxBodyBytes),
    request: {
      params: groupParams(group, { siteId: SiteIdParam, draftId: DraftIdParam }),
      body: jsonRequestBody(DraftEditBody),
    },
    responses: { 200: okResponse(Draft, 'The updated draft'), ...errorResponses('write') },
  });

const regenerateRoute = (group: Group, maxBodyBytes: number) =>
  createRoute({
    method: 'post',
    path: groupPath(group, REGENERATE_PATH),
    operationId: operationId(group, 'regenerateDraft'),
    tags: ['Drafts'],
    summary: 'Regenerate a draft',
    description:
      'Scope `outreach:write`; a pro (unexpired) or lifetime plan. The configured generator writes a new message grounded in the ' +
      "prospect, the contact, the site and `instruction`; it becomes the draft's current message, and `generationProvider`, " +
      '`generationModel` and `groundingSummary` say how it was made. Idempotent by the `Idempotency-Key` header (24 h): the same ' +
      'key and body replay the first answer with `Idempotent-Replayed: true`; another body is 422 IDEMPOTENCY_KEY_REUSED; while ' +
      'the first is running, 409 IDEMPOTENCY_CONFLICT.',
    ...writeAccess('outreach:write', maxBodyBytes),
    request: {
      params: groupParams(group, { siteId: SiteIdParam, draftId: DraftIdParam }),
      headers: RegenerateHeaders,
      body: jsonRequestBody(RegenerateBody),
    },
    responses: {
      200: okResponse(Draft, 'The draft with its new message', { replayable: true }),
      ...errorResponses('write'),
    },
  });

export function registerDraftEdits(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { store, clock, config, providers } = deps;
  const keys = new IdempotencyKeys(store, clock, deps.shutdown.signal, config.workers.leaseMs);
  const { maxBodyBytes } = config.limits;

  for (const group of GROUPS) {
    app.openapi(editRoute(group, maxBodyBytes), async (c) => {
      const params = c.req.valid('param');
      const { subject, body } = c.req.valid('json');
      const { site } = await requireCallerSite(c, store.db, group, params);
      const draft = await requireDraft(store.db, site.id, params.draftId);
      requireWritablePlan(c, clock);
      await inTransaction(store.db, async (trx) => {
        const now = isoAt(clock.now());
        // A draft without a message (possible in imported data) gets its first one.
        if (draft.message) await draftWrites.editMessage(trx, draft.id, draft.message.id, { subject, body }, now);
        else await draftWrites.addMessage(trx, draft.id, { subject, body }, now);
      });
      return c.json({ ok: true as const, data: await requireDraft(store.db, site.id, draft.id) }, 200);
    });

    app.openapi(regenerateRoute(group, maxBodyBytes), async (c) => {
      const params = c.req.valid('param');
      const { instruction } = c.req.valid('json');
      const key = c.req.valid('header')['idempotency-key'];
      const ids = { projectId: groupIdOf(group, params), siteId: params.siteId, draftId: params.draftId };
      return await keys.run(
        c,
        { operation: groupOperation('POST', REGENERATE_PATH), key, ids, body: { instruction } },
        {
          check: async () => {
            const { project, site } = await requireCallerSite(c, store.db, group, params);
            const draft: DraftRecord = await requireDraft(store.db, site.id, params.draftId);
            requireWritablePlan(c, clock);
            const [prospect, contact] = await Promise.all([
              requireProspect(store.db, project.id, draft.prospectId),
              requireContactRow(store.db, { projectId: project.id }, draft.contactId),
            ]);
            return { site, draft, prospect, contact };
          },
          prepare: ({ site, draft, prospect, contact }) =>
            providers.generator
              .generate({
                site: { name: site.name, domain: site.domain, url: site.url },
                prospect: {
                  title: prospect.title,
                  url: prospect.url,
                  domain: prospect.domain,
                  description: prospect.description,
                  contentExcerpt: prospect.contentExcerpt,
                  opportunityType: prospect.opportunityType,
                  suggestedPlacement: prospect.suggestedPlacement,
                },
                contact: {
                  fullName: contact.full_name,
                  email: contact.email,
                  role: contact.role,
                  company: contact.company,
                },
                purpose: draft.purpose,
                instruction,
                previous: draft.message ? { subject: draft.message.subject, body: draft.message.body } : null,
              })
              .catch(providerFailure(deps.logger, 'message generator')),
          commit: async (trx, { draft }, generated, now) => {
            const row = await draftWrites.addMessage(
              trx,
              draft.id,
              {
                subject: generated.subject,
                body: generated.body,
                personalization: JSON.stringify(generated.personalization),
                grounding_summary: generated.groundingSummary,
                generation_provider: generated.provider,
                generation_model: generated.model,
              },
              now,
            );
            return { status: 200, data: { ...draft, updatedAt: now, message: toDraftMessage(row) } };
          },
        },
      );
    });
  }
}
