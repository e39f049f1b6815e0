/**
 * Pipeline status of a site: its prospects, drafts, threads and backlinks counted by status
 * (contract §4 "pipeline status"; the status lists of contract §3 and decisions.md §11).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { BACKLINK_STATUSES, DRAFT_STATUSES, PROSPECT_STATUSES, THREAD_STATUSES } from '../domain/enums.js';
import { countersOf } from './row-counts.js';
import type { z } from '@hono/zod-openapi';
import type { Pipeline } from '../schemas/resources.js';

type Counts<T extends readonly string[]> = Record<T[number], number>;

export type PipelineRecord = z.output<typeof Pipeline>;

/** `{ status: n }` for every value of `statuses`, 0 where `rows` has none. */
function countsOf<T extends readonly string[]>(statuses: T, rows: { status: string; n: number | bigint }[]): Counts<T> {
  const counts = Object.fromEntries(statuses.map((s) => [s, 0])) as Counts<T>;
  for (const row of rows) if (row.status in counts) counts[row.status as T[number]] = Number(row.n);
  return counts;
}

type StatusTable = 'prospects' | 'drafts' | 'threads' | 'backlinks';
const STATUS_TABLES: readonly StatusTable[] = ['prospects', 'drafts', 'threads', 'backlinks'];

/** `{ status: n }` from a table's `site:<status>` counters; its other counters are ignored. */
const siteCounts = (counters: Record<string, number>) =>
  Object.entries(counters)
    .filter(([key]) => key.startsWith('site:'))
    .map(([key, n]) => ({ status: key.slice('site:'.length), n }));

/**
 * The counts of site `siteId` (already checked to be in the caller's project) by status: every
 * status of each list is present, 0 when the site has none.
 *
 * Read from the `site:<status>` counters of the four tables (sql/sqlite/0003_row_counts.sql): one
 * primary-key range of `row_counts` per table, whatever the size of the site.
 */
export async function getPipeline(db: Kysely<Database>, siteId: string): Promise<PipelineRecord> {
  const counters = await countersOf(db, STATUS_TABLES, siteId);
  return {
    siteId,
    prospects: countsOf(PROSPECT_STATUSES, siteCounts(counters.prospects!)),
    drafts: countsOf(DRAFT_STATUSES, siteCounts(counters.drafts!)),
    threads: countsOf(THREAD_STATUSES, siteCounts(counters.threads!)),
    backlinks: countsOf(BACKLINK_STATUSES, siteCounts(counters.backlinks!)),
  };
}
