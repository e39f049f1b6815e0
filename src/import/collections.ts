/**
 * The collections of the import document (spec/import-format.md): each one's record rules and
 * how a validated record becomes rows.
 *
 * Record rules are the contract's resource shapes (`src/schemas/resources.ts`), relaxed for a
 * hand-written document: a nullable field left out is null, an array or object left out is
 * empty, a boolean left out is false, `createdAt`/`updatedAt` default to each other (then to the
 * import time); date-times (with seconds, and `Z` or an offset) are stored in UTC with milliseconds;
 * URL fields must be http(s) URLs and email fields email addresses. Enumerated fields take only
 * their listed values. Fields the importer does not know (e.g. a draft's `prospect` object, a
 * backlink's `hasCheckError`) are ignored, so an API response can be fed back in.
 *
 * A record whose id exists is updated in place (`TableWriter`), never `INSERT OR REPLACE` (which
 * deletes the old row and so cascades to its children); the child rows of a replaced record (checks,
 * messages, queries) are replaced with the document's. Thread counts and last-message times
 * left out are computed from the thread's `messages`. A token (which has no id in the format) is
 * matched to a stored one by its hash, so a re-import does not duplicate it.
 */
import { z } from '@hono/zod-openapi';
import type { SqliteStatement, Store } from '../db/connection.js';
import { SCOPES } from '../http/middleware/scope.js';
import { TokenError, createToken } from '../repos/tokens.js';
import { DateTime, Email, Id, Uri } from '../schemas/common.js';
import { MESSAGE_STATUSES } from '../schemas/enums.js';
import { Me } from '../schemas/me.js';
import { Project, Site } from '../schemas/projects.js';
import {
  Backlink, BacklinkCheck, BlockedDomain, Contact, DiscoveryJob, DiscoveryQuery, Draft, EmailConnection, EmailSender,
  Keyword, Lead, Prospect, Thread, ThreadMessage,
} from '../schemas/resources.js';
import { hashToken, isWellFormedToken } from '../tokens.js';

// ---- field rules -------------------------------------------------------------------------------

/** A field's own message, except for a missing field (which the importer reports as "is required"). */
const unlessMissing = (message: string) => (issue: { input?: unknown }) => (issue.input === undefined ? undefined : message);

const CANONICAL_DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** UTC with milliseconds; a value the format check refused is left for that check to report. */
function toUtc(value: string): string {
  if (CANONICAL_DATE_TIME.test(value)) return value;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : new Date(ms).toISOString();
}

/**
 * ISO 8601 date-time with `Z` or an offset → UTC with milliseconds. (`overwrite`, not
 * `transform`: it keeps the schema a plain string check, several times cheaper per record,
 * which matters for a million backlinks.)
 */
export const ImportDateTime = z
  .iso.datetime({ offset: true, error: unlessMissing('must be an ISO 8601 date-time with an offset, e.g. 2026-03-01T09:30:00Z') })
  .overwrite(toUtc);
export const ImportUrl = z.url({ protocol: /^https?$/, error: unlessMissing('must be an http(s) URL') });
export const ImportEmail = z.email({ error: unlessMissing('must be an email address') });

const int = z.number().int();
const count = int.min(0, 'must not be negative');
const emptyArray = <T extends z.ZodArray>(schema: T) => schema.default([] as unknown as z.util.NoUndefined<z.output<T>>);

function relaxField(key: string, field: z.ZodType): z.ZodType {
  const nullable = field instanceof z.ZodNullable;
  const inner = (nullable ? (field as z.ZodNullable<z.ZodType>).unwrap() : field) as z.ZodType;
  let out: z.ZodType = inner;
  if (inner === DateTime || (key.endsWith('At') && inner instanceof z.ZodString)) out = ImportDateTime;
  else if (inner === Uri) out = ImportUrl;
  else if (inner === Email) out = ImportEmail;
  else if (inner instanceof z.ZodArray && inner.element === Email) out = z.array(ImportEmail);
  else if (inner instanceof z.ZodObject) out = relaxed(inner);

  // `.default()` rather than `.nullish().transform()`: no pipe, so cheaper per record.
  if (out instanceof z.ZodArray) return emptyArray(out);
  if (out instanceof z.ZodRecord) return out.default({});
  if (nullable) return out.nullable().default(null);
  if (out instanceof z.ZodBoolean) return out.default(false);
  if (key === 'createdAt' || key === 'updatedAt') return out.optional();
  return out;
}

/**
 * A resource shape relaxed for import (see the file comment). Typed as the resource itself: the
 * parsed record has the resource's output types (with `createdAt`/`updatedAt` possibly absent).
 */
function relaxed<S extends z.ZodRawShape>(schema: z.ZodObject<S>): z.ZodObject<S> {
  const shape = Object.fromEntries(Object.entries(schema.shape).map(([key, field]) => [key, relaxField(key, field as z.ZodType)]));
  return z.object(shape) as unknown as z.ZodObject<S>;
}

// ---- record rules ------------------------------------------------------------------------------

const AccountRecord = relaxed(Me.shape.owner.extend({ updatedAt: DateTime }));

const TokenRecord = z.object({
  id: Id.optional(),
  accountId: Id,
  name: z.string().min(1),
  scopes: emptyArray(z.array(z.enum(SCOPES))),
  token: z
    .string()
    .min(32, 'must be at least 32 characters')
    .refine(isWellFormedToken, 'must be 32 to 512 printable characters without spaces (an oapi_ token needs its valid checksum)'),
  expiresAt: ImportDateTime.nullable().default(null),
  revokedAt: ImportDateTime.nullable().default(null),
});

const ProjectRecord = relaxed(Project.omit({ siteCount: true })).extend({ accountId: Id });
const SiteRecord = relaxed(Site).extend({ projectId: Id, status: z.string().default('active') });
const KeywordRecord = relaxed(Keyword);
const BlockedDomainRecord = relaxed(BlockedDomain).extend({ projectId: Id });
const ProspectRecord = relaxed(Prospect);
const ContactRecord = relaxed(Contact).extend({ prospectId: Id });
const DraftRecord = relaxed(Draft.omit({ prospect: true, contact: true })).extend({ siteId: Id });

const ThreadMessageRecord = relaxed(ThreadMessage).extend({
  status: z.enum(MESSAGE_STATUSES).default('sent'),
  attempts: count.default(0),
});
const ThreadRecord = relaxed(Thread.omit({ contact: true, prospect: true })).extend({
  siteId: Id,
  prospectId: Id,
  createdAt: ImportDateTime.optional(),
  // Left out: counted from `messages` (and the newest message time of each direction).
  inboundCount: count.optional(),
  outboundCount: count.optional(),
  lastInboundAt: ImportDateTime.nullable().optional(),
  lastOutboundAt: ImportDateTime.nullable().optional(),
  messages: emptyArray(z.array(ThreadMessageRecord)),
});

const EmailConnectionRecord = relaxed(EmailConnection).extend({ siteId: Id });
const EmailSenderRecord = relaxed(EmailSender).extend({ siteId: Id });

const DiscoveryQueryRecord = relaxed(DiscoveryQuery).extend({
  rawResultCount: count.default(0),
  uniqueCandidateCount: count.default(0),
  qualifiedCount: count.default(0),
});
const DiscoveryJobRecord = relaxed(DiscoveryJob).extend({
  siteId: Id,
  currentAttempt: count.default(0),
  maxAttempts: int.min(1, 'must be at least 1').default(3),
  queries: emptyArray(z.array(DiscoveryQueryRecord)),
});

const LeadRecord = relaxed(Lead).extend({ createdAt: ImportDateTime.optional() });
const BacklinkRecord = relaxed(Backlink).extend({ checks: emptyArray(z.array(relaxed(BacklinkCheck))) });

// ---- the import context: prepared statements and the parents seen so far ----------------------

/** A refusal of one field (or, with `field` null, of the whole record). */
export class FieldError extends Error {
  constructor(
    readonly field: string | null,
    message: string,
  ) {
    super(message);
  }
}

interface ProjectRef {
  accountId: string;
}
interface SiteRef {
  projectId: string;
  accountId: string;
}
interface ProspectRef {
  siteId: string;
  projectId: string;
}
interface ContactRef {
  prospectId: string;
  siteId: string;
}
interface ConnectionRef {
  siteId: string;
}

const insertSql = (table: string, columns: readonly string[], onConflict = '') =>
  `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})${onConflict}`;
const updateSql = (table: string, columns: readonly string[]) =>
  `UPDATE ${table} SET ${columns.slice(1).map((c) => `${c} = ?`).join(', ')} WHERE id = ?`;

/** A primary-key clash, as better-sqlite3 and node:sqlite report it. */
const isIdConflict = (error: unknown) =>
  (error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || /UNIQUE constraint failed: \w+\.id$/.test((error as Error).message ?? '');

/**
 * Writes rows of one table, inserting or replacing by id. A plain INSERT is the fastest way in
 * while ids are new (the usual case: a first import); after the first clash with an existing id
 * the table switches to `INSERT … ON CONFLICT (id) DO NOTHING` followed, for an existing id, by
 * an UPDATE of every column. Never `INSERT OR REPLACE`: that deletes the old row, and with it
 * (ON DELETE CASCADE) every record below it.
 */
class TableWriter {
  private insert: SqliteStatement;
  private update: SqliteStatement | undefined;
  private clashed = false;

  constructor(
    private readonly sqlite: Store['sqlite'],
    private readonly table: Table,
  ) {
    this.insert = sqlite.prepare(insertSql(table, COLUMNS[table]));
  }

  /** @returns true when a row with this id existed and was replaced. */
  write(values: unknown[]): boolean {
    if (!this.clashed) {
      try {
        this.insert.run(values);
        return false;
      } catch (error) {
        if (!isIdConflict(error)) throw error;
        this.clashed = true;
        this.insert = this.sqlite.prepare(insertSql(this.table, COLUMNS[this.table], ' ON CONFLICT (id) DO NOTHING'));
      }
    }
    if (Number(this.insert.run(values).changes) > 0) return false;
    this.update ??= this.sqlite.prepare(updateSql(this.table, COLUMNS[this.table]));
    this.update.run([...values.slice(1), values[0]]);
    return true;
  }
}

const COLUMNS = {
  accounts: ['id', 'email', 'name', 'plan', 'plan_expires_at', 'created_at', 'updated_at'],
  projects: ['id', 'account_id', 'name', 'created_at', 'updated_at'],
  sites: ['id', 'project_id', 'name', 'domain', 'url', 'status', 'created_at', 'updated_at'],
  keywords: ['id', 'site_id', 'project_id', 'keyword', 'created_at'],
  blocked_domains: ['id', 'project_id', 'domain', 'reason', 'created_at'],
  prospects: [
    'id', 'site_id', 'project_id', 'source_job_id', 'source', 'status', 'url', 'normalized_url', 'canonical_url', 'domain', 'title',
    'description', 'content_excerpt', 'page_type', 'opportunity_type', 'suggested_placement', 'contact_paths', 'relevance_score',
    'quality_score', 'risk_score', 'match_reasons', 'risk_flags', 'domain_authority', 'estimated_monthly_traffic', 'ranking_position',
    'ranking_keyword', 'crawl_status', 'last_crawled_at', 'created_at', 'updated_at',
  ],
  contacts: [
    'id', 'prospect_id', 'site_id', 'project_id', 'email', 'full_name', 'role', 'role_category', 'company', 'source', 'source_provider',
    'source_url', 'source_reference', 'status', 'verification_status', 'last_verified_at', 'suppression_reason', 'created_at', 'updated_at',
  ],
  drafts: ['id', 'site_id', 'project_id', 'prospect_id', 'contact_id', 'message_id', 'status', 'purpose', 'starred_at', 'created_at', 'updated_at'],
  draft_messages: [
    'id', 'draft_id', 'subject', 'body', 'personalization', 'grounding_summary', 'generation_provider', 'generation_model', 'created_at', 'updated_at',
  ],
  threads: [
    'id', 'site_id', 'project_id', 'prospect_id', 'contact_id', 'provider_thread_id', 'status', 'outcome', 'classification', 'inbound_count',
    'outbound_count', 'last_inbound_at', 'last_outbound_at', 'created_at', 'updated_at',
  ],
  thread_messages: [
    'id', 'thread_id', 'direction', 'status', 'from_email', 'to_emails', 'cc_emails', 'subject', 'body', 'sent_at', 'sender_id', 'attempts',
    'next_attempt_at', 'last_error', 'created_at', 'updated_at',
  ],
  email_connections: [
    'id', 'site_id', 'project_id', 'provider', 'status', 'account_email', 'provider_region', 'has_error', 'connected_at', 'last_tested_at',
    'created_at', 'updated_at',
  ],
  email_senders: [
    'id', 'site_id', 'project_id', 'connection_id', 'source', 'status', 'verification_status', 'display_name', 'email', 'reply_to_email',
    'daily_limit', 'health_status', 'warmup_status', 'health_score', 'created_at', 'updated_at',
  ],
  discovery_jobs: [
    'id', 'site_id', 'project_id', 'type', 'status', 'subject_type', 'subject_id', 'current_attempt', 'max_attempts', 'scheduled_at',
    'canceled_at', 'completed_at', 'last_error', 'created_at', 'updated_at',
  ],
  discovery_queries: [
    'id', 'job_id', 'query', 'status', 'opportunity_type', 'raw_result_count', 'unique_candidate_count', 'qualified_count', 'started_at',
    'completed_at', 'error_code', 'has_error',
  ],
  leads: [
    'id', 'site_id', 'project_id', 'platform', 'source_container', 'kind', 'title', 'body', 'author_handle', 'permalink', 'score', 'tier',
    'lead_type', 'sentiment', 'evidence_quote', 'reason', 'stage', 'feedback', 'dismissed', 'redacted', 'posted_at', 'first_seen_at', 'created_at',
  ],
  backlinks: [
    'id', 'site_id', 'project_id', 'source', 'acquisition_origin', 'source_url', 'target_url', 'category', 'status', 'observed_anchor',
    'last_checked_at', 'created_at', 'updated_at',
  ],
  backlink_checks: [
    'id', 'backlink_id', 'status', 'requested_source_url', 'final_source_url', 'http_status', 'target_found', 'observed_target_url',
    'observed_anchor', 'observed_rel', 'has_error', 'checked_at',
  ],
} as const;
type Table = keyof typeof COLUMNS;

/** Child tables whose rows are replaced with their parent's: table → parent column. */
const CHILDREN = { draft_messages: 'draft_id', thread_messages: 'thread_id', discovery_queries: 'job_id', backlink_checks: 'backlink_id' } as const;

const bool = (value: boolean) => (value ? 1 : 0);
const json = (value: unknown) => JSON.stringify(value);

/**
 * State of one import: the store's prepared statements (made once, reused for every row) and the
 * parents written so far or found in the database, so each parent is looked up at most once.
 */
export class ImportContext {
  private readonly writers = new Map<Table, TableWriter>();
  private readonly deletes = new Map<keyof typeof CHILDREN, SqliteStatement>();
  private readonly lookups = new Map<string, SqliteStatement>();
  readonly accounts = new Set<string>();
  readonly projects = new Map<string, ProjectRef>();
  readonly sites = new Map<string, SiteRef>();
  readonly prospects = new Map<string, ProspectRef>();
  readonly contacts = new Map<string, ContactRef>();
  readonly connections = new Map<string, ConnectionRef>();
  /** Child rows written, by child collection (`backlinkChecks`, …). */
  readonly childCounts: Record<string, number> = {};

  constructor(
    readonly store: Store,
    /** The import time (ISO, UTC): default `createdAt`, token activity. */
    readonly nowIso: string,
  ) {}

  /**
   * Inserts or replaces one row of `table`; `values` in the order of `COLUMNS[table]`.
   * @returns true when a row with this id existed and was replaced.
   */
  write(table: Table, values: unknown[]): boolean {
    let writer = this.writers.get(table);
    if (!writer) this.writers.set(table, (writer = new TableWriter(this.store.sqlite, table)));
    return writer.write(values);
  }

  /** Deletes the child rows of a replaced parent, which is about to be given the document's. */
  clearChildren(table: keyof typeof CHILDREN, parentId: string): void {
    let stmt = this.deletes.get(table);
    if (!stmt) this.deletes.set(table, (stmt = this.store.sqlite.prepare(`DELETE FROM ${table} WHERE ${CHILDREN[table]} = ?`)));
    stmt.run(parentId);
  }

  countChild(name: string, n: number): void {
    if (n > 0) this.childCounts[name] = (this.childCounts[name] ?? 0) + n;
  }

  private lookup<T>(sql: string, id: string): T | undefined {
    let stmt = this.lookups.get(sql);
    if (!stmt) this.lookups.set(sql, (stmt = this.store.sqlite.prepare(sql)));
    return stmt.get(id) as T | undefined;
  }

  account(id: string, field: string): void {
    if (this.accounts.has(id)) return;
    if (!this.lookup('SELECT 1 AS found FROM accounts WHERE id = ?', id)) throw missing(field, 'account', id);
    this.accounts.add(id);
  }

  project(id: string, field: string): ProjectRef {
    let ref = this.projects.get(id);
    if (!ref) {
      ref = this.lookup<ProjectRef>('SELECT account_id AS accountId FROM projects WHERE id = ?', id);
      if (!ref) throw missing(field, 'project', id);
      this.projects.set(id, ref);
    }
    return ref;
  }

  site(id: string, field: string): SiteRef {
    let ref = this.sites.get(id);
    if (!ref) {
      ref = this.lookup<SiteRef>('SELECT s.project_id AS projectId, p.account_id AS accountId FROM sites s JOIN projects p ON p.id = s.project_id WHERE s.id = ?', id);
      if (!ref) throw missing(field, 'site', id);
      this.sites.set(id, ref);
    }
    return ref;
  }

  prospect(id: string, field: string): ProspectRef {
    let ref = this.prospects.get(id);
    if (!ref) {
      ref = this.lookup<ProspectRef>('SELECT site_id AS siteId, project_id AS projectId FROM prospects WHERE id = ?', id);
      if (!ref) throw missing(field, 'prospect', id);
      this.prospects.set(id, ref);
    }
    return ref;
  }

  contact(id: string, field: string): ContactRef {
    let ref = this.contacts.get(id);
    if (!ref) {
      ref = this.lookup<ContactRef>('SELECT prospect_id AS prospectId, site_id AS siteId FROM contacts WHERE id = ?', id);
      if (!ref) throw missing(field, 'contact', id);
      this.contacts.set(id, ref);
    }
    return ref;
  }

  connection(id: string, field: string): ConnectionRef {
    let ref = this.connections.get(id);
    if (!ref) {
      ref = this.lookup<ConnectionRef>('SELECT site_id AS siteId FROM email_connections WHERE id = ?', id);
      if (!ref) throw missing(field, 'email connection', id);
      this.connections.set(id, ref);
    }
    return ref;
  }

  /**
   * The draft/thread chain: `siteId` ← `prospectId` ← `contactId` must be one chain.
   * @returns the site's project id.
   */
  chain(siteId: string, prospectId: string, contactId: string): string {
    const site = this.site(siteId, 'siteId');
    const prospect = this.prospect(prospectId, 'prospectId');
    if (prospect.siteId !== siteId) throw new FieldError('prospectId', `prospect "${prospectId}" belongs to site "${prospect.siteId}", not to site "${siteId}"`);
    const contact = this.contact(contactId, 'contactId');
    if (contact.prospectId !== prospectId) throw new FieldError('contactId', `contact "${contactId}" belongs to prospect "${contact.prospectId}", not to prospect "${prospectId}"`);
    return site.projectId;
  }
}

const missing = (field: string, kind: string, id: string) => new FieldError(field, `no ${kind} with id "${id}" in the document or the database`);

/** `createdAt` and `updatedAt` of a record: each defaults to the other, then to the import time. */
function stamps(record: { createdAt?: string; updatedAt?: string }, nowIso: string): [string, string] {
  const created = record.createdAt ?? record.updatedAt ?? nowIso;
  return [created, record.updatedAt ?? created];
}

function newestOf(messages: readonly { direction: string; sentAt: string | null }[], direction: string): string | null {
  let newest: string | null = null;
  for (const m of messages) if (m.direction === direction && m.sentAt && (newest === null || m.sentAt > newest)) newest = m.sentAt;
  return newest;
}

// ---- the collections ---------------------------------------------------------------------------

/** One collection of the document: its record rule and how a valid record is written. */
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
): Collection<N, S> => ({
  name,
  schema,
  write,
});

/** Every collection, in the order they are imported: parents before the records that use them. */
export const COLLECTIONS = [
  collection('accounts', AccountRecord, (r, ctx) => {
    const [created, updated] = stamps(r, ctx.nowIso);
    ctx.write('accounts', [r.id, r.email, r.name, r.plan, r.planExpiresAt, created, updated]);
    ctx.accounts.add(r.id);
  }),

  collection('tokens', TokenRecord, (r, ctx) => {
    ctx.account(r.accountId, 'accountId');
    const hash = hashToken(r.token);
    // A token has no id of its own in the document: a re-import finds it by its hash.
    const existing = ctx.store.sqlite.prepare('SELECT id FROM api_tokens WHERE token_hash = ?').get(hash) as { id: string } | undefined;
    if (existing && r.id && existing.id !== r.id) throw new FieldError('token', `this token value is already stored as token "${existing.id}"`);
    try {
      createToken(
        ctx.store,
        { id: r.id ?? existing?.id, accountId: r.accountId, name: r.name, scopes: r.scopes, expiresAt: r.expiresAt, revokedAt: r.revokedAt, rawToken: r.token },
        ctx.nowIso,
      );
    } catch (error) {
      if (error instanceof TokenError) throw new FieldError(null, error.message);
      throw error;
    }
  }),

  collection('projects', ProjectRecord, (r, ctx) => {
    ctx.account(r.accountId, 'accountId');
    const [created, updated] = stamps(r, ctx.nowIso);
    ctx.write('projects', [r.id, r.accountId, r.name, created, updated]);
    ctx.projects.set(r.id, { accountId: r.accountId });
  }),

  collection('sites', SiteRecord, (r, ctx) => {
    const project = ctx.project(r.projectId, 'projectId');
    const [created, updated] = stamps(r, ctx.nowIso);
    ctx.write('sites', [r.id, r.projectId, r.name, r.domain, r.url, r.status, created, updated]);
    ctx.sites.set(r.id, { projectId: r.projectId, accountId: project.accountId });
  }),

  collection('keywords', KeywordRecord, (r, ctx) => {
    const site = ctx.site(r.siteId, 'siteId');
    ctx.write('keywords', [r.id, r.siteId, site.projectId, r.keyword, r.createdAt ?? ctx.nowIso]);
  }),

  collection('blockedDomains', BlockedDomainRecord, (r, ctx) => {
    ctx.project(r.projectId, 'projectId');
    ctx.write('blocked_domains', [r.id, r.projectId, r.domain, r.reason, r.createdAt ?? ctx.nowIso]);
  }),

  collection('prospects', ProspectRecord, (r, ctx) => {
    const site = ctx.site(r.siteId, 'siteId');
    const [created, updated] = stamps(r, ctx.nowIso);
    ctx.write('prospects', [
      r.id, r.siteId, site.projectId, r.sourceJobId, r.source, r.status, r.url, r.normalizedUrl, r.canonicalUrl, r.domain, r.title,
      r.description, r.contentExcerpt, r.pageType, r.opportunityType, r.suggestedPlacement, json(r.contactPaths), r.relevanceScore,
      r.qualityScore, r.riskScore, json(r.matchReasons), json(r.riskFlags), r.domainAuthority, r.estimatedMonthlyTraffic, r.rankingPosition,
      r.rankingKeyword, r.crawlStatus, r.lastCrawledAt, created, updated,
    ]);
    ctx.prospects.set(r.id, { siteId: r.siteId, projectId: site.projectId });
  }),

  collection('contacts', ContactRecord, (r, ctx) => {
    const prospect = ctx.prospect(r.prospectId, 'prospectId');
    const [created, updated] = stamps(r, ctx.nowIso);
    ctx.write('contacts', [
      r.id, r.prospectId, prospect.siteId, prospect.projectId, r.email, r.fullName, r.role, r.roleCategory, r.company, r.source,
      r.sourceProvider, r.sourceUrl, r.sourceReference, r.status, r.verificationStatus, r.lastVerifiedAt, r.suppressionReason, created, updated,
    ]);
    ctx.contacts.set(r.id, { prospectId: r.prospectId, siteId: prospect.siteId });
  }),

  collection('drafts', DraftRecord, (r, ctx) => {
    const projectId = ctx.chain(r.siteId, r.prospectId, r.contactId);
    const [created, updated] = stamps(r, ctx.nowIso);
    const m = r.message;
    const replaced = ctx.write('drafts', [
      r.id, r.siteId, projectId, r.prospectId, r.contactId, m?.id ?? null, r.status, r.purpose, r.starredAt, created, updated,
    ]);
    if (replaced) ctx.clearChildren('draft_messages', r.id);
    if (m) {
      const [mCreated, mUpdated] = stamps(m, created);
      ctx.write('draft_messages', [
        m.id, r.id, m.subject, m.body, json(m.personalization), m.groundingSummary, m.generationProvider, m.generationModel, mCreated, mUpdated,
      ]);
      ctx.countChild('draftMessages', 1);
    }
  }),

  collection('threads', ThreadRecord, (r, ctx) => {
    const projectId = ctx.chain(r.siteId, r.prospectId, r.contactId);
    const created = r.createdAt ?? r.updatedAt ?? ctx.nowIso;
    const updated = r.updatedAt ?? created;
    const messages = r.messages;
    const replaced = ctx.write('threads', [
      r.id, r.siteId, projectId, r.prospectId, r.contactId, r.threadId, r.status, r.outcome, r.classification,
      r.inboundCount ?? messages.filter((m) => m.direction === 'inbound').length,
      r.outboundCount ?? messages.filter((m) => m.direction === 'outbound').length,
      r.lastInboundAt === undefined ? newestOf(messages, 'inbound') : r.lastInboundAt,
      r.lastOutboundAt === undefined ? newestOf(messages, 'outbound') : r.lastOutboundAt,
      created, updated,
    ]);
    if (replaced) ctx.clearChildren('thread_messages', r.id);
    for (const m of messages) {
      const mCreated = m.createdAt ?? m.sentAt ?? created;
      ctx.write('thread_messages', [
        m.id, r.id, m.direction, m.status, m.fromEmail, json(m.toEmails), json(m.ccEmails), m.subject, m.body, m.sentAt, null, m.attempts,
        null, null, mCreated, mCreated,
      ]);
    }
    ctx.countChild('threadMessages', messages.length);
  }),

  collection('emailConnections', EmailConnectionRecord, (r, ctx) => {
    const site = ctx.site(r.siteId, 'siteId');
    const [created, updated] = stamps(r, ctx.nowIso);
    ctx.write('email_connections', [
      r.id, r.siteId, site.projectId, r.provider, r.status, r.accountEmail, r.providerRegion, bool(r.hasError), r.connectedAt, r.lastTestedAt,
      created, updated,
    ]);
    ctx.connections.set(r.id, { siteId: r.siteId });
  }),

  collection('emailSenders', EmailSenderRecord, (r, ctx) => {
    const site = ctx.site(r.siteId, 'siteId');
    const connection = ctx.connection(r.connectionId, 'connectionId');
    if (connection.siteId !== r.siteId) {
      throw new FieldError('connectionId', `email connection "${r.connectionId}" belongs to site "${connection.siteId}", not to site "${r.siteId}"`);
    }
    const [created, updated] = stamps(r, ctx.nowIso);
    ctx.write('email_senders', [
      r.id, r.siteId, site.projectId, r.connectionId, r.source, r.status, r.verificationStatus, r.displayName, r.email, r.replyToEmail,
      r.dailyLimit, r.healthStatus, r.warmupStatus, r.healthScore, created, updated,
    ]);
  }),

  collection('discoveryJobs', DiscoveryJobRecord, (r, ctx) => {
    const site = ctx.site(r.siteId, 'siteId');
    const [created, updated] = stamps(r, ctx.nowIso);
    const replaced = ctx.write('discovery_jobs', [
      r.id, r.siteId, site.projectId, r.type, r.status, r.subjectType, r.subjectId, r.currentAttempt, r.maxAttempts, r.scheduledAt,
      r.canceledAt, r.completedAt, null, created, updated,
    ]);
    if (replaced) ctx.clearChildren('discovery_queries', r.id);
    for (const q of r.queries) {
      ctx.write('discovery_queries', [
        q.id, r.id, q.query, q.status, q.opportunityType, q.rawResultCount, q.uniqueCandidateCount, q.qualifiedCount, q.startedAt,
        q.completedAt, q.errorCode, bool(q.hasError),
      ]);
    }
    ctx.countChild('discoveryQueries', r.queries.length);
  }),

  collection('leads', LeadRecord, (r, ctx) => {
    const site = ctx.site(r.siteId, 'siteId');
    ctx.write('leads', [
      r.id, r.siteId, site.projectId, r.platform, r.sourceContainer, r.kind, r.title, r.body, r.authorHandle, r.permalink, r.score, r.tier,
      r.leadType, r.sentiment, r.evidenceQuote, r.reason, r.stage, r.feedback, bool(r.dismissed), bool(r.redacted), r.postedAt,
      r.firstSeenAt, r.createdAt ?? r.firstSeenAt ?? r.postedAt ?? ctx.nowIso,
    ]);
  }),

  collection('backlinks', BacklinkRecord, (r, ctx) => {
    const site = ctx.site(r.siteId, 'siteId');
    const [created, updated] = stamps(r, ctx.nowIso);
    const replaced = ctx.write('backlinks', [
      r.id, r.siteId, site.projectId, r.source, r.acquisitionOrigin, r.sourceUrl, r.targetUrl, r.category, r.status, r.observedAnchor,
      r.lastCheckedAt, created, updated,
    ]);
    if (replaced) ctx.clearChildren('backlink_checks', r.id);
    for (const c of r.checks) {
      ctx.write('backlink_checks', [
        c.id, r.id, c.status, c.requestedSourceUrl, c.finalSourceUrl, c.httpStatus, bool(c.targetFound), c.observedTargetUrl, c.observedAnchor,
        json(c.observedRel), bool(c.hasError), c.checkedAt,
      ]);
    }
    ctx.countChild('backlinkChecks', r.checks.length);
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
