/**
 * Outreach drafts of a site: queries and the row → API mappers (contract §2 "Outreach draft";
 * decisions.md §5 for order). The write endpoints (edit, regenerate) reuse `toDraftMessage` and
 * `requireDraft`.
 */
import type { Kysely, Selectable } from 'kysely';
import { insertRow, precompiledQuery } from '../db/compiled.js';
import type { Database, DraftMessagesTable, DraftsTable } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { DRAFT_STATUSES } from '../domain/enums.js';
import { countedTotal, keysOf } from './row-counts.js';
import type { z } from '@hono/zod-openapi';
import type { Draft, DraftMessage } from '../schemas/resources.js';

export type DraftRow = Selectable<DraftsTable>;
export type DraftMessageRow = Selectable<DraftMessagesTable>;
export type DraftStatus = DraftRow['status'];

export type DraftMessageRecord = z.output<typeof DraftMessage>;

export type DraftRecord = z.output<typeof Draft>;

/** Row → API (contract §2 "Draft `message` object"): `personalization` JSON → object; `draft_id` stays internal. */
export const toDraftMessage = (row: DraftMessageRow): DraftMessageRecord => ({
  id: row.id,
  subject: row.subject,
  body: row.body,
  personalization: JSON.parse(row.personalization) as Record<string, unknown>,
  groundingSummary: row.grounding_summary,
  generationProvider: row.generation_provider,
  generationModel: row.generation_model,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * A draft joined with its current message (`m_*`, all null when it has none), its prospect
 * (`p_*`) and its contact (`c_*`), as `draftQuery` selects it.
 */
export interface DraftJoinedRow {
  id: string;
  prospect_id: string;
  contact_id: string;
  status: DraftStatus;
  purpose: string | null;
  starred_at: string | null;
  created_at: string;
  updated_at: string;
  m_id: string | null;
  m_subject: string | null;
  m_body: string | null;
  m_personalization: string | null;
  m_grounding_summary: string | null;
  m_generation_provider: string | null;
  m_generation_model: string | null;
  m_created_at: string | null;
  m_updated_at: string | null;
  p_id: string;
  p_title: string | null;
  p_url: string;
  p_domain: string;
  c_id: string;
  c_full_name: string | null;
  c_email: string;
  c_role: string | null;
  c_company: string | null;
}

/** Joined row → API (contract §2 "Outreach draft"); `site_id`, `project_id` and `message_id` stay internal. */
export const toDraft = (row: DraftJoinedRow): DraftRecord => ({
  id: row.id,
  prospectId: row.prospect_id,
  contactId: row.contact_id,
  status: row.status,
  purpose: row.purpose,
  starredAt: row.starred_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  message:
    row.m_id === null
      ? null
      : toDraftMessage({
          id: row.m_id,
          draft_id: row.id,
          subject: row.m_subject!,
          body: row.m_body!,
          personalization: row.m_personalization!,
          grounding_summary: row.m_grounding_summary,
          generation_provider: row.m_generation_provider,
          generation_model: row.m_generation_model,
          created_at: row.m_created_at!,
          updated_at: row.m_updated_at!,
        }),
  prospect: { id: row.p_id, title: row.p_title, url: row.p_url, domain: row.p_domain },
  contact: { id: row.c_id, fullName: row.c_full_name, email: row.c_email, role: row.c_role, company: row.c_company },
});

/** The columns of a `DraftJoinedRow`: a draft (`d`), its current message (`m`), prospect (`p`) and contact (`c`). */
const DRAFT_COLUMNS = [
  'd.id',
  'd.prospect_id',
  'd.contact_id',
  'd.status',
  'd.purpose',
  'd.starred_at',
  'd.created_at',
  'd.updated_at',
  'm.id as m_id',
  'm.subject as m_subject',
  'm.body as m_body',
  'm.personalization as m_personalization',
  'm.grounding_summary as m_grounding_summary',
  'm.generation_provider as m_generation_provider',
  'm.generation_model as m_generation_model',
  'm.created_at as m_created_at',
  'm.updated_at as m_updated_at',
  'p.id as p_id',
  'p.title as p_title',
  'p.url as p_url',
  'p.domain as p_domain',
  'c.id as c_id',
  'c.full_name as c_full_name',
  'c.email as c_email',
  'c.role as c_role',
  'c.company as c_company',
] as const;

/** Drafts (`d`) with their current message, prospect and contact, each joined by primary key. */
const draftQuery = (db: Kysely<Database>) =>
  db
    .selectFrom('drafts as d')
    .innerJoin('prospects as p', 'p.id', 'd.prospect_id')
    .innerJoin('contacts as c', 'c.id', 'd.contact_id')
    .leftJoin('draft_messages as m', 'm.id', 'd.message_id')
    .select(DRAFT_COLUMNS);

export interface DraftFilter {
  /** The site (already checked to be in the caller's project). */
  siteId: string;
  status?: DraftStatus;
}

/**
 * One page of a site's drafts matching `filter`, newest `createdAt` first (ties: `id`
 * descending), and the exact number of matches (the `site:<status>` counters).
 *
 * The page (`pg`) is a covering walk of `drafts_site_order` (or `drafts_site_status_order` with
 * a status), so a deep OFFSET skips index entries only; the joins run for the page's rows, which
 * keep the walk's order (the page is the outer loop), so nothing is sorted.
 */
export async function listDrafts(db: Kysely<Database>, filter: DraftFilter, limit: number, offset: number) {
  let page = db.selectFrom('drafts').select(['id', 'created_at']).where('site_id', '=', filter.siteId);
  if (filter.status !== undefined) page = page.where('status', '=', filter.status);
  const pg = page.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).as('pg');
  const [rows, total] = await Promise.all([
    db
      .selectFrom(pg)
      .innerJoin('drafts as d', 'd.id', 'pg.id')
      .innerJoin('prospects as p', 'p.id', 'd.prospect_id')
      .innerJoin('contacts as c', 'c.id', 'd.contact_id')
      .leftJoin('draft_messages as m', 'm.id', 'd.message_id')
      .select(DRAFT_COLUMNS)
      .orderBy('pg.created_at', 'desc')
      .orderBy('pg.id', 'desc')
      .execute(),
    countedTotal(
      db,
      'drafts',
      filter.siteId,
      keysOf('site', filter.status !== undefined ? [filter.status] : DRAFT_STATUSES),
    ),
  ]);
  return { items: rows.map(toDraft), total };
}

/**
 * The draft `draftId` of site `siteId` (already checked to be in the caller's project), with its
 * current message, prospect and contact.
 * @throws ApiError NOT_FOUND when it is missing or belongs to another site (decisions.md §1).
 */
export async function requireDraft(db: Kysely<Database>, siteId: string, draftId: string): Promise<DraftRecord> {
  const row = await draftQuery(db).where('d.id', '=', draftId).where('d.site_id', '=', siteId).executeTakeFirst();
  if (!row) throw notFound('Draft');
  return toDraft(row);
}

/** The fields of a new draft message; the others default (no personalization, no generation facts). */
export type NewDraftMessage = Pick<DraftMessagesTable, 'subject' | 'body'> &
  Partial<Omit<DraftMessagesTable, 'id' | 'draft_id'>>;

const edit = precompiledQuery((db, param) =>
  db
    .updateTable('draft_messages')
    .set({ subject: param('subject'), body: param('body'), updated_at: param('now') })
    .where('id', '=', param('messageId')),
);

const point = precompiledQuery((db, param) =>
  db
    .updateTable('drafts')
    .set({ message_id: param('messageId'), updated_at: param('now') })
    .where('id', '=', param('draftId')),
);

/**
 * The draft writes of the edit and regenerate endpoints, each compiled once; give them a
 * transaction (`inTransaction`; regenerate: the idempotency transaction).
 */
export const draftWrites = {
  /** Replaces the subject and body of the draft's current message `messageId`; both advance `updated_at` to `now`. */
  async editMessage(
    db: Kysely<Database>,
    draftId: string,
    messageId: string,
    text: { subject: string; body: string },
    now: string,
  ): Promise<void> {
    await edit.run(db, { ...text, now, messageId });
    await point.run(db, { messageId, now, draftId });
  },

  /** Inserts a new message and makes it the draft's current one; resolves with its row. */
  async addMessage(
    db: Kysely<Database>,
    draftId: string,
    fields: NewDraftMessage,
    now: string,
  ): Promise<DraftMessageRow> {
    const row: DraftMessageRow = {
      id: newId('dmsg'),
      draft_id: draftId,
      personalization: '{}',
      grounding_summary: null,
      generation_provider: null,
      generation_model: null,
      created_at: now,
      updated_at: now,
      ...fields,
    };
    await insertRow(db, 'draft_messages', row);
    await point.run(db, { messageId: row.id, now, draftId });
    return row;
  },
};
