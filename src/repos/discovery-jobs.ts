/**
 * Prospect and contact discovery jobs of a site and their search queries: queries and the row →
 * API mappers (contract §2 "Discovery job", "Discovery job detail"; decisions.md §5 for order,
 * §11 for the value lists), and the queue of `contact_discovery` jobs accepted through the API
 * (`ContactDiscoveryJobs`, decisions.md §10).
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import { insertRow, precompiledQuery } from '../db/compiled.js';
import type { Database, DiscoveryJobsTable, DiscoveryQueriesTable } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { newestFirstPage } from './newest-first-page.js';
import { countedByKey } from './row-counts.js';
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
  const { rows, total } = await newestFirstPage(db, 'discovery_jobs', siteId, limit, offset);
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

/** Where a prospect sits: its id and its site's and project's, for the records made from it. */
export interface ProspectPlace {
  id: string;
  siteId: string;
  projectId: string;
}

// The literal keeps the partial index `discovery_jobs_runnable` (WHERE status = 'queued') usable.
const queued = sql.lit<DiscoveryJobRow['status']>('queued');

const due = precompiledQuery((db, param) =>
  db
    .selectFrom('discovery_jobs as j')
    .innerJoin('contact_discovery_work as w', 'w.job_id', 'j.id')
    .selectAll('j')
    .where('j.status', '=', queued)
    .where('j.scheduled_at', '<=', param('now'))
    .orderBy('j.scheduled_at')
    .orderBy('j.id')
    .limit(param<number>('limit')),
);

const claim = precompiledQuery((db, param) =>
  db
    .updateTable('discovery_jobs')
    .set((eb) => ({ status: 'running', current_attempt: eb('current_attempt', '+', 1), updated_at: param('now') }))
    .where('id', '=', param('id'))
    .where('status', '=', queued),
);

const finish = precompiledQuery((db, param) =>
  db
    .updateTable('discovery_jobs')
    .set({
      status: param<DiscoveryJobRow['status']>('status'),
      completed_at: param<string | null>('completedAt'),
      last_error: param<string | null>('error'),
      updated_at: param('now'),
    })
    .where('id', '=', param('id')),
);

const retry = precompiledQuery((db, param) =>
  db
    .updateTable('discovery_jobs')
    .set({
      status: 'queued',
      scheduled_at: param('scheduledAt'),
      last_error: param('error'),
      updated_at: param('now'),
    })
    .where('id', '=', param('id')),
);

const requeue = precompiledQuery((db, param) =>
  db
    .updateTable('discovery_jobs')
    .set({ status: 'queued', updated_at: param('now') })
    .where('status', '=', 'running')
    .where('updated_at', '<=', param('cutoff'))
    .where('id', 'in', db.selectFrom('contact_discovery_work').select('job_id')),
);

/**
 * The `contact_discovery` jobs accepted through the API (decisions.md §10): each is a
 * `discovery_jobs` row with a `contact_discovery_work` row naming its prospect; only those are
 * run, so imported job history is never re-run. Each statement is compiled once; the enqueue
 * runs inside the request's idempotency transaction (give it that transaction). A job moves
 * queued → running → completed or failed. Date-times are ISO 8601 strings.
 */
export const contactDiscoveryJobs = {
  /**
   * In a transaction: a queued `contact_discovery` job for `prospect`, due at `now`, allowed
   * `maxAttempts` attempts; resolves with it.
   */
  async enqueue(
    db: Kysely<Database>,
    prospect: ProspectPlace,
    maxAttempts: number,
    now: string,
  ): Promise<DiscoveryJobRecord> {
    const row: DiscoveryJobRow = {
      id: newId('job'),
      site_id: prospect.siteId,
      project_id: prospect.projectId,
      type: 'contact_discovery',
      status: 'queued',
      subject_type: 'prospect',
      subject_id: prospect.id,
      current_attempt: 0,
      max_attempts: maxAttempts,
      scheduled_at: now,
      canceled_at: null,
      completed_at: null,
      last_error: null,
      created_at: now,
      updated_at: now,
    };
    await insertRow(db, 'discovery_jobs', row);
    await insertRow(db, 'contact_discovery_work', { job_id: row.id, prospect_id: prospect.id });
    return toDiscoveryJob(row);
  },

  /** Up to `limit` queued jobs of the API scheduled at or before `now`, soonest first. */
  dueJobs(db: Kysely<Database>, now: string, limit: number): Promise<DiscoveryJobRow[]> {
    return due.all(db, { now, limit });
  },

  /** Takes job `id` for one attempt (`running`, `current_attempt` + 1) if it is still queued; false when not. */
  async claimAttempt(db: Kysely<Database>, id: string, now: string): Promise<boolean> {
    return (await claim.run(db, { id, now })) > 0;
  },

  /** Ends job `id`: `completed` at `now`, or `failed` with `error`. */
  async finishJob(
    db: Kysely<Database>,
    id: string,
    outcome: { status: 'completed' } | { status: 'failed'; error: string },
    now: string,
  ): Promise<void> {
    await finish.run(
      db,
      outcome.status === 'completed'
        ? { id, status: 'completed', completedAt: now, error: null, now }
        : { id, status: 'failed', completedAt: null, error: outcome.error, now },
    );
  },

  /** Queues job `id` again for `scheduledAt`, recording `error`. */
  async retryLater(db: Kysely<Database>, id: string, scheduledAt: string, error: string, now: string): Promise<void> {
    await retry.run(db, { id, scheduledAt, error, now });
  },

  /**
   * Queues again the API's jobs left `running` by a process that stopped: those taken (their
   * `updated_at`, set when taken) at or before `cutoff`, a lease ago; resolves with how many.
   */
  recoverInterrupted(db: Kysely<Database>, now: string, cutoff: string): Promise<number> {
    return requeue.run(db, { now, cutoff });
  },
};
