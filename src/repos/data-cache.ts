/**
 * A per-store cache of values derived from the data (deep-page anchors, search totals), emptied
 * the moment the data changes. Each use compares the store's change stamp: `total_changes()` of
 * this connection (our own writes) and `PRAGMA data_version` (commits by other connections,
 * e.g. an `outreach-api import` while the server runs). So a cached value is always the one a
 * fresh query would give. Memory: at most `MAX_ENTRIES` entries per store.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

const TOTAL_CHANGES = CompiledQuery.raw('SELECT total_changes() AS n');
const DATA_VERSION = CompiledQuery.raw('PRAGMA data_version');

/** Entries kept per store; past it the cache starts over. */
const MAX_ENTRIES = 512;

interface StoreCache {
  stamp: string;
  entries: Map<string, unknown>;
}

/** Per query builder (one per store): one store's values never serve another. */
const byStore = new WeakMap<Kysely<Database>, StoreCache>();

/**
 * The cache of `db`'s current data: a map valid until the next write to the store. Costs one
 * small query (the change stamp).
 */
export async function dataCache(db: Kysely<Database>): Promise<Map<string, unknown>> {
  // Two plain statements, as `Store.changeStamp()`: cheaper than the table-valued pragma.
  const [own, others] = await Promise.all([
    db.executeQuery<{ n: number }>(TOTAL_CHANGES),
    db.executeQuery<{ data_version: number }>(DATA_VERSION),
  ]);
  const stamp = `${own.rows[0]!.n}:${others.rows[0]!.data_version}`;
  let cache = byStore.get(db);
  if (!cache || cache.stamp !== stamp || cache.entries.size >= MAX_ENTRIES) {
    cache = { stamp, entries: new Map() };
    byStore.set(db, cache);
  }
  return cache.entries;
}

/**
 * `count()`'s answer for `key`, from the cache while the data is unchanged. For the totals of
 * searches, which no counter keeps: paging through one search's results counts its matches once.
 * @param key identifies the table and every filter value: the table name, `|`, the filter as JSON.
 */
export async function cachedCount(db: Kysely<Database>, key: string, count: () => Promise<number>): Promise<number> {
  const cache = await dataCache(db);
  const hit = cache.get(key);
  if (typeof hit === 'number') return hit;
  const n = await count();
  cache.set(key, n);
  return n;
}
