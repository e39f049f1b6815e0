/**
 * Prospect and contact discovery jobs of a site and their search queries: queries and the row →
 * API mappers (contract §2 "Discovery job", "Discovery job detail"; decisions.md §5 for order,
 * §11 for the value lists).
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, DiscoveryJobsTable, DiscoveryQueriesTable } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { countedByKey, countedTotal } from './row-counts.js';
import { twoPartPage } from './two-part-page.js';
import type { z } from '@hono/zod-openapi';
import type { DiscoveryJob, DiscoveryQuery } from '../schemas/resources.js';

export type DiscoveryJobRow = Selectable<DiscoveryJobsTable>;
export type DiscoveryQueryRow = Selectable<DiscoveryQueriesTable>;

export type DiscoveryJobRecord = z.output<typeof DiscoveryJob>;

export type DiscoveryQueryRecord = z.output<typeof DiscoveryQuery>;

/** Row → API (contract §2 "Discovery job"); `site_id`, `project_id` and `last_error` stay internal. */
export const toDiscoveryJob = (row: DiscoveryJobRow): DiscoveryJobRecord => ({
  id: row.id,
  type: row.type,
  status: row.status,
  subjectType: row.subject_type,
  subjectId: row.subject_id,
  currentAttempt: row.current_attempt,
  maxAttempts: row.max_attempts,
  scheduledAt: row.scheduled_at,
  canceledAt: row.canceled_at,
  completedAt: row.completed_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Row → API (contract §2 "Discovery query"): `has_error` 0/1 → boolean; `job_id` stays internal. */
export const toDiscoveryQuery = (row: DiscoveryQueryRow): DiscoveryQueryRecord => ({
  id: row.id,
  query: row.query,
  status: row.status,
  opportunityType: row.opportunity_type,
  rawResultCount: row.raw_result_count,
  uniqueCandidateCount: row.unique_candidate_count,
  qualifiedCount: row.qualified_count,
  startedAt: row.started_at,
  completedAt: row.completed_at,
  errorCode: row.error_code,
  hasError: row.has_error === 1,
});

/**
 * One page of a site's discovery jobs (the site already checked to be in the caller's project),
 * newest `createdAt` first (ties: `id` descending; index `discovery_jobs_site_order`), and the
 * exact number of them (the `site` counter).
 */
export async function listDiscoveryJobs(db: Kysely<Database>, siteId: string, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('discovery_jobs')
      .selectAll()
      .where('site_id', '=', siteId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
    countedTotal(db, 'discovery_jobs', siteId, ['site']),
  ]);
  return { items: rows.map(toDiscoveryJob), total };
}

/**
 * The discovery job `jobId` of site `siteId` (already checked to be in the caller's project).
 * @throws ApiError NOT_FOUND when it is missing or belongs to another site (decisions.md §1).
 */
export async function requireDiscoveryJob(
  db: Kysely<Database>,
  siteId: string,
  jobId: string,
): Promise<DiscoveryJobRecord> {
  const row = await db
    .selectFrom('discovery_jobs')
    .selectAll()
    .where('id', '=', jobId)
    .where('site_id', '=', siteId)
    .executeTakeFirst();
  if (!row) throw notFound('Discovery job');
  return toDiscoveryJob(row);
}

/**
 * One page of the queries of job `jobId` (already checked to be in the caller's site), and the
 * exact number of them (the `job:1` and `job:0` counters: started and not). Order
 * (decisions.md §5): oldest `startedAt` first, queries not started yet (null `startedAt`) last;
 * ties by `id` ascending.
 *
 * Paged in two parts, each an in-order walk of `discovery_queries_job_order` (job_id,
 * started_at, id): the range `started_at IS NOT NULL`, then the range `started_at IS NULL`
 * (SQLite puts NULL first in an index, the contract puts it last).
 */
export async function listDiscoveryQueries(db: Kysely<Database>, jobId: string, limit: number, offset: number) {
  const counts = await countedByKey(db, 'discovery_queries', jobId, ['job:1', 'job:0']);
  const started = counts['job:1'];
  const total = started + counts['job:0'];
  const job = db.selectFrom('discovery_queries').selectAll().where('job_id', '=', jobId);
  const rows = await twoPartPage(
    { limit, offset },
    { firstCount: started, total },
    (n, skip) =>
      job.where('started_at', 'is not', null).orderBy('started_at').orderBy('id').limit(n).offset(skip).execute(),
    (n, skip) => job.where('started_at', 'is', null).orderBy('id').limit(n).offset(skip).execute(),
  );
  return { items: rows.map(toDiscoveryQuery), total };
}
