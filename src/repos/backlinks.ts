/**
 * Tracked backlinks and their checks: queries and the row → API mappers (contract §2 "Backlink",
 * "Backlink check"; decisions.md §5 for order and `hasCheckError`).
 */
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { BacklinkChecksTable, BacklinksTable, Database } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { BACKLINK_STATUSES } from '../domain/enums.js';
import { type OrderKey, pageStart } from './page-anchors.js';
import { countedTotal, keysOf } from './row-counts.js';
import type { z } from '@hono/zod-openapi';
import type { Backlink, BacklinkCheck } from '../schemas/resources.js';

export type BacklinkRow = Selectable<BacklinksTable>;
export type BacklinkCheckRow = Selectable<BacklinkChecksTable>;

export type BacklinkRecord = z.output<typeof Backlink>;

export type BacklinkCheckRecord = z.output<typeof BacklinkCheck>;

/** Row → API (contract §2 "Backlink"); `project_id` stays internal. */
export const toBacklink = (row: BacklinkRow): BacklinkRecord => ({
  id: row.id,
  siteId: row.site_id,
  source: row.source,
  acquisitionOrigin: row.acquisition_origin,
  sourceUrl: row.source_url,
  targetUrl: row.target_url,
  category: row.category,
  status: row.status,
  observedAnchor: row.observed_anchor,
  lastCheckedAt: row.last_checked_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Row → API (contract §2 "Backlink check"): 0/1 → booleans, `observed_rel` JSON → array. */
export const toBacklinkCheck = (row: BacklinkCheckRow): BacklinkCheckRecord => ({
  id: row.id,
  status: row.status,
  requestedSourceUrl: row.requested_source_url,
  finalSourceUrl: row.final_source_url,
  httpStatus: row.http_status,
  targetFound: row.target_found === 1,
  observedTargetUrl: row.observed_target_url,
  observedAnchor: row.observed_anchor,
  observedRel: JSON.parse(row.observed_rel) as string[],
  hasError: row.has_error === 1,
  checkedAt: row.checked_at,
});

export interface BacklinkFilter {
  /** The caller's project (already checked). */
  projectId: string;
  /** A site of that project (already checked); narrows the list to it. */
  siteId?: string;
  status?: BacklinkRow['status'];
}

/**
 * The WHERE clause of the backlink list: exactly the leading columns of one of the four
 * `backlinks_{project,site}[_status]_order` indexes, so the list walks it in order.
 * A site filter replaces the project one: the site was checked to belong to the project.
 */
const backlinkWhere = (filter: BacklinkFilter) => (eb: ExpressionBuilder<Database, 'backlinks'>) =>
  eb.and([
    filter.siteId !== undefined ? eb('site_id', '=', filter.siteId) : eb('project_id', '=', filter.projectId),
    ...(filter.status !== undefined ? [eb('status', '=', filter.status)] : []),
  ]);

/**
 * One page of a project's backlinks matching `filter`, newest `createdAt` first (ties: `id`
 * descending), and the exact number of matches, from the `project:<status>` or `site:<status>`
 * counters (sql/0003_row_counts.sql). A deep page seeks from the nearest anchor
 * (`./page-anchors.ts`) rather than walking the whole OFFSET.
 */
export async function listBacklinks(db: Kysely<Database>, filter: BacklinkFilter, limit: number, offset: number) {
  const [scope, kind] = filter.siteId !== undefined ? [filter.siteId, 'site'] : [filter.projectId, 'project'];
  // In list order, starting at the row whose key is `from` (newest first, so keys at or below it).
  const fromKey = (from: OrderKey | null) =>
    db
      .selectFrom('backlinks')
      .where(backlinkWhere(filter))
      .$if(from !== null, (qb) =>
        qb.where((eb) => eb(eb.refTuple('created_at', 'id'), '<=', eb.tuple(String(from![0]), from![1]))),
      )
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc');
  const start = await pageStart(
    db,
    `backlinks|${kind}:${scope}|${filter.status ?? '*'}`,
    offset,
    async (from, skip) => {
      const row = await fromKey(from).select(['created_at', 'id']).limit(1).offset(skip).executeTakeFirst();
      return row && ([row.created_at, row.id] as const);
    },
  );
  const [rows, total] = await Promise.all([
    fromKey(start.from).selectAll().limit(limit).offset(start.skip).execute(),
    countedTotal(
      db,
      'backlinks',
      scope,
      keysOf(kind, filter.status !== undefined ? [filter.status] : BACKLINK_STATUSES),
    ),
  ]);
  return { items: rows.map(toBacklink), total };
}

/**
 * The backlink `backlinkId` of project `projectId` (already checked to be the caller's).
 * @throws ApiError NOT_FOUND when it is missing or belongs to another project.
 */
export async function requireBacklink(
  db: Kysely<Database>,
  projectId: string,
  backlinkId: string,
): Promise<BacklinkRecord> {
  const row = await db
    .selectFrom('backlinks')
    .selectAll()
    .where('id', '=', backlinkId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) throw notFound('Backlink');
  return toBacklink(row);
}

/**
 * One page of a backlink's checks, newest `checkedAt` first (ties: `id` descending), the exact
 * number of checks (its `backlink` counter), and `hasCheckError`: the `hasError` of the newest
 * check, false when none (decisions.md §5).
 */
export async function listBacklinkChecks(db: Kysely<Database>, backlinkId: string, limit: number, offset: number) {
  const newestFirst = db
    .selectFrom('backlink_checks')
    .where('backlink_id', '=', backlinkId)
    .orderBy('checked_at', 'desc')
    .orderBy('id', 'desc');
  const [rows, total, newest] = await Promise.all([
    newestFirst.selectAll().limit(limit).offset(offset).execute(),
    countedTotal(db, 'backlink_checks', backlinkId, ['backlink']),
    newestFirst.select('has_error').limit(1).executeTakeFirst(),
  ]);
  return { items: rows.map(toBacklinkCheck), total, hasCheckError: newest?.has_error === 1 };
}
