/**
 * The contract's resource shapes (contract §2; decisions.md §5, §6, §10, §11 for what it leaves
 * open). These are the response schemas of the OpenAPI document, and — with parent ids added and
 * optional fields relaxed — the import document's record rules (`src/import/rules.ts`).
 *
 * Nullable fields: every field the store may not know is `null` rather than absent, so a client
 * always sees every field of the contract.
 */
import { z } from '@hono/zod-openapi';
import { DateTime, Email, Id, NullableDateTime, Uri } from './common.js';
import {
  BACKLINK_STATUSES,
  CONNECTION_PROVIDERS,
  CONNECTION_STATUSES,
  CONTACT_STATUSES,
  DRAFT_STATUSES,
  HEALTH_STATUSES,
  JOB_STATUSES,
  JOB_TYPES,
  LEAD_STAGES,
  LEAD_TIERS,
  LEAD_TYPES,
  MESSAGE_DIRECTIONS,
  MESSAGE_STATUSES,
  PROSPECT_STATUSES,
  QUERY_STATUSES,
  SENDER_STATUSES,
  THREAD_CLASSIFICATIONS,
  THREAD_OUTCOMES,
  THREAD_STATUSES,
  VERIFICATION_STATUSES,
  WARMUP_STATUSES,
} from '../domain/enums.js';

const text = z.string();
const nText = z.string().nullable();
const nUri = Uri.nullable();
const nNumber = z.number().nullable();

export const BacklinkCheck = z
  .object({
    id: Id,
    status: text,
    requestedSourceUrl: nUri,
    finalSourceUrl: nUri,
    httpStatus: z.number().int().nullable(),
    targetFound: z.boolean(),
    observedTargetUrl: nUri,
    observedAnchor: nText,
    observedRel: z.array(z.string()),
    hasError: z.boolean(),
    checkedAt: DateTime,
  })
  .openapi('BacklinkCheck');

export const Backlink = z
  .object({
    id: Id,
    siteId: Id,
    source: text.openapi({ example: 'outreach' }),
    acquisitionOrigin: text.openapi({ example: 'unknown' }),
    sourceUrl: Uri,
    targetUrl: Uri,
    category: nText,
    status: z.enum(BACKLINK_STATUSES),
    observedAnchor: nText,
    lastCheckedAt: NullableDateTime,
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('Backlink');

export const ProspectSummary = z.object({ id: Id, title: nText, url: Uri, domain: text });
export const ContactSummary = z.object({ id: Id, fullName: nText, email: Email, role: nText, company: nText });

/**
 * The fields of a draft message. `Draft.message` uses them unnamed: a nullable *named* schema is
 * rendered as a bare `$ref` that does not admit null (a null `message` must validate).
 */
export const DraftMessage = z.object({
  id: Id,
  subject: text,
  body: text,
  personalization: z
    .record(z.string(), z.unknown())
    .openapi({ description: 'Free-form facts used to personalise the message' }),
  groundingSummary: nText,
  generationProvider: nText.openapi({ example: 'template' }),
  generationModel: nText,
  createdAt: DateTime,
  updatedAt: DateTime,
});

export const Draft = z
  .object({
    id: Id,
    prospectId: Id,
    contactId: Id,
    status: z.enum(DRAFT_STATUSES),
    purpose: nText,
    starredAt: NullableDateTime,
    createdAt: DateTime,
    updatedAt: DateTime,
    message: DraftMessage.nullable().openapi({ description: "The draft's current message; null when it has none" }),
    prospect: ProspectSummary,
    contact: ContactSummary,
  })
  .openapi('Draft');

export const Thread = z
  .object({
    id: Id,
    threadId: text.openapi({ description: "The mail provider's conversation id" }),
    contactId: Id,
    status: z.enum(THREAD_STATUSES),
    outcome: z.enum(THREAD_OUTCOMES),
    classification: z.enum(THREAD_CLASSIFICATIONS),
    inboundCount: z.number().int(),
    outboundCount: z.number().int(),
    lastInboundAt: NullableDateTime,
    lastOutboundAt: NullableDateTime,
    updatedAt: DateTime,
    contact: ContactSummary,
    prospect: ProspectSummary,
  })
  .openapi('Thread');

export const ThreadMessage = z
  .object({
    id: Id,
    direction: z.enum(MESSAGE_DIRECTIONS),
    status: z.enum(MESSAGE_STATUSES).openapi({ description: 'Outbound replies: queued → sent or failed' }),
    fromEmail: Email.nullable(),
    toEmails: z.array(Email),
    ccEmails: z.array(Email),
    subject: nText,
    body: text,
    sentAt: NullableDateTime.openapi({ description: 'null while queued' }),
    attempts: z.number().int().openapi({ description: 'Delivery attempts so far' }),
    createdAt: DateTime,
  })
  .openapi('ThreadMessage');

export const ReplyResult = z.object({ threadId: Id, status: z.enum(MESSAGE_STATUSES) }).openapi('ReplyResult');

export const DiscoveryJob = z
  .object({
    id: Id,
    type: z.enum(JOB_TYPES),
    status: z.enum(JOB_STATUSES),
    subjectType: nText,
    subjectId: nText,
    currentAttempt: z.number().int(),
    maxAttempts: z.number().int(),
    scheduledAt: NullableDateTime,
    canceledAt: NullableDateTime,
    completedAt: NullableDateTime,
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('DiscoveryJob');

export const DiscoveryQuery = z
  .object({
    id: Id,
    query: text,
    status: z.enum(QUERY_STATUSES),
    opportunityType: nText,
    rawResultCount: z.number().int(),
    uniqueCandidateCount: z.number().int(),
    qualifiedCount: z.number().int(),
    startedAt: NullableDateTime,
    completedAt: NullableDateTime,
    errorCode: nText,
    hasError: z.boolean(),
  })
  .openapi('DiscoveryQuery');

export const Contact = z
  .object({
    id: Id,
    email: Email,
    fullName: nText,
    role: nText,
    roleCategory: nText,
    company: nText,
    source: nText,
    sourceProvider: nText,
    sourceUrl: nUri,
    sourceReference: nText,
    status: z.enum(CONTACT_STATUSES),
    verificationStatus: z.enum(VERIFICATION_STATUSES),
    lastVerifiedAt: NullableDateTime,
    suppressionReason: nText,
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('Contact');

export const EmailConnection = z
  .object({
    id: Id,
    provider: z.enum(CONNECTION_PROVIDERS),
    status: z.enum(CONNECTION_STATUSES),
    accountEmail: Email,
    providerRegion: nText,
    hasError: z.boolean(),
    connectedAt: NullableDateTime,
    lastTestedAt: NullableDateTime,
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('EmailConnection');

export const EmailSender = z
  .object({
    id: Id,
    connectionId: Id,
    source: nText,
    status: z.enum(SENDER_STATUSES),
    verificationStatus: nText,
    displayName: nText,
    email: Email,
    replyToEmail: Email.nullable(),
    dailyLimit: z.number().int().nullable(),
    healthStatus: z.enum(HEALTH_STATUSES).nullable(),
    warmupStatus: z.enum(WARMUP_STATUSES).nullable(),
    healthScore: nNumber,
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('EmailSender');

export const EmailAccounts = z
  .object({ connections: z.array(EmailConnection), senders: z.array(EmailSender) })
  .openapi('EmailAccounts');

export const Lead = z
  .object({
    id: Id,
    siteId: Id,
    platform: text.openapi({ example: 'reddit' }),
    sourceContainer: nText,
    kind: nText,
    title: nText.openapi({ description: 'null when the post is redacted' }),
    body: nText.openapi({ description: 'null when the post is redacted' }),
    authorHandle: nText,
    permalink: nUri,
    score: z.number(),
    tier: z.enum(LEAD_TIERS),
    leadType: z.enum(LEAD_TYPES),
    sentiment: nText,
    evidenceQuote: nText.openapi({ description: 'null when the post is redacted' }),
    reason: nText,
    stage: z.enum(LEAD_STAGES),
    feedback: nText,
    dismissed: z.boolean(),
    postedAt: NullableDateTime,
    firstSeenAt: NullableDateTime,
    redacted: z.boolean(),
  })
  .openapi('Lead');

export const Prospect = z
  .object({
    id: Id,
    siteId: Id,
    sourceJobId: nText,
    source: nText,
    status: z.enum(PROSPECT_STATUSES),
    url: Uri,
    normalizedUrl: nText,
    canonicalUrl: nUri,
    domain: text,
    title: nText,
    description: nText,
    contentExcerpt: nText,
    pageType: nText,
    opportunityType: nText,
    suggestedPlacement: nText,
    contactPaths: z.array(z.record(z.string(), z.unknown())).openapi({
      description:
        'Where contacts may be found, e.g. `{ "url": "https://…/contact", "label": "Contact page", "email": "…" }`',
    }),
    relevanceScore: nNumber,
    qualityScore: nNumber,
    riskScore: nNumber,
    matchReasons: z.array(z.string()),
    riskFlags: z.array(z.string()),
    domainAuthority: nNumber,
    estimatedMonthlyTraffic: nNumber,
    rankingPosition: nNumber,
    rankingKeyword: nText,
    crawlStatus: nText,
    lastCrawledAt: NullableDateTime,
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('Prospect');

export const Keyword = z.object({ id: Id, siteId: Id, keyword: text, createdAt: DateTime }).openapi('Keyword');
export const BlockedDomain = z
  .object({ id: Id, domain: text, reason: nText, createdAt: DateTime })
  .openapi('BlockedDomain');

const counts = <T extends readonly [string, ...string[]]>(values: T) =>
  z.object(Object.fromEntries(values.map((v) => [v, z.number().int()])) as Record<T[number], z.ZodNumber>);

export const Pipeline = z
  .object({
    siteId: Id,
    prospects: counts(PROSPECT_STATUSES),
    drafts: counts(DRAFT_STATUSES),
    threads: counts(THREAD_STATUSES),
    backlinks: counts(BACKLINK_STATUSES),
  })
  .openapi('Pipeline', { description: "Counts of the site's records by status; every status is present, 0 when none" });
