/**
 * Pipeline status of a site: its prospects, drafts, threads and backlinks counted by status
 * (contract §4 "pipeline status"; the status lists of contract §3 and decisions.md §11).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { BACKLINK_STATUSES, DRAFT_STATUSES, PROSPECT_STATUSES, THREAD_STATUSES } from '../schemas/enums.js';

type Counts<T extends readonly string[]> = Record<T[number], number>;

export interface PipelineRecord {
  siteId: string;
  prospects: Counts<typeof PROSPECT_STATUSES>;
  drafts: Counts<typeof DRAFT_STATUSES>;
  threads: Counts<typeof THREAD_STATUSES>;
  backlinks: Counts<typeof BACKLINK_STATUSES>;
}

/** `{ status: n }` for every value of `statuses`, 0 where `rows` has none. */
function countsOf<T extends readonly string[]>(statuses: T, rows: { status: string; n: number | bigint }[]): Counts<T> {
  const counts = Object.fromEntries(statuses.map((s) => [s, 0])) as Counts<T>;
  for (const row of rows) if (row.status in counts) counts[row.status as T[number]] = Number(row.n);
  return counts;
}

type StatusTable = 'prospects' | 'drafts' | 'threads' | 'backlinks';

/** `SELECT status, count(*) … WHERE site_id = ? GROUP BY status` over `table`. */
const countByStatus = (db: Kysely<Database>, table: StatusTable, siteId: string) =>
  db
    .selectFrom(table)
    .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
    .where('site_id', '=', siteId)
    .groupBy('status')
    .execute() as Promise<{ status: string; n: number }[]>;

/**
 * The counts of site `siteId` (already checked to be in the caller's project) by status: every
 * status of each list is present, 0 when the site has none.
 *
 * Prospects, drafts and backlinks are counted on their `*_site_status_order` indexes (a covering
 * walk, grouped in index order). Threads have no (site_id, status) index: their count walks
 * `threads_site_order` and reads each thread's row.
 */
export async function getPipeline(db: Kysely<Database>, siteId: string): Promise<PipelineRecord> {
  const [prospects, drafts, threads, backlinks] = await Promise.all([
    countByStatus(db, 'prospects', siteId),
    countByStatus(db, 'drafts', siteId),
    countByStatus(db, 'threads', siteId),
    countByStatus(db, 'backlinks', siteId),
  ]);
  return {
    siteId,
    prospects: countsOf(PROSPECT_STATUSES, prospects),
    drafts: countsOf(DRAFT_STATUSES, drafts),
    threads: countsOf(THREAD_STATUSES, threads),
    backlinks: countsOf(BACKLINK_STATUSES, backlinks),
  };
}
