/**
 * A per-store cache of values derived from the data (deep-page anchors, search totals), emptied
 * the moment the data changes: each use compares `Store.changeStamp()` (our own writes, commits by
 * other connections such as an `outreach-api import` while the server runs, and a fixture reset).
 * So a cached value is always the one a fresh query would give. Memory: at most `MAX_ENTRIES`
 * entries per store.
 */
import type { Kysely } from 'kysely';
import { type Store, storeOf } from '../db/connection.js';
import type { Database } from '../db/schema.js';

/** Entries kept per store; past it the cache starts over. */
const MAX_ENTRIES = 512;

interface StoreCache {
  stamp: string;
  entries: Map<string, unknown>;
}

/** Per store: one store's values never serve another. */
const byStore = new WeakMap<Store, StoreCache>();

/**
 * The cache of the current data of `db`'s store: a map valid until the next change to the store.
 * Costs the change stamp (two small statements). Where nothing may be cached, a map of its own
 * that nothing else sees: in a transaction (its reads may see its own writes, which a rollback
 * takes back without a new stamp), and where the store gives no stamp (`Store.changeStamp()`:
 * PostgreSQL, which cannot tell when its data changes, decisions.md §16; SQLite while a transaction
 * is open on its connection, whose writes the search readers cannot see yet).
 * @throws Error when `db` is not an open store's query builder (`storeOf`).
 */
export function dataCache(db: Kysely<Database>): Map<string, unknown> {
  return keptDataCache(db) ?? new Map();
}

/**
 * `dataCache(db)` where what is put in it is kept for later calls; null where nothing may be
 * cached (see `dataCache`), for callers that would work differently when nothing is kept.
 * @throws Error when `db` is not an open store's query builder (`storeOf`).
 */
export function keptDataCache(db: Kysely<Database>): Map<string, unknown> | null {
  const store = storeOf(db);
  const stamp = db.isTransaction ? null : store.changeStamp();
  if (stamp === null) return null;
  let cache = byStore.get(store);
  if (!cache || cache.stamp !== stamp || cache.entries.size >= MAX_ENTRIES) {
    cache = { stamp, entries: new Map() };
    byStore.set(store, cache);
  }
  return cache.entries;
}

/**
 * `count()`'s answer for `key`, from the cache while the data is unchanged. For the totals of
 * searches, which no counter keeps: paging through one search's results counts its matches once.
 * @param key identifies the table and every filter value: the table name, `|`, the filter as JSON.
 */
export async function cachedCount(db: Kysely<Database>, key: string, count: () => Promise<number>): Promise<number> {
  const cache = dataCache(db);
  const hit = cache.get(key);
  if (typeof hit === 'number') return hit;
  const n = await count();
  cache.set(key, n);
  return n;
}
