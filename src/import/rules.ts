/**
 * The rules of the import document (spec/import-format.md): each collection's record schema
 * (fields, enums, date-times, URLs, emails) and the parent checks (parents exist, in the
 * document or the database, and belong together).
 *
 * Record schemas are the contract's resource shapes (`src/schemas/resources.ts`), relaxed for a
 * hand-written document: a nullable field left out is null, an array or object left out is
 * empty, a boolean left out is false, `createdAt`/`updatedAt` default to each other (then to the
 * import time); date-times (with seconds, and `Z` or an offset) are stored in UTC with
 * milliseconds; URL fields must be http(s) URLs and email fields email addresses. Enumerated
 * fields take only their listed values (contract §3, decisions.md §11). A field the format does
 * not know is refused (a typo such as `planExpireAt` would otherwise drop a value in silence,
 * issue #21), except the fields an API response carries that are built from other records (a
 * draft's or a thread's `prospect` and `contact` objects, a project's `siteCount`): those are
 * accepted and ignored (`IGNORED`), so an API response can still be fed back in.
 */
import { z } from '@hono/zod-openapi';
import type { Compilable, Kysely } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import type { Database } from '../db/schema.js';
import { SCOPES } from '../domain/scopes.js';
import { DateTime, Email, Id, Uri } from '../schemas/common.js';
import { MESSAGE_STATUSES } from '../domain/enums.js';
import { Me } from '../schemas/me.js';
import { Project, Site } from '../schemas/projects.js';
import {
  Backlink,
  BacklinkCheck,
  BlockedDomain,
  Contact,
  DiscoveryJob,
  DiscoveryQuery,
  Draft,
  EmailConnection,
  EmailSender,
  Keyword,
  Lead,
  Prospect,
  Thread,
  ThreadMessage,
} from '../schemas/resources.js';
import { isWellFormedToken, tokenNameProblem } from '../domain/tokens.js';

// ---- field rules -------------------------------------------------------------------------------

/** A field's own message, except for a missing field (which the importer reports as "is required"). */
const unlessMissing = (message: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? undefined : message;

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
export const ImportDateTime = z.iso
  .datetime({
    offset: true,
    error: unlessMissing('must be an ISO 8601 date-time with an offset, e.g. 2026-03-01T09:30:00Z'),
  })
  .overwrite(toUtc);
export const ImportUrl = z.url({ protocol: /^https?$/, error: unlessMissing('must be an http(s) URL') });
export const ImportEmail = z.email({ error: unlessMissing('must be an email address') });

const int = z.number().int();
const count = int.min(0, 'must not be negative');
const emptyArray = <T extends z.ZodArray>(schema: T) =>
  schema.default([] as unknown as z.util.NoUndefined<z.output<T>>);

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
  const shape = Object.fromEntries(
    Object.entries(schema.shape).map(([key, field]) => [key, relaxField(key, field as z.ZodType)]),
  );
  return z.strictObject(shape) as unknown as z.ZodObject<S>;
}

/** A field of an API response that the import takes from elsewhere: accepted, and not written. */
const IGNORED = z.unknown().optional();

// ---- record schemas, one per collection ---------------------------------------------------------

export const AccountImport = relaxed(Me.shape.owner.extend({ updatedAt: DateTime }));

/** A token has no id in the format (it may give one); `token` is the raw value, stored only as a hash. */
export const TokenImport = z.strictObject({
  id: Id.optional(),
  accountId: Id,
  // The rule of the API access page and `tokens create` (1–100 characters, no control or format character).
  name: z.string().superRefine((name, ctx) => {
    const problem = tokenNameProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  scopes: emptyArray(z.array(z.enum(SCOPES))),
  token: z
    .string()
    .min(32, 'must be at least 32 characters')
    .refine(
      isWellFormedToken,
      'must be 32 to 512 printable characters without spaces (an oapi_ token needs its valid checksum)',
    ),
  expiresAt: ImportDateTime.nullable().default(null),
  revokedAt: ImportDateTime.nullable().default(null),
});

export const ProjectImport = relaxed(Project.omit({ siteCount: true })).extend({ accountId: Id, siteCount: IGNORED });
export const SiteImport = relaxed(Site).extend({ projectId: Id, status: z.string().default('active') });
export const KeywordImport = relaxed(Keyword);
export const BlockedDomainImport = relaxed(BlockedDomain).extend({ projectId: Id });
export const ProspectImport = relaxed(Prospect);
export const ContactImport = relaxed(Contact).extend({ prospectId: Id });
/** A draft's `prospect` and `contact` objects are not imported: they are built from the ids. */
export const DraftImport = relaxed(Draft.omit({ prospect: true, contact: true })).extend({
  siteId: Id,
  prospect: IGNORED,
  contact: IGNORED,
});

export const ThreadMessageImport = relaxed(ThreadMessage).extend({
  status: z.enum(MESSAGE_STATUSES).default('sent'),
  attempts: count.default(0),
});
export const ThreadImport = relaxed(Thread.omit({ contact: true, prospect: true })).extend({
  siteId: Id,
  prospectId: Id,
  prospect: IGNORED,
  contact: IGNORED,
  createdAt: ImportDateTime.optional(),
  // Left out: counted from `messages` (and the newest message time of each direction).
  inboundCount: count.optional(),
  outboundCount: count.optional(),
  lastInboundAt: ImportDateTime.nullable().optional(),
  lastOutboundAt: ImportDateTime.nullable().optional(),
  messages: emptyArray(z.array(ThreadMessageImport)),
});

export const EmailConnectionImport = relaxed(EmailConnection).extend({ siteId: Id });
export const EmailSenderImport = relaxed(EmailSender).extend({ siteId: Id });

export const DiscoveryQueryImport = relaxed(DiscoveryQuery).extend({
  rawResultCount: count.default(0),
  uniqueCandidateCount: count.default(0),
  qualifiedCount: count.default(0),
});
export const DiscoveryJobImport = relaxed(DiscoveryJob).extend({
  siteId: Id,
  currentAttempt: count.default(0),
  maxAttempts: int.min(1, 'must be at least 1').default(3),
  queries: emptyArray(z.array(DiscoveryQueryImport)),
});

export const LeadImport = relaxed(Lead).extend({ createdAt: ImportDateTime.optional() });
export const BacklinkCheckImport = relaxed(BacklinkCheck);
export const BacklinkImport = relaxed(Backlink).extend({ checks: emptyArray(z.array(BacklinkCheckImport)) });

// ---- parent checks ------------------------------------------------------------------------------

/** A refusal of one field (or, with `field` null, of the whole record). */
export class FieldError extends Error {
  constructor(
    readonly field: string | null,
    message: string,
  ) {
    super(message);
  }
}

export interface ProjectRef {
  accountId: string;
}
export interface SiteRef {
  projectId: string;
  accountId: string;
}
export interface ProspectRef {
  siteId: string;
  projectId: string;
}
export interface ContactRef {
  prospectId: string;
  siteId: string;
}
export interface ConnectionRef {
  siteId: string;
}

const missing = (field: string, kind: string, id: string) =>
  new FieldError(field, `no ${kind} with id "${id}" in the document or the database`);

/**
 * The parents of one import: those written so far (`add…`) and those found in the database,
 * each looked up at most once. Every check throws `FieldError` naming the record's field.
 */
export class Parents {
  private readonly lookups;
  private readonly accounts = new Set<string>();
  private readonly projects = new Map<string, ProjectRef>();
  private readonly sites = new Map<string, SiteRef>();
  private readonly prospects = new Map<string, ProspectRef>();
  private readonly contacts = new Map<string, ContactRef>();
  private readonly connections = new Map<string, ConnectionRef>();

  constructor(trx: Kysely<Database>) {
    // Each lookup compiled once; rows typed as kysely infers them.
    const byId = <R>(build: (db: Kysely<Database>, id: string) => Compilable<R>) => {
      const statement = precompiledQuery<'id', R>((db, param) => build(db, param('id')));
      return (id: string) => statement.first(trx, { id });
    };
    this.lookups = {
      account: byId((db, id) => db.selectFrom('accounts').select('id').where('id', '=', id)),
      project: byId((db, id) => db.selectFrom('projects').select('account_id as accountId').where('id', '=', id)),
      site: byId((db, id) =>
        db
          .selectFrom('sites as s')
          .innerJoin('projects as p', 'p.id', 's.project_id')
          .select(['s.project_id as projectId', 'p.account_id as accountId'])
          .where('s.id', '=', id),
      ),
      prospect: byId((db, id) =>
        db.selectFrom('prospects').select(['site_id as siteId', 'project_id as projectId']).where('id', '=', id),
      ),
      contact: byId((db, id) =>
        db.selectFrom('contacts').select(['prospect_id as prospectId', 'site_id as siteId']).where('id', '=', id),
      ),
      connection: byId((db, id) => db.selectFrom('email_connections').select('site_id as siteId').where('id', '=', id)),
    };
  }

  addAccount(id: string): void {
    this.accounts.add(id);
  }
  addProject(id: string, ref: ProjectRef): void {
    this.projects.set(id, ref);
  }
  addSite(id: string, ref: SiteRef): void {
    this.sites.set(id, ref);
  }
  addProspect(id: string, ref: ProspectRef): void {
    this.prospects.set(id, ref);
  }
  addContact(id: string, ref: ContactRef): void {
    this.contacts.set(id, ref);
  }
  addConnection(id: string, ref: ConnectionRef): void {
    this.connections.set(id, ref);
  }

  /** The cached parent `id` of `cache`, else the database's (`lookup`), else a `FieldError` on `field`. */
  private async find<T>(
    cache: Map<string, T>,
    lookup: (id: string) => Promise<T | undefined>,
    id: string,
    field: string,
    kind: string,
  ): Promise<T> {
    let ref = cache.get(id);
    if (!ref) {
      ref = await lookup(id);
      if (!ref) throw missing(field, kind, id);
      cache.set(id, ref);
    }
    return ref;
  }

  async account(id: string, field: string): Promise<void> {
    if (this.accounts.has(id)) return;
    if (!(await this.lookups.account(id))) throw missing(field, 'account', id);
    this.accounts.add(id);
  }

  project(id: string, field: string): Promise<ProjectRef> {
    return this.find(this.projects, this.lookups.project, id, field, 'project');
  }

  site(id: string, field: string): Promise<SiteRef> {
    return this.find(this.sites, this.lookups.site, id, field, 'site');
  }

  prospect(id: string, field: string): Promise<ProspectRef> {
    return this.find(this.prospects, this.lookups.prospect, id, field, 'prospect');
  }

  contact(id: string, field: string): Promise<ContactRef> {
    return this.find(this.contacts, this.lookups.contact, id, field, 'contact');
  }

  connection(id: string, field: string): Promise<ConnectionRef> {
    return this.find(this.connections, this.lookups.connection, id, field, 'email connection');
  }

  /**
   * The draft/thread chain: `siteId` ← `prospectId` ← `contactId` must be one chain.
   * @returns the site's project id.
   */
  async chain(siteId: string, prospectId: string, contactId: string): Promise<string> {
    const site = await this.site(siteId, 'siteId');
    const prospect = await this.prospect(prospectId, 'prospectId');
    if (prospect.siteId !== siteId)
      throw new FieldError(
        'prospectId',
        `prospect "${prospectId}" belongs to site "${prospect.siteId}", not to site "${siteId}"`,
      );
    const contact = await this.contact(contactId, 'contactId');
    if (contact.prospectId !== prospectId)
      throw new FieldError(
        'contactId',
        `contact "${contactId}" belongs to prospect "${contact.prospectId}", not to prospect "${prospectId}"`,
      );
    return site.projectId;
  }

  /** An email sender's connection must be one of the sender's site. */
  async connectionOfSite(connectionId: string, siteId: string): Promise<void> {
    const connection = await this.connection(connectionId, 'connectionId');
    if (connection.siteId !== siteId) {
      throw new FieldError(
        'connectionId',
        `email connection "${connectionId}" belongs to site "${connection.siteId}", not to site "${siteId}"`,
      );
    }
  }
}
