/**
 * Request and response shapes of the write operations (contract §4 "Write endpoints", §8 limits;
 * decisions.md §7, §10).
 */
import { z } from '@hono/zod-openapi';
import { Id } from './common.js';
import { Contact, DiscoveryJob } from './resources.js';

/** A required JSON request body of `schema`, for `createRoute({ request: { body } })`. */
export const jsonRequestBody = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

const length = (name: string, min: number, max: number) =>
  z
    .string({ error: `${name} must be a string` })
    .min(min, `${name} must be at least ${min} characters`)
    .max(max, `${name} must be at most ${max} characters`);

/** `idempotencyKey` in a body: 8–160 characters (reply, contact discovery, verify). */
const BodyIdempotencyKey = length('idempotencyKey', 8, 160).openapi({
  description: 'A stable key for safely retrying the operation (decisions.md §7): kept 24 h per account and operation',
  example: 'reply-2026-03-01-0001',
});

export const DraftEditBody = z
  .object({
    subject: length('subject', 3, 300).openapi({ example: 'A resource for your SEO tools roundup' }),
    body: length('body', 20, 10000).openapi({ example: 'Hi Ana,\n\nI enjoyed your roundup of SEO tools…' }),
  })
  .openapi('DraftEdit');

export const RegenerateHeaders = z.object({
  'idempotency-key': length('Idempotency-Key', 8, 120).openapi({
    // Lower case: Hono hands header names to the validator lower-cased (header names are case-insensitive).
    param: { name: 'idempotency-key', in: 'header', required: true },
    description:
      '`Idempotency-Key`: a stable key for safely retrying the operation, kept 24 h per account and operation',
    example: 'regen-2026-03-01-0001',
  }),
});

export const RegenerateBody = z
  .object({
    instruction: length('instruction', 3, 500).openapi({ example: 'Make it shorter and mention our free plan' }),
  })
  .openapi('RegenerateDraft');

export const ReplyBody = z
  .object({
    body: length('body', 10, 10000).openapi({ example: 'Thanks for getting back to me! Here is the link…' }),
    ccEmails: z
      .array(z.email({ error: 'must be a valid email address' }).openapi({ format: 'email' }))
      .max(10, 'ccEmails must have at most 10 items')
      .optional()
      .openapi({ description: 'At most 10 addresses' }),
    idempotencyKey: BodyIdempotencyKey,
  })
  .openapi('ReplyToThread');

export const IdempotentBody = z.object({ idempotencyKey: BodyIdempotencyKey }).openapi('IdempotentRequest');

export const CONTACT_DISCOVERY_OUTCOMES = ['created', 'existing', 'queued', 'not_found'] as const;

export const ContactDiscoveryResult = z
  .object({
    outcome: z.enum(CONTACT_DISCOVERY_OUTCOMES).openapi({
      description:
        '`created`: a new contact (200); `existing`: the prospect already had this address (200); ' +
        '`queued`: the search continues as `job` (202); `not_found`: no address found (200). `contact` is the contact found ' +
        '(null when `queued` or `not_found`); `job` is the `contact_discovery` job (subjectType `prospect`, listed with the ' +
        "site's discovery jobs) when `queued`, else null.",
    }),
    // A union, not `.nullable()`: on a named schema the generator emits `allOf` with a $ref that cannot be null.
    contact: z.union([Contact, z.null()]),
    job: z.union([DiscoveryJob, z.null()]),
  })
  .openapi('ContactDiscoveryResult');

export const ProspectIdParam = Id.openapi({ param: { name: 'prospectId', in: 'path' }, example: 'prs_acme_roundup' });
export const SiteIdParam = Id.openapi({ param: { name: 'siteId', in: 'path' }, example: 'site_acme_blog' });
export const DraftIdParam = Id.openapi({ param: { name: 'draftId', in: 'path' }, example: 'drf_0001' });
export const ContactIdParam = Id.openapi({ param: { name: 'contactId', in: 'path' }, example: 'con_0001' });
export const ThreadIdParam = Id.openapi({
  param: { name: 'threadId', in: 'path' },
  description: "The thread's id, or its `threadId` (the mail provider's conversation id)",
  example: 'thr_0001',
});
