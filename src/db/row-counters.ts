/**
 * The row counters of `row_counts` (sql/sqlite/0003_row_counts.sql and its PostgreSQL twin): the
 * counted tables. Reading the counters is `src/repos/row-counts.ts`'s; pausing them for a bulk
 * load is `pauseRowCounts` (./bulk-load.ts), which each dialect does its own way
 * (./sqlite/row-counters.ts, ./postgres/pieces.ts).
 */

/** The tables whose list totals come from `row_counts` (kept by their counting triggers). */
export const COUNTED_TABLES = [
  'backlinks',
  'backlink_checks',
  'prospects',
  'contacts',
  'drafts',
  'threads',
  'thread_messages',
  'discovery_jobs',
  'discovery_queries',
  'keywords',
  'blocked_domains',
  'leads',
] as const;
export type CountedTable = (typeof COUNTED_TABLES)[number];
