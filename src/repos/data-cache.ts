/**
 * A per-store cache of values derived from the data (deep-page anchors, search totals), emptied
 * the moment the data changes: each use asks the store's change stamps (`Store.stamps`,
 * src/db/change-stamps.ts: our own writes, commits by other processes or instances such as an
 * `outreach-api import` while the server runs, a fixture reset), once per request. So a cached
 * value is always the one a fresh query would give (decisions.md §16 "Caches"). Memory: at most
 * `MAX_ENTRIES` entries per store.
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
 * The cache of the current data of `db`'s store: a map valid until the next change to the store,
 * or null where nothing may be kept: in a transaction (its reads may see its own writes, which a
 * rollback takes back), and where the store's stamp proves nothing (`Store.stamps.current()` is
 * null: SQLite while a transaction is open on its connection, PostgreSQL before its stamps'
 * migration). Read it before the values put in it are read.
 * @throws Error when `db` is not an open store's query builder (`storeOf`); what the stamp's read
 *   throws (PostgreSQL unreachable).
 */
export async function keptDataCache(db: Kysely<Database>): Promise<Map<string, unknown> | null> {
  if (db.isTransaction) return null;
  const store = storeOf(db);
  const stamp = await store.stamps.current();
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
  const cache = await keptDataCache(db);
  const hit = cache?.get(key);
  if (typeof hit === 'number') return hit;
  const n = await count();
  cache?.set(key, n);
  return n;
}
