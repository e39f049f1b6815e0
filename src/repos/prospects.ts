/**
 * Prospects of a project: queries and the row → API mapper (contract §2 "Prospect";
 * decisions.md §5 for order and search).
 */
import type { Expression, ExpressionBuilder, Kysely, Selectable, SqlBool } from 'kysely';
import type { Database, ProspectsTable } from '../db/schema.js';
import { searchPage, textSearch } from '../db/search.js';
import { notFound } from '../domain/errors.js';
import { PROSPECT_STATUSES } from '../domain/enums.js';
import { cachedValue } from './data-cache.js';
import { countedTotal, keysOf } from './row-counts.js';
import type { z } from '@hono/zod-openapi';
import type { Prospect } from '../schemas/resources.js';

export type ProspectRow = Selectable<ProspectsTable>;

export type ProspectRecord = z.output<typeof Prospect>;

/** Row → API (contract §2 "Prospect"): JSON columns → arrays; `project_id` stays internal. */
export const toProspect = (row: ProspectRow): ProspectRecord => ({
  id: row.id,
  siteId: row.site_id,
  sourceJobId: row.source_job_id,
  source: row.source,
  status: row.status,
  url: row.url,
  normalizedUrl: row.normalized_url,
  canonicalUrl: row.canonical_url,
  domain: row.domain,
  title: row.title,
  description: row.description,
  contentExcerpt: row.content_excerpt,
  pageType: row.page_type,
  opportunityType: row.opportunity_type,
  suggestedPlacement: row.suggested_placement,
  contactPaths: JSON.parse(row.contact_paths) as Record<string, unknown>[],
  relevanceScore: row.relevance_score,
  qualityScore: row.quality_score,
  riskScore: row.risk_score,
  matchReasons: JSON.parse(row.match_reasons) as string[],
  riskFlags: JSON.parse(row.risk_flags) as string[],
  domainAuthority: row.domain_authority,
  estimatedMonthlyTraffic: row.estimated_monthly_traffic,
  rankingPosition: row.ranking_position,
  rankingKeyword: row.ranking_keyword,
  crawlStatus: row.crawl_status,
  lastCrawledAt: row.last_crawled_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface ProspectFilter {
  /** The caller's project (already checked). */
  projectId: string;
  /** A site of that project (already checked); narrows the list to it. */
  siteId?: string;
  status?: ProspectRow['status'];
  /** Case-insensitive substring of title, domain, url or description; empty or absent: no filter. */
  search?: string;
}

/**
 * The WHERE clause of the prospect list. Site/project and status are the leading columns of one
 * of the four `prospects_{project,site}[_status]_order` indexes, which the list walks in order;
 * a search matches title, domain, url or description, case-insensitively for every script and
 * term length (`textSearch`, src/db/search.ts: the trigram index of each store).
 */
const prospectWhere =
  (db: Kysely<Database>, filter: ProspectFilter) => (eb: ExpressionBuilder<Database, 'prospects'>) => {
    const conditions: Expression<SqlBool>[] = [
      filter.siteId !== undefined ? eb('site_id', '=', filter.siteId) : eb('project_id', '=', filter.projectId),
    ];
    if (filter.status !== undefined) conditions.push(eb('status', '=', filter.status));
    const term = filter.search;
    if (term) {
      conditions.push(
        textSearch(db, term, { table: 'prospects', fts: 'prospects_fts' }, (contains) =>
          eb.or([contains('title'), contains('domain'), contains('url'), contains('description')]),
        ),
      );
    }
    return eb.and(conditions);
  };

/**
 * One page of a project's prospects matching `filter`, newest `createdAt` first (ties: `id`
 * descending), and the exact number of matches: from the `project:<status>` or `site:<status>`
 * counters (sql/sqlite/0003_row_counts.sql), or, with a search, counted (over the trigram matches,
 * or the scope's rows for a 1–2 character term) once per search until the data changes
 * (`cachedValue`). A search's statements run through `searchPage` (src/db/search.ts): within the
 * store's share for searches, off the event loop on SQLite.
 */
export async function listProspects(db: Kysely<Database>, filter: ProspectFilter, limit: number, offset: number) {
  const where = prospectWhere(db, filter);
  const [scope, kind] = filter.siteId !== undefined ? [filter.siteId, 'site'] : [filter.projectId, 'project'];
  const page = db
    .selectFrom('prospects')
    .selectAll()
    .where(where)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset);
  const [rows, total] = filter.search
    ? await searchPage(db, page, (count) =>
        cachedValue(db, ['prospects'], `prospects|${JSON.stringify(filter)}`, () =>
          count(
            db
              .selectFrom('prospects')
              .where(where)
              .select((eb) => eb.fn.countAll<number>().as('n')),
          ),
        ),
      )
    : await Promise.all([
        page.execute(),
        countedTotal(
          db,
          'prospects',
          scope,
          keysOf(kind, filter.status !== undefined ? [filter.status] : PROSPECT_STATUSES),
        ),
      ]);
  return { items: rows.map(toProspect), total };
}

/**
 * The prospect `prospectId` of project `projectId` (already checked to be the caller's).
 * @throws ApiError NOT_FOUND when it is missing or belongs to another project.
 */
export async function requireProspect(
  db: Kysely<Database>,
  projectId: string,
  prospectId: string,
): Promise<ProspectRecord> {
  const row = await db
    .selectFrom('prospects')
    .selectAll()
    .where('id', '=', prospectId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) throw notFound('Prospect');
  return toProspect(row);
}

/** The row of prospect `prospectId` (any project's), or undefined when it no longer exists. */
export async function findProspectRow(db: Kysely<Database>, prospectId: string): Promise<ProspectRow | undefined> {
  return await db.selectFrom('prospects').selectAll().where('id', '=', prospectId).executeTakeFirst();
}
