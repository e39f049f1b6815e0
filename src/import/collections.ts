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
import type { Store } from '../db/connection.js';
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
  Parents,
  ProjectImport,
  ProspectImport,
  SiteImport,
  ThreadImport,
  TokenImport,
} from './rules.js';
import { RowWriter, bool, json, type ChildTable, type ImportTable, type Row } from './writer.js';

/**
 * State of one import: the parents seen so far (`parents`), the row writers with their prepared
 * statements (made once, reused for every row) and the child rows written.
 */
export class ImportContext {
  readonly parents: Parents;
  private readonly rows: RowWriter;
  /** Child rows written, by child collection (`backlinkChecks`, …). */
  readonly childCounts: Record<string, number> = {};

  constructor(
    readonly store: Store,
    /** The import time (ISO, UTC): default `createdAt`, token activity. */
    readonly nowIso: string,
  ) {
    this.parents = new Parents(store.sqlite);
    this.rows = new RowWriter(store.sqlite);
  }

  /** @returns true when a row with this id existed and was replaced. */
  write<T extends ImportTable>(table: T, row: Row<T>): boolean {
    return this.rows.write(table, row);
  }

  /**
   * Writes the child rows of a record written as `replaced` (see `write`): a replaced record's
   * old children go first. Counts them under `name` in the summary.
   */
  writeChildren<T extends ChildTable>(
    name: string,
    table: T,
    parentId: string,
    replaced: boolean,
    rows: readonly Row<T>[],
  ): void {
    if (replaced) this.rows.clearChildren(table, parentId);
    for (const row of rows) this.rows.write(table, row);
    if (rows.length > 0) this.childCounts[name] = (this.childCounts[name] ?? 0) + rows.length;
  }
}

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

/** One collection of the document: its record schema and how a valid record is written. */
export interface Collection<N extends string = string, S extends z.ZodType = z.ZodType> {
  /** The document key, e.g. `backlinks`. */
  name: N;
  schema: S;
  /** Checks the record's parents and writes its rows. @throws FieldError */
  write(record: z.output<S>, ctx: ImportContext): void;
}

const collection = <N extends string, S extends z.ZodType>(
  name: N,
  schema: S,
  write: (record: z.output<S>, ctx: ImportContext) => void,
): Collection<N, S> => ({ name, schema, write });

/** Every collection, in the order they are imported: parents before the records that use them. */
export const COLLECTIONS = [
  collection('accounts', AccountImport, (r, ctx) => {
    ctx.write('accounts', {
      id: r.id,
      email: r.email,
      name: r.name,
      plan: r.plan,
      plan_expires_at: r.planExpiresAt,
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addAccount(r.id);
  }),

  collection('tokens', TokenImport, (r, ctx) => {
    ctx.parents.account(r.accountId, 'accountId');
    const hash = hashToken(r.token);
    // A token has no id of its own in the document: a re-import finds it by its hash.
    const existing = tokenIdByHash(ctx.store, hash);
    if (existing && r.id && existing !== r.id)
      throw new FieldError('token', `this token value is already stored as token "${existing}"`);
    try {
      createToken(
        ctx.store,
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

  collection('projects', ProjectImport, (r, ctx) => {
    ctx.parents.account(r.accountId, 'accountId');
    ctx.write('projects', { id: r.id, account_id: r.accountId, name: r.name, ...stamps(r, ctx.nowIso) });
    ctx.parents.addProject(r.id, { accountId: r.accountId });
  }),

  collection('sites', SiteImport, (r, ctx) => {
    const project = ctx.parents.project(r.projectId, 'projectId');
    ctx.write('sites', {
      id: r.id,
      project_id: r.projectId,
      name: r.name,
      domain: r.domain,
      url: r.url,
      status: r.status,
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addSite(r.id, { projectId: r.projectId, accountId: project.accountId });
  }),

  collection('keywords', KeywordImport, (r, ctx) => {
    const site = ctx.parents.site(r.siteId, 'siteId');
    ctx.write('keywords', {
      id: r.id,
      site_id: r.siteId,
      project_id: site.projectId,
      keyword: r.keyword,
      created_at: r.createdAt ?? ctx.nowIso,
    });
  }),

  collection('blockedDomains', BlockedDomainImport, (r, ctx) => {
    ctx.parents.project(r.projectId, 'projectId');
    ctx.write('blocked_domains', {
      id: r.id,
      project_id: r.projectId,
      domain: r.domain,
      reason: r.reason,
      created_at: r.createdAt ?? ctx.nowIso,
    });
  }),

  collection('prospects', ProspectImport, (r, ctx) => {
    const site = ctx.parents.site(r.siteId, 'siteId');
    ctx.write('prospects', {
      id: r.id,
      site_id: r.siteId,
      project_id: site.projectId,
      source_job_id: r.sourceJobId,
      source: r.source,
      status: r.status,
      url: r.url,
      normalized_url: r.normalizedUrl,
      canonical_url: r.canonicalUrl,
      domain: r.domain,
      title: r.title,
      description: r.description,
      content_excerpt: r.contentExcerpt,
      page_type: r.pageType,
      opportunity_type: r.opportunityType,
      suggested_placement: r.suggestedPlacement,
      contact_paths: json(r.contactPaths),
      relevance_score: r.relevanceScore,
      quality_score: r.qualityScore,
      risk_score: r.riskScore,
      match_reasons: json(r.matchReasons),
      risk_flags: json(r.riskFlags),
      domain_authority: r.domainAuthority,
      estimated_monthly_traffic: r.estimatedMonthlyTraffic,
      ranking_position: r.rankingPosition,
      ranking_keyword: r.rankingKeyword,
      crawl_status: r.crawlStatus,
      last_crawled_at: r.lastCrawledAt,
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addProspect(r.id, { siteId: r.siteId, projectId: site.projectId });
  }),

  collection('contacts', ContactImport, (r, ctx) => {
    const prospect = ctx.parents.prospect(r.prospectId, 'prospectId');
    ctx.write('contacts', {
      id: r.id,
      prospect_id: r.prospectId,
      site_id: prospect.siteId,
      project_id: prospect.projectId,
      email: r.email,
      full_name: r.fullName,
      role: r.role,
      role_category: r.roleCategory,
      company: r.company,
      source: r.source,
      source_provider: r.sourceProvider,
      source_url: r.sourceUrl,
      source_reference: r.sourceReference,
      status: r.status,
      verification_status: r.verificationStatus,
      last_verified_at: r.lastVerifiedAt,
      suppression_reason: r.suppressionReason,
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addContact(r.id, { prospectId: r.prospectId, siteId: prospect.siteId });
  }),

  collection('drafts', DraftImport, (r, ctx) => {
    const projectId = ctx.parents.chain(r.siteId, r.prospectId, r.contactId);
    const draftStamps = stamps(r, ctx.nowIso);
    const m = r.message;
    const replaced = ctx.write('drafts', {
      id: r.id,
      site_id: r.siteId,
      project_id: projectId,
      prospect_id: r.prospectId,
      contact_id: r.contactId,
      message_id: m?.id ?? null,
      status: r.status,
      purpose: r.purpose,
      starred_at: r.starredAt,
      ...draftStamps,
    });
    const messages: Row<'draft_messages'>[] = m
      ? [
          {
            id: m.id,
            draft_id: r.id,
            subject: m.subject,
            body: m.body,
            personalization: json(m.personalization),
            grounding_summary: m.groundingSummary,
            generation_provider: m.generationProvider,
            generation_model: m.generationModel,
            ...stamps(m, draftStamps.created_at),
          },
        ]
      : [];
    ctx.writeChildren('draftMessages', 'draft_messages', r.id, replaced, messages);
  }),

  collection('threads', ThreadImport, (r, ctx) => {
    const projectId = ctx.parents.chain(r.siteId, r.prospectId, r.contactId);
    const threadStamps = stamps(r, ctx.nowIso);
    const messages = r.messages;
    const replaced = ctx.write('threads', {
      id: r.id,
      site_id: r.siteId,
      project_id: projectId,
      prospect_id: r.prospectId,
      contact_id: r.contactId,
      provider_thread_id: r.threadId,
      status: r.status,
      outcome: r.outcome,
      classification: r.classification,
      inbound_count: r.inboundCount ?? messages.filter((m) => m.direction === 'inbound').length,
      outbound_count: r.outboundCount ?? messages.filter((m) => m.direction === 'outbound').length,
      last_inbound_at: r.lastInboundAt === undefined ? newestOf(messages, 'inbound') : r.lastInboundAt,
      last_outbound_at: r.lastOutboundAt === undefined ? newestOf(messages, 'outbound') : r.lastOutboundAt,
      ...threadStamps,
    });
    ctx.writeChildren(
      'threadMessages',
      'thread_messages',
      r.id,
      replaced,
      messages.map((m) => {
        const created = m.createdAt ?? m.sentAt ?? threadStamps.created_at;
        return {
          id: m.id,
          thread_id: r.id,
          direction: m.direction,
          status: m.status,
          from_email: m.fromEmail,
          to_emails: json(m.toEmails),
          cc_emails: json(m.ccEmails),
          subject: m.subject,
          body: m.body,
          sent_at: m.sentAt,
          sender_id: null,
          attempts: m.attempts,
          next_attempt_at: null,
          last_error: null,
          created_at: created,
          updated_at: created,
        };
      }),
    );
  }),

  collection('emailConnections', EmailConnectionImport, (r, ctx) => {
    const site = ctx.parents.site(r.siteId, 'siteId');
    ctx.write('email_connections', {
      id: r.id,
      site_id: r.siteId,
      project_id: site.projectId,
      provider: r.provider,
      status: r.status,
      account_email: r.accountEmail,
      provider_region: r.providerRegion,
      has_error: bool(r.hasError),
      connected_at: r.connectedAt,
      last_tested_at: r.lastTestedAt,
      ...stamps(r, ctx.nowIso),
    });
    ctx.parents.addConnection(r.id, { siteId: r.siteId });
  }),

  collection('emailSenders', EmailSenderImport, (r, ctx) => {
    const site = ctx.parents.site(r.siteId, 'siteId');
    ctx.parents.connectionOfSite(r.connectionId, r.siteId);
    ctx.write('email_senders', {
      id: r.id,
      site_id: r.siteId,
      project_id: site.projectId,
      connection_id: r.connectionId,
      source: r.source,
      status: r.status,
      verification_status: r.verificationStatus,
      display_name: r.displayName,
      email: r.email,
      reply_to_email: r.replyToEmail,
      daily_limit: r.dailyLimit,
      health_status: r.healthStatus,
      warmup_status: r.warmupStatus,
      health_score: r.healthScore,
      ...stamps(r, ctx.nowIso),
    });
  }),

  collection('discoveryJobs', DiscoveryJobImport, (r, ctx) => {
    const site = ctx.parents.site(r.siteId, 'siteId');
    const replaced = ctx.write('discovery_jobs', {
      id: r.id,
      site_id: r.siteId,
      project_id: site.projectId,
      type: r.type,
      status: r.status,
      subject_type: r.subjectType,
      subject_id: r.subjectId,
      current_attempt: r.currentAttempt,
      max_attempts: r.maxAttempts,
      scheduled_at: r.scheduledAt,
      canceled_at: r.canceledAt,
      completed_at: r.completedAt,
      last_error: null,
      ...stamps(r, ctx.nowIso),
    });
    ctx.writeChildren(
      'discoveryQueries',
      'discovery_queries',
      r.id,
      replaced,
      r.queries.map((q) => ({
        id: q.id,
        job_id: r.id,
        query: q.query,
        status: q.status,
        opportunity_type: q.opportunityType,
        raw_result_count: q.rawResultCount,
        unique_candidate_count: q.uniqueCandidateCount,
        qualified_count: q.qualifiedCount,
        started_at: q.startedAt,
        completed_at: q.completedAt,
        error_code: q.errorCode,
        has_error: bool(q.hasError),
      })),
    );
  }),

  collection('leads', LeadImport, (r, ctx) => {
    const site = ctx.parents.site(r.siteId, 'siteId');
    ctx.write('leads', {
      id: r.id,
      site_id: r.siteId,
      project_id: site.projectId,
      platform: r.platform,
      source_container: r.sourceContainer,
      kind: r.kind,
      title: r.title,
      body: r.body,
      author_handle: r.authorHandle,
      permalink: r.permalink,
      score: r.score,
      tier: r.tier,
      lead_type: r.leadType,
      sentiment: r.sentiment,
      evidence_quote: r.evidenceQuote,
      reason: r.reason,
      stage: r.stage,
      feedback: r.feedback,
      dismissed: bool(r.dismissed),
      redacted: bool(r.redacted),
      posted_at: r.postedAt,
      first_seen_at: r.firstSeenAt,
      created_at: r.createdAt ?? r.firstSeenAt ?? r.postedAt ?? ctx.nowIso,
    });
  }),

  collection('backlinks', BacklinkImport, (r, ctx) => {
    const site = ctx.parents.site(r.siteId, 'siteId');
    const replaced = ctx.write('backlinks', {
      id: r.id,
      site_id: r.siteId,
      project_id: site.projectId,
      source: r.source,
      acquisition_origin: r.acquisitionOrigin,
      source_url: r.sourceUrl,
      target_url: r.targetUrl,
      category: r.category,
      status: r.status,
      observed_anchor: r.observedAnchor,
      last_checked_at: r.lastCheckedAt,
      ...stamps(r, ctx.nowIso),
    });
    ctx.writeChildren(
      'backlinkChecks',
      'backlink_checks',
      r.id,
      replaced,
      r.checks.map((c) => ({
        id: c.id,
        backlink_id: r.id,
        status: c.status,
        requested_source_url: c.requestedSourceUrl,
        final_source_url: c.finalSourceUrl,
        http_status: c.httpStatus,
        target_found: bool(c.targetFound),
        observed_target_url: c.observedTargetUrl,
        observed_anchor: c.observedAnchor,
        observed_rel: json(c.observedRel),
        has_error: bool(c.hasError),
        checked_at: c.checkedAt,
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
