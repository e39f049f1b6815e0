/**
 * Contacts of a prospect: queries and the row → API mapper (contract §2 "Contact";
 * decisions.md §11 for the status lists). The write endpoints (verify, contact discovery) reuse
 * `toContact` and `requireContactRow`; `contactVerification` writes a verdict and
 * `DiscoveredContacts` saves what a contact finder found.
 */
import type { Kysely, Selectable } from 'kysely';
import { caseInsensitive } from '../db/collation.js';
import { insertRow, precompiledQuery } from '../db/compiled.js';
import type { ContactsTable, Database } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { countedTotal } from './row-counts.js';
import type { z } from '@hono/zod-openapi';
import type { Contact } from '../schemas/resources.js';

export type ContactRow = Selectable<ContactsTable>;

export type ContactRecord = z.output<typeof Contact>;

/** Row → API (contract §2 "Contact"); the parent ids (`prospect_id`, `site_id`, `project_id`) stay internal. */
export const toContact = (row: ContactRow): ContactRecord => ({
  id: row.id,
  email: row.email,
  fullName: row.full_name,
  role: row.role,
  roleCategory: row.role_category,
  company: row.company,
  source: row.source,
  sourceProvider: row.source_provider,
  sourceUrl: row.source_url,
  sourceReference: row.source_reference,
  status: row.status,
  verificationStatus: row.verification_status,
  lastVerifiedAt: row.last_verified_at,
  suppressionReason: row.suppression_reason,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * One page of the contacts of prospect `prospectId` (already checked to be in the caller's
 * project), newest `createdAt` first (ties: `id` descending; index `contacts_prospect_order`),
 * and the exact number of them (the `prospect` counter).
 */
export async function listProspectContacts(db: Kysely<Database>, prospectId: string, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('contacts')
      .selectAll()
      .where('prospect_id', '=', prospectId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
    countedTotal(db, 'contacts', prospectId, ['prospect']),
  ]);
  return { items: rows.map(toContact), total };
}

/** Where a contact must sit: its project (already checked to be the caller's) and, optionally, the site or prospect it was addressed through. */
export interface ContactParent {
  projectId: string;
  siteId?: string;
  prospectId?: string;
}

/**
 * The row of contact `contactId` under `parent`, for callers that need internal columns
 * (`prospect_id`, `site_id`) as well.
 * @throws ApiError NOT_FOUND when it is missing or sits under another project, site or prospect
 * (decisions.md §1: a child through the wrong parent answers like a missing one).
 */
export async function requireContactRow(
  db: Kysely<Database>,
  parent: ContactParent,
  contactId: string,
): Promise<ContactRow> {
  let query = db
    .selectFrom('contacts')
    .selectAll()
    .where('id', '=', contactId)
    .where('project_id', '=', parent.projectId);
  if (parent.siteId !== undefined) query = query.where('site_id', '=', parent.siteId);
  if (parent.prospectId !== undefined) query = query.where('prospect_id', '=', parent.prospectId);
  const row = await query.executeTakeFirst();
  if (!row) throw notFound('Contact');
  return row;
}

const verification = precompiledQuery((db, param) =>
  db
    .updateTable('contacts')
    .set({
      verification_status: param<ContactRow['verification_status']>('status'),
      last_verified_at: param('now'),
      updated_at: param('now'),
    })
    .where('id', '=', param('contactId'))
    .returningAll(),
);

/**
 * The verify endpoint's write, compiled once: sets a contact's `verification_status`
 * (decisions.md §11) and `last_verified_at` at `now`; resolves with the row (undefined when there
 * is no contact `contactId`). In the idempotency transaction.
 */
export function setContactVerification(
  db: Kysely<Database>,
  contactId: string,
  status: ContactRow['verification_status'],
  now: string,
): Promise<ContactRow | undefined> {
  return verification.first(db, { contactId, status, now });
}

/** A contact a finder found: the fields `saveDiscoveredContact` takes from it. */
export type FoundContact = Pick<ContactRecord, 'email' | 'fullName' | 'role' | 'sourceUrl' | 'sourceReference'>;

const byEmail = precompiledQuery((db, param) =>
  db
    .selectFrom('contacts')
    .selectAll()
    .where('prospect_id', '=', param('prospectId'))
    .where(caseInsensitive('email'), '=', param('email'))
    .orderBy('created_at')
    .orderBy('id')
    .limit(1),
);

/**
 * A contact saved by contact discovery (decisions.md §10), in a transaction (the idempotency
 * transaction or the discovery worker's): `found` as a contact of `prospect` — the one it already
 * has with that address (compared case-insensitively: `existing`), or a new one `created` with
 * source `contact_discovery` and `provider` (the finder's name) at `now`.
 */
export async function saveDiscoveredContact(
  db: Kysely<Database>,
  prospect: { id: string; siteId: string; projectId: string },
  found: FoundContact,
  provider: string,
  now: string,
): Promise<{ outcome: 'created' | 'existing'; contact: ContactRecord }> {
  const existing = await byEmail.first(db, { prospectId: prospect.id, email: found.email });
  if (existing) return { outcome: 'existing', contact: toContact(existing) };
  const row: ContactRow = {
    id: newId('con'),
    prospect_id: prospect.id,
    site_id: prospect.siteId,
    project_id: prospect.projectId,
    email: found.email,
    full_name: found.fullName,
    role: found.role,
    role_category: null,
    company: null,
    source: 'contact_discovery',
    source_provider: provider,
    source_url: found.sourceUrl,
    source_reference: found.sourceReference,
    status: 'active',
    verification_status: 'unverified',
    last_verified_at: null,
    suppression_reason: null,
    created_at: now,
    updated_at: now,
  };
  await insertRow(db, 'contacts', row);
  return { outcome: 'created', contact: toContact(row) };
}

const statusByReply = precompiledQuery((db, param, shape: 'bounced' | 'suppressed') =>
  db
    .updateTable('contacts')
    .set({
      status: shape,
      ...(shape === 'suppressed' ? { suppression_reason: param('reason') } : {}),
      updated_at: param('now'),
    })
    .where('id', '=', param('contactId'))
    .where('status', '<>', shape),
);

/**
 * What a reply tells about contact `contactId` (decisions.md §17): `bounced` (its address
 * bounced) or `suppressed` (it asked to hear no more, with `reason` as its `suppressionReason`).
 * Leaves a contact already in that status as it is; `now` is ISO 8601. Call inside the
 * transaction that stores the message.
 */
export async function setContactStatusByReply(
  db: Kysely<Database>,
  contactId: string,
  change: { status: 'bounced' } | { status: 'suppressed'; reason: string },
  now: string,
): Promise<void> {
  await statusByReply.run(
    db,
    { contactId, now, reason: change.status === 'suppressed' ? change.reason : null },
    change.status,
  );
}
