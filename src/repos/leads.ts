/**
 * Leads of a project: queries and the row → API mapper (contract §2 "Lead"; decisions.md §5 for
 * order and search, §6 for views and redaction).
 */
import type { Expression, ExpressionBuilder, Kysely, Selectable, SqlBool } from 'kysely';
import type { Database, LeadsTable } from '../db/schema.js';
import { searchPage, textSearch } from '../db/search.js';
import { notFound } from '../domain/errors.js';
import { LEAD_STAGES, LEAD_TIERS, LEAD_TYPES, type LeadView } from '../domain/enums.js';
import { cachedValue } from './data-cache.js';
import { countedTotal } from './row-counts.js';
import type { z } from '@hono/zod-openapi';
import type { Lead } from '../schemas/resources.js';

export type LeadRow = Selectable<LeadsTable>;

export type LeadRecord = z.output<typeof Lead>;

/** Row → API; a redacted lead's `title`, `body` and `evidenceQuote` are null whatever the store holds (decisions.md §6). */
export const toLead = (row: LeadRow): LeadRecord => {
  const redacted = row.redacted === 1;
  return {
    id: row.id,
    siteId: row.site_id,
    platform: row.platform,
    sourceContainer: row.source_container,
    kind: row.kind,
    title: redacted ? null : row.title,
    body: redacted ? null : row.body,
    authorHandle: row.author_handle,
    permalink: row.permalink,
    score: row.score,
    tier: row.tier,
    leadType: row.lead_type,
    sentiment: row.sentiment,
    evidenceQuote: redacted ? null : row.evidence_quote,
    reason: row.reason,
    stage: row.stage,
    feedback: row.feedback,
    dismissed: row.dismissed === 1,
    postedAt: row.posted_at,
    firstSeenAt: row.first_seen_at,
    redacted,
  };
};

/** Tiers shown by `view=quality` (decisions.md §6). */
const QUALITY_TIERS: readonly LeadRow['tier'][] = ['hot', 'warm'];

export interface LeadFilter {
  /** The caller's project (already checked). */
  projectId: string;
  /** A site of that project (already checked); narrows the list to it. */
  siteId?: string;
  /** `quality`: not dismissed, tier hot or warm; `all`: not dismissed; `archived`: dismissed. */
  view: LeadView;
  stage?: LeadRow['stage'];
  tier?: LeadRow['tier'];
  leadType?: LeadRow['lead_type'];
  /** Exact platform name; empty or absent: no filter. */
  platform?: string;
  /** Case-insensitive substring of title, body, authorHandle or evidenceQuote (never of a redacted lead's hidden text); empty or absent: no filter. */
  search?: string;
}

/**
 * The tiers a filter admits: `view=quality` and an explicit `tier` intersect. Undefined means
 * every tier; an empty list means no lead can match.
 */
function admittedTiers(filter: LeadFilter): readonly LeadRow['tier'][] | undefined {
  if (filter.view !== 'quality') return filter.tier !== undefined ? [filter.tier] : undefined;
  return filter.tier !== undefined ? QUALITY_TIERS.filter((t) => t === filter.tier) : QUALITY_TIERS;
}

/**
 * The WHERE clause of the lead list. Every index on leads starts with (project or site,
 * [stage | tier,] dismissed) and continues with the list order (score, postedAt, id, all
 * descending), so SQLite walks one in order and tests the other filters row by row.
 * Search (`textSearch`, src/db/search.ts): the author handle, and the title, body and evidence
 * quote of a lead that is not redacted (a redacted lead's hidden text never matches).
 */
const leadWhere =
  (db: Kysely<Database>, filter: LeadFilter, tiers: readonly LeadRow['tier'][] | undefined) =>
  (eb: ExpressionBuilder<Database, 'leads'>) => {
    const conditions: Expression<SqlBool>[] = [
      filter.siteId !== undefined ? eb('site_id', '=', filter.siteId) : eb('project_id', '=', filter.projectId),
      eb('dismissed', '=', filter.view === 'archived' ? 1 : 0),
    ];
    if (tiers !== undefined) conditions.push(tiers.length === 1 ? eb('tier', '=', tiers[0]!) : eb('tier', 'in', tiers));
    if (filter.stage !== undefined) conditions.push(eb('stage', '=', filter.stage));
    if (filter.leadType !== undefined) conditions.push(eb('lead_type', '=', filter.leadType));
    if (filter.platform) conditions.push(eb('platform', '=', filter.platform));
    const term = filter.search;
    if (term) {
      conditions.push(
        textSearch(db, term, { table: 'leads', fts: 'leads_fts' }, (contains) =>
          eb.or([
            contains('author_handle'),
            eb.and([eb('redacted', '=', 0), eb.or([contains('title'), contains('body'), contains('evidence_quote')])]),
          ]),
        ),
      );
    }
    return eb.and(conditions);
  };

/**
 * The counters (sql/sqlite/0003_row_counts.sql) whose sum is the number of leads matching `filter`, or
 * undefined for a search (counted instead). Kept per scope (project or site) at the finest grain
 * of the enumerated filters, `<scope>:<dismissed>:<tier>:<stage>:<leadType>`, and the same with
 * `:platform=<platform>` appended: every combination of view, tier, stage, leadType and platform
 * is the sum of at most 48 of them.
 */
function leadCounterKeys(filter: LeadFilter, tiers: readonly LeadRow['tier'][] | undefined): string[] | undefined {
  if (filter.search) return undefined;
  const head = `${filter.siteId !== undefined ? 'site' : 'project'}:${filter.view === 'archived' ? 1 : 0}`;
  const tail = filter.platform ? `:platform=${filter.platform}` : '';
  const stages = filter.stage !== undefined ? [filter.stage] : LEAD_STAGES;
  const types = filter.leadType !== undefined ? [filter.leadType] : LEAD_TYPES;
  return (tiers ?? LEAD_TIERS).flatMap((tier) =>
    stages.flatMap((stage) => types.map((type) => `${head}:${tier}:${stage}:${type}${tail}`)),
  );
}

/**
 * One page of a project's leads matching `filter`, highest `score` first, then newest
 * `postedAt` (leads without one last), then `id` descending (decisions.md §5), and the exact
 * number of matches: from the counters (`leadCounterKeys`), or, with a search, counted (over the
 * trigram matches, or the scope's leads for a 1–2 character term) once per search until the
 * data changes (`cachedValue`). A search's statements run through `searchPage` (src/db/search.ts):
 * within the store's share for searches, off the event loop on SQLite.
 */
export async function listLeads(db: Kysely<Database>, filter: LeadFilter, limit: number, offset: number) {
  const tiers = admittedTiers(filter);
  if (tiers !== undefined && tiers.length === 0) return { items: [], total: 0 };
  const where = leadWhere(db, filter, tiers);
  const counterKeys = leadCounterKeys(filter, tiers);
  const page = db
    .selectFrom('leads')
    .selectAll()
    .where(where)
    .orderBy('score', 'desc')
    // Leads without postedAt last (SQLite's place for NULL in a descending order; PostgreSQL's is first).
    .orderBy('posted_at', (ob) => ob.desc().nullsLast())
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset);
  const [rows, total] =
    counterKeys !== undefined
      ? await Promise.all([page.execute(), countedTotal(db, 'leads', filter.siteId ?? filter.projectId, counterKeys)])
      : await searchPage(db, page, (count) =>
          cachedValue(db, ['leads'], `leads|${JSON.stringify(filter)}`, () =>
            count(
              db
                .selectFrom('leads')
                .where(where)
                .select((eb) => eb.fn.countAll<number>().as('n')),
            ),
          ),
        );
  return { items: rows.map(toLead), total };
}

/**
 * The lead `leadId` of project `projectId` (already checked to be the caller's), dismissed or not.
 * @throws ApiError NOT_FOUND when it is missing or belongs to another project.
 */
export async function requireLead(db: Kysely<Database>, projectId: string, leadId: string): Promise<LeadRecord> {
  const row = await db
    .selectFrom('leads')
    .selectAll()
    .where('id', '=', leadId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) throw notFound('Lead');
  return toLead(row);
}
