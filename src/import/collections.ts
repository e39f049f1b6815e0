/**
 * The collections of the import document (spec/import-format.md), in import order: for each,
 * its record schema (`./rules.ts`), its parent checks and the named rows a valid record becomes
 * (`./writer.ts`).
 *
 * A record whose id exists is updated in place, never deleted and re-inserted (which would
 * cascade to its children); the child rows of a replaced record (checks, messages, queries) are
 * replaced with the document's. Thread counts and last-message times left out are computed from
 * the thread's `messages`. A token (which has no id in the format) is matched to a stored one by
 * its hash, so a re-import does not duplicate it.
 */
import type { z } from '@hono/zod-openapi';
import { TokenError, createToken, tokenIdByHash } from '../repos/tokens.js';
import { hashToken } from '../domain/tokens.js';
import {
  AccountImport,
  BacklinkImport,
  BlockedDomainImport,
  ContactImport,
  DiscoveryJobImport,
  DraftImport,
  EmailConnectionImport,
  EmailSenderImport,
  FieldError,
  KeywordImport,
  LeadImport,
  ProjectImport,
  ProspectImport,
  SiteImport,
  ThreadImport,
  TokenImport,
} from './rules.js';
import { type ImportContext, bool, json, type Row } from './writer.js';

/** `createdAt` and `updatedAt` of a record: each defaults to the other, then to `fallback` (the import time). */
function stamps(
  record: { createdAt?: string; updatedAt?: string },
  fallback: string,
): { created_at: string; updated_at: string } {
  const created = record.createdAt ?? record.updatedAt ?? fallback;
  return { created_at: created, updated_at: record.updatedAt ?? created };
}

function newestOf(messages: readonly { direction: string; sentAt: string | null }[], direction: string): string | null {
  let newest: string | null = null;
  for (const m of messages)
    if (m.direction === direction && m.sentAt && (newest === null || m.sentAt > newest)) newest = m.sentAt;
  return newest;
}

/** `sourceUrl` → `source_url`: a record field's column name. */
type SnakeCase<S extends string> = S extends `${infer C}${infer Rest}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<Rest>}`
  : S;

/**
 * The fields `fields` of `record` under their column names (camelCase → snake_case), values as
 * they are: the columns a record gives as is. The row they are spread into names every column of
 * its table (`Row<T>`), so the compiler still refuses a missing column or a value of the wrong type.
 */
function sameAs<R extends object, K extends keyof R & string>(
  record: R,
  fields: readonly K[],
): { [F in K as SnakeCase<F>]: R[F] } {
  const row: Record<string, unknown> = {};
  for (const field of fields) row[field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = record[field];
  return row as { [F in K as SnakeCase<F>]: R[F] };
}

/** One collection of the document: its record schema and how a valid record is written. */
export interface Collection<N extends string = string, S extends z.ZodType = z.ZodType> {
  /** The document key, e.g. `backlinks`. */
  name: N;
  schema: S;
  /** Checks the record's parents and writes its rows. @throws FieldError */
  write(record: z.output<S>, ctx: ImportContext): Promise<void>;
}

const collection = <N extends string, S extends z.ZodType>(
  name: N,
  schema: S,
  write: (record: z.output<S>, ctx: ImportContext) => Promise<void>,
): Collection<N, S> => ({ name, schema, write });

/** Every collection, in the order they are imported: parents before the records that use them. */
export const COLLECTIONS = [
  collection('accounts', AccountImport, async (r, ctx) => {
    await ctx.write('accounts', {
      id: r.id,
      ...sameAs(r, ['email', 'name', 'plan', 'planExpiresAt']),
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addAccount(r.id);
  }),

  collection('tokens', TokenImport, async (r, ctx) => {
    await ctx.parents.account(r.accountId, 'accountId');
    const hash = hashToken(r.token);
    // A token has no id of its own in the document: a re-import finds it by its hash.
    const existing = await tokenIdByHash(ctx.trx, hash);
    if (existing && r.id && existing !== r.id)
      throw new FieldError('token', `this token value is already stored as token "${existing}"`);
    try {
      await createToken(
        ctx.trx,
        {
          id: r.id ?? existing,
          accountId: r.accountId,
          name: r.name,
          scopes: r.scopes,
          expiresAt: r.expiresAt,
          revokedAt: r.revokedAt,
          rawToken: r.token,
        },
        ctx.nowIso,
      );
    } catch (error) {
      if (error instanceof TokenError) throw new FieldError(null, error.message);
      throw error;
    }
  }),

  collection('projects', ProjectImport, async (r, ctx) => {
    await ctx.parents.account(r.accountId, 'accountId');
    await ctx.write('projects', { id: r.id, account_id: r.accountId, name: r.name, ...stamps(r, ctx.nowIso) });
    ctx.parents.addProject(r.id, { accountId: r.accountId });
  }),

  collection('sites', SiteImport, async (r, ctx) => {
    const project = await ctx.parents.project(r.projectId, 'projectId');
    await ctx.write('sites', {
      id: r.id,
      ...sameAs(r, ['projectId', 'name', 'domain', 'url', 'status']),
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addSite(r.id, { projectId: r.projectId, accountId: project.accountId });
  }),

  collection('keywords', KeywordImport, async (r, ctx) => {
    const site = await ctx.parents.site(r.siteId, 'siteId');
    await ctx.write('keywords', {
      id: r.id,
      site_id: r.siteId,
      project_id: site.projectId,
      keyword: r.keyword,
      created_at: r.createdAt ?? ctx.nowIso,
    });
  }),

  collection('blockedDomains', BlockedDomainImport, async (r, ctx) => {
    await ctx.parents.project(r.projectId, 'projectId');
    await ctx.write('blocked_domains', {
      id: r.id,
      project_id: r.projectId,
      domain: r.domain,
      reason: r.reason,
      created_at: r.createdAt ?? ctx.nowIso,
    });
  }),

  collection('prospects', ProspectImport, async (r, ctx) => {
    const site = await ctx.parents.site(r.siteId, 'siteId');
    await ctx.write('prospects', {
      id: r.id,
      project_id: site.projectId,
      ...sameAs(r, [
        'siteId',
        'sourceJobId',
        'source',
        'status',
        'url',
        'normalizedUrl',
        'canonicalUrl',
        'domain',
        'title',
        'description',
        'contentExcerpt',
        'pageType',
        'opportunityType',
        'suggestedPlacement',
        'relevanceScore',
        'qualityScore',
        'riskScore',
        'domainAuthority',
        'estimatedMonthlyTraffic',
        'rankingPosition',
        'rankingKeyword',
        'crawlStatus',
        'lastCrawledAt',
      ]),
      contact_paths: json(r.contactPaths),
      match_reasons: json(r.matchReasons),
      risk_flags: json(r.riskFlags),
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addProspect(r.id, { siteId: r.siteId, projectId: site.projectId });
  }),

  collection('contacts', ContactImport, async (r, ctx) => {
    const prospect = await ctx.parents.prospect(r.prospectId, 'prospectId');
    await ctx.write('contacts', {
      id: r.id,
      site_id: prospect.siteId,
      project_id: prospect.projectId,
      ...sameAs(r, [
        'prospectId',
        'email',
        'fullName',
        'role',
        'roleCategory',
        'company',
        'source',
        'sourceProvider',
        'sourceUrl',
        'sourceReference',
        'status',
        'verificationStatus',
        'lastVerifiedAt',
        'suppressionReason',
      ]),
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addContact(r.id, { prospectId: r.prospectId, siteId: prospect.siteId });
  }),

  collection('drafts', DraftImport, async (r, ctx) => {
    const projectId = await ctx.parents.chain(r.siteId, r.prospectId, r.contactId);
    const draftStamps = stamps(r, ctx.nowIso);
    const m = r.message;
    const replaced = await ctx.write('drafts', {
      id: r.id,
      project_id: projectId,
      ...sameAs(r, ['siteId', 'prospectId', 'contactId', 'status', 'purpose', 'starredAt']),
      message_id: m?.id ?? null,
      ...draftStamps,
    });
    const messages: Row<'draft_messages'>[] = m
      ? [
          {
            id: m.id,
            draft_id: r.id,
            ...sameAs(m, ['subject', 'body', 'groundingSummary', 'generationProvider', 'generationModel']),
            personalization: json(m.personalization),
            ...stamps(m, draftStamps.created_at),
          },
        ]
      : [];
    await ctx.writeChildren('draftMessages', 'draft_messages', r.id, replaced, messages);
  }),

  collection('threads', ThreadImport, async (r, ctx) => {
    const projectId = await ctx.parents.chain(r.siteId, r.prospectId, r.contactId);
    const threadStamps = stamps(r, ctx.nowIso);
    const messages = r.messages;
    const replaced = await ctx.write('threads', {
      id: r.id,
      project_id: projectId,
      ...sameAs(r, ['siteId', 'prospectId', 'contactId', 'status', 'outcome', 'classification']),
      provider_thread_id: r.threadId,
      inbound_count: r.inboundCount ?? messages.filter((m) => m.direction === 'inbound').length,
      outbound_count: r.outboundCount ?? messages.filter((m) => m.direction === 'outbound').length,
      last_inbound_at: r.lastInboundAt === undefined ? newestOf(messages, 'inbound') : r.lastInboundAt,
      last_outbound_at: r.lastOutboundAt === undefined ? newestOf(messages, 'outbound') : r.lastOutboundAt,
      ...threadStamps,
    });
    await ctx.writeChildren(
      'threadMessages',
      'thread_messages',
      r.id,
      replaced,
      messages.map((m) => {
        const created = m.createdAt ?? m.sentAt ?? threadStamps.created_at;
        return {
          id: m.id,
          thread_id: r.id,
          ...sameAs(m, ['direction', 'status', 'fromEmail', 'subject', 'body', 'sentAt', 'attempts']),
          to_emails: json(m.toEmails),
          cc_emails: json(m.ccEmails),
          sender_id: null,
          next_attempt_at: null,
          last_error: null,
          created_at: created,
          updated_at: created,
          inbound_message_id: null,
        };
      }),
    );
  }),

  collection('emailConnections', EmailConnectionImport, async (r, ctx) => {
    const site = await ctx.parents.site(r.siteId, 'siteId');
    await ctx.write('email_connections', {
      id: r.id,
      project_id: site.projectId,
      ...sameAs(r, ['siteId', 'provider', 'status', 'accountEmail', 'providerRegion', 'connectedAt', 'lastTestedAt']),
      has_error: bool(r.hasError),
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addConnection(r.id, { siteId: r.siteId });
  }),

  collection('emailSenders', EmailSenderImport, async (r, ctx) => {
    const site = await ctx.parents.site(r.siteId, 'siteId');
    await ctx.parents.connectionOfSite(r.connectionId, r.siteId);
    await ctx.write('email_senders', {
      id: r.id,
      project_id: site.projectId,
      ...sameAs(r, [
        'siteId',
        'connectionId',
        'source',
        'status',
        'verificationStatus',
        'displayName',
        'email',
        'replyToEmail',
        'dailyLimit',
        'healthStatus',
        'warmupStatus',
        'healthScore',
      ]),
      ...stamps(r, ctx.nowIso),
    });
  }),

  collection('discoveryJobs', DiscoveryJobImport, async (r, ctx) => {
    const site = await ctx.parents.site(r.siteId, 'siteId');
    const replaced = await ctx.write('discovery_jobs', {
      id: r.id,
      project_id: site.projectId,
      ...sameAs(r, [
        'siteId',
        'type',
        'status',
        'subjectType',
        'subjectId',
        'currentAttempt',
        'maxAttempts',
        'scheduledAt',
        'canceledAt',
        'completedAt',
      ]),
      last_error: null,
      ...stamps(r, ctx.nowIso),
    });
    await ctx.writeChildren(
      'discoveryQueries',
      'discovery_queries',
      r.id,
      replaced,
      r.queries.map((q) => ({
        id: q.id,
        job_id: r.id,
        ...sameAs(q, [
          'query',
          'status',
          'opportunityType',
          'rawResultCount',
          'uniqueCandidateCount',
          'qualifiedCount',
          'startedAt',
          'completedAt',
          'errorCode',
        ]),
        has_error: bool(q.hasError),
      })),
    );
  }),

  collection('leads', LeadImport, async (r, ctx) => {
    const site = await ctx.parents.site(r.siteId, 'siteId');
    await ctx.write('leads', {
      id: r.id,
      project_id: site.projectId,
      ...sameAs(r, [
        'siteId',
        'platform',
        'sourceContainer',
        'kind',
        'title',
        'body',
        'authorHandle',
        'permalink',
        'score',
        'tier',
        'leadType',
        'sentiment',
        'evidenceQuote',
        'reason',
        'stage',
        'feedback',
        'postedAt',
        'firstSeenAt',
      ]),
      dismissed: bool(r.dismissed),
      redacted: bool(r.redacted),
      created_at: r.createdAt ?? r.firstSeenAt ?? r.postedAt ?? ctx.nowIso,
    });
  }),

  collection('backlinks', BacklinkImport, async (r, ctx) => {
    const site = await ctx.parents.site(r.siteId, 'siteId');
    const replaced = await ctx.write('backlinks', {
      id: r.id,
      project_id: site.projectId,
      ...sameAs(r, [
        'siteId',
        'source',
        'acquisitionOrigin',
        'sourceUrl',
        'targetUrl',
        'category',
        'status',
        'observedAnchor',
        'lastCheckedAt',
      ]),
      ...stamps(r, ctx.nowIso),
    });
    await ctx.writeChildren(
      'backlinkChecks',
      'backlink_checks',
      r.id,
      replaced,
      r.checks.map((c) => ({
        id: c.id,
        backlink_id: r.id,
        ...sameAs(c, [
          'status',
          'requestedSourceUrl',
          'finalSourceUrl',
          'httpStatus',
          'observedTargetUrl',
          'observedAnchor',
          'checkedAt',
        ]),
        target_found: bool(c.targetFound),
        observed_rel: json(c.observedRel),
        has_error: bool(c.hasError),
      })),
    );
  }),
] as const;

/** The document keys, in import order. */
export const COLLECTION_NAMES = COLLECTIONS.map((c) => c.name);

type Loose<T> = T extends readonly (infer E)[]
  ? Loose<E>[]
  : T extends Record<string, unknown>
    ? { [K in keyof T]?: Loose<T[K]> | null }
    : T;

/** One record as a document may give it: any field may be left out (it then takes its default). */
export type ImportRecord<S extends z.ZodType> = Loose<z.input<S>>;

/**
 * The import document's type, for code that builds one (the demo seed, tests). Every
 * collection is optional; a document is validated at import all the same.
 */
export type ImportDocument = {
  [C in (typeof COLLECTIONS)[number] as C['name']]?: ImportRecord<C['schema']>[];
};
