/**
 * Contact writes (contract §4 "Find a contact for a prospect", "Verify a contact address";
 * decisions.md §7, §10), scope `contacts:write`, both path forms, idempotent by `idempotencyKey`.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { GROUPS, type Group, groupIdOf, groupParams, groupPath, operationId } from '../http/groups.js';
import { IdempotencyKeys, groupOperation, providerFailure } from '../http/middleware/idempotency.js';
import { writeAccess } from '../http/middleware/json-body.js';
import { requireWritablePlan } from '../http/middleware/plan.js';
import { requireContactRow, toContact, setContactVerification } from '../repos/contacts.js';
import { requireProspect } from '../repos/prospects.js';
import { errorResponses, okResponse } from '../schemas/common.js';
import { Contact } from '../schemas/resources.js';
import {
  ContactDiscoveryResult,
  ContactIdParam,
  IdempotentBody,
  ProspectIdParam,
  SiteIdParam,
  jsonRequestBody,
} from '../schemas/writes.js';
import { contactDiscovery, prospectFacts } from '../workers/contact-discovery.js';
import { requireCallerProject, requireCallerSite } from './lookups.js';

const DISCOVERY_PATH = '/prospects/{prospectId}/contact-discovery';
const VERIFY_PATH = '/sites/{siteId}/contacts/{contactId}/verify';

const discoveryRoute = (group: Group, maxBodyBytes: number) =>
  createRoute({
    method: 'post',
    path: groupPath(group, DISCOVERY_PATH),
    operationId: operationId(group, 'discoverContact'),
    tags: ['Contacts'],
    summary: 'Find a contact for a prospect',
    description:
      'Scope `contacts:write`; a pro (unexpired) or lifetime plan. Idempotent by `idempotencyKey` (24 h): a retry with the same ' +
      'key and body replays the first answer with `Idempotent-Replayed: true`. The configured contact finder either answers at ' +
      'once — `created` (a new contact), `existing` (the prospect already had that address), `not_found` — or, when it must ' +
      'work outside the service (crawling), answers 202 `queued` with a `contact_discovery` job (subjectType `prospect`) that ' +
      "is listed with the site's discovery jobs and ends `completed` (the contact is then among the prospect's contacts) or `failed`.",
    ...writeAccess('contacts:write', maxBodyBytes),
    request: { params: groupParams(group, { prospectId: ProspectIdParam }), body: jsonRequestBody(IdempotentBody) },
    responses: {
      200: okResponse(ContactDiscoveryResult, 'Outcome `created`, `existing` or `not_found`', { replayable: true }),
      202: okResponse(ContactDiscoveryResult, 'Outcome `queued`: the search continues as `job`', { replayable: true }),
      ...errorResponses('write'),
    },
  });

const verifyRoute = (group: Group, maxBodyBytes: number) =>
  createRoute({
    method: 'post',
    path: groupPath(group, VERIFY_PATH),
    operationId: operationId(group, 'verifyContact'),
    tags: ['Contacts'],
    summary: 'Verify a contact address',
    description:
      'Scope `contacts:write`; a pro (unexpired) or lifetime plan. Idempotent by `idempotencyKey` (24 h). Asks the configured ' +
      'verifier and stores its verdict: `verificationStatus` becomes `valid`, `invalid`, `risky` or `unknown`, and `lastVerifiedAt` ' +
      'is set. The contact must belong to the site (else 404).',
    ...writeAccess('contacts:write', maxBodyBytes),
    request: {
      params: groupParams(group, { siteId: SiteIdParam, contactId: ContactIdParam }),
      body: jsonRequestBody(IdempotentBody),
    },
    responses: {
      200: okResponse(Contact, 'The contact with its new verification status', { replayable: true }),
      ...errorResponses('write'),
    },
  });

export function registerContactActions(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { store, clock, config, providers } = deps;
  const keys = new IdempotencyKeys(store, clock, deps.shutdown.signal, config.workers.leaseMs);
  const { maxBodyBytes } = config.limits;

  for (const group of GROUPS) {
    app.openapi(discoveryRoute(group, maxBodyBytes), async (c) => {
      const params = c.req.valid('param');
      const body = c.req.valid('json');
      const finder = providers.contactFinder;
      const request = {
        operation: groupOperation('POST', DISCOVERY_PATH),
        key: body.idempotencyKey,
        ids: { projectId: groupIdOf(group, params), prospectId: params.prospectId },
        body,
      };
      const response = await keys.run(c, request, {
        check: async () => {
          const project = await requireCallerProject(c, store.db, group, params);
          const prospect = await requireProspect(store.db, project.id, params.prospectId);
          requireWritablePlan(c, clock);
          return {
            place: { id: prospect.id, siteId: prospect.siteId, projectId: project.id },
            facts: prospectFacts(prospect),
          };
        },
        // A finder that must work outside the service (crawling) defers: the search becomes a job.
        prepare: async ({ facts }) =>
          finder.defers(facts) ? null : await finder.find(facts).catch(providerFailure(deps.logger, 'contact finder')),
        commit: async (trx, { place }, candidates, now) =>
          candidates === null
            ? {
                status: 202,
                data: {
                  outcome: 'queued' as const,
                  contact: null,
                  job: await contactDiscovery.enqueue(trx, place, now),
                },
              }
            : {
                status: 200,
                data: { ...(await contactDiscovery.save(trx, place, candidates, finder.name, now)), job: null },
              },
      });
      if (response.status === 202) deps.notify?.('discovery');
      return response;
    });

    app.openapi(verifyRoute(group, maxBodyBytes), async (c) => {
      const params = c.req.valid('param');
      const body = c.req.valid('json');
      const ids = { projectId: groupIdOf(group, params), siteId: params.siteId, contactId: params.contactId };
      return await keys.run(
        c,
        { operation: groupOperation('POST', VERIFY_PATH), key: body.idempotencyKey, ids, body },
        {
          check: async () => {
            const { project, site } = await requireCallerSite(c, store.db, group, params);
            const contact = await requireContactRow(
              store.db,
              { projectId: project.id, siteId: site.id },
              params.contactId,
            );
            requireWritablePlan(c, clock);
            return contact;
          },
          prepare: (contact) =>
            providers.verifier.verify(contact.email).catch(providerFailure(deps.logger, 'address verifier')),
          commit: async (trx, contact, verdict, now) => {
            // The contact was read in `check` inside the caller's project: it is there.
            return {
              status: 200,
              data: toContact((await setContactVerification(trx, contact.id, verdict.status, now))!),
            };
          },
        },
      );
    });
  }
}
