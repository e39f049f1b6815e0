/**
 * Deep pages without a long OFFSET walk. `LIMIT 25 OFFSET 500000` makes SQLite step over half a
 * million index entries on every request (about 40 ms at a million rows). Instead, for each list
 * (a table, its filter and its order) we remember the sort key of every `ANCHOR_STRIDE`-th row,
 * found once by walking from the previous anchor, and serve a deep page as a seek to the nearest
 * anchor plus an OFFSET shorter than the stride. The page is the same rows a plain OFFSET gives.
 *
 * Anchors are only valid for the data they were read from: they live in the store's data cache
 * of the list's table (`keptDataCache`), which any write to it empties, on this instance or
 * another (decisions.md §16 "Caches"). Memory: (rows / `ANCHOR_STRIDE`) keys per list, for at
 * most as many lists as that cache keeps.
 *
 * Where nothing can be kept (a transaction; SQLite while one is open on its connection), the
 * anchors would be read again on every request, one statement per stride (122 for page 20,000 of
 * 25): the start of the page is then read with one statement that walks the whole offset over the
 * covering index instead (on PostgreSQL an index-only scan: 31–38 ms for 500,000 rows on the busy
 * 2-core machine, against one round trip per stride).
 */
import type { Kysely } from 'kysely';
import type { StampedTable } from '../db/change-stamps.js';
import type { Database } from '../db/schema.js';
import { keptDataCache } from './data-cache.js';

/** Rows between two anchors: the longest OFFSET a deep page still walks. */
export const ANCHOR_STRIDE = 4096;

/** The order key of one row: its leading sort column's value and its id (the tie-breaker). */
export type OrderKey = readonly [string | number, string];

/**
 * Where a page starts: the rows at or after `from` in the list's order (all rows when null),
 * skipping `skip` of them.
 */
export interface PageStart {
  from: OrderKey | null;
  skip: number;
}

/**
 * The key of the row `skip` rows after the first row at or after `from` (the first row of the
 * list when `from` is null); undefined past the end. Must walk a covering index.
 */
export type NthKey = (from: OrderKey | null, skip: number) => Promise<OrderKey | undefined>;

/**
 * Where the page at `offset` of list `list` of `table` starts. Offsets below `ANCHOR_STRIDE`
 * start at the top; deeper ones at the nearest anchor at or before them, reading the missing
 * anchors with `nth` first (one walk of the rows up to `offset`, once per list and version of
 * `table`).
 * @param list identifies the table, filter values and order, e.g. `backlinks|project:prj_1|live`.
 */
export async function pageStart(
  db: Kysely<Database>,
  table: StampedTable,
  list: string,
  offset: number,
  nth: NthKey,
): Promise<PageStart> {
  if (offset < ANCHOR_STRIDE) return { from: null, skip: offset };
  const kept = await keptDataCache(db, [table]);
  if (kept === null) {
    const first = await nth(null, offset);
    if (first !== undefined) return { from: first, skip: 0 };
    // Past the end: the walk below stops at the last anchor, so the page's own walk stays short.
  }
  const cache = kept ?? new Map<string, unknown>();
  const key = `anchors|${list}`;
  let anchors = cache.get(key) as OrderKey[] | undefined;
  if (!anchors) {
    anchors = [];
    cache.set(key, anchors);
  }
  // anchors[k] is the key of the row at offset (k + 1) * ANCHOR_STRIDE.
  const wanted = Math.floor(offset / ANCHOR_STRIDE);
  while (anchors.length < wanted) {
    const next = await nth(anchors.at(-1) ?? null, ANCHOR_STRIDE);
    if (next === undefined) break;
    anchors.push(next);
  }
  const usable = Math.min(anchors.length, wanted);
  if (usable === 0) return { from: null, skip: offset };
  return { from: anchors[usable - 1]!, skip: offset - usable * ANCHOR_STRIDE };
}
