/**
 * Paging a list whose order is two index walks one after the other (decisions.md §5): a part
 * whose sort key is set (sent messages, started queries) in key order, then the part whose key
 * is null. SQLite's index puts NULL first and the contract puts it last, so one ORDER BY cannot
 * walk the index in order; two ranged walks can.
 */

/** Fetches `limit` rows of one part, after skipping `offset` of them. */
type PartQuery<R> = (limit: number, offset: number) => Promise<R[]>;

/**
 * The rows at `offset` (up to `limit`) of the list `first` then `second`.
 * @param firstCount rows in the first part; `total` rows in both (from the row counters).
 */
export async function twoPartPage<R>(
  page: { limit: number; offset: number },
  counts: { firstCount: number; total: number },
  first: PartQuery<R>,
  second: PartQuery<R>,
): Promise<R[]> {
  const { limit, offset } = page;
  const rows = offset < counts.firstCount ? await first(limit, offset) : [];
  const rest = limit - rows.length;
  if (rest > 0 && offset + rows.length < counts.total) {
    rows.push(...(await second(rest, Math.max(0, offset - counts.firstCount))));
  }
  return rows;
}
