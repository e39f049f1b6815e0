/**
 * A per-store cache of values derived from the data (a project with its site count, list and
 * search totals, deep-page anchors, `GET /me`'s counts), each kept with the tables it was read
 * from and emptied the moment one of them changes: each use asks the store's change stamps for
 * those tables (`Store.stamps`, src/db/change-stamps.ts: our own writes, commits by other
 * processes or instances such as an `outreach-api import` while the server runs, a fixture reset),
 * once per request. So a cached value is always the one a fresh query would give, and a write to
 * another table leaves it be (decisions.md §16 "Caches"). Memory: at most `MAX_ENTRIES` entries
 * per set of tables and store.
 */
import type { Kysely } from 'kysely';
import type { StampedTable } from '../db/change-stamps.js';
import { type Store, storeOf } from '../db/connection.js';
import type { Database } from '../db/schema.js';

/** Entries kept per set of tables and store; past it that set's cache starts over. */
const MAX_ENTRIES = 512;

interface TablesCache {
  stamp: string;
  entries: Map<string, unknown>;
}

/** Per store, per set of tables (their names joined by `,`): one store's values never serve another. */
const byStore = new WeakMap<Store, Map<string, TablesCache>>();

/**
 * The cache of values read from `tables` of `db`'s store: a map valid until the next change to
 * one of them, or null where nothing may be kept: in a transaction (its reads may see its own
 * writes, which a rollback takes back), and where the store's stamp proves nothing
 * (`Store.stamps.current(tables)` is null: SQLite while a transaction is open on its connection,
 * PostgreSQL before its stamps' migration or for a table it does not count). Read it before the
 * values put in it are read. Every caller reading the same tables names them in the same order.
 * @throws Error when `db` is not an open store's query builder (`storeOf`); what the stamp's read
 *   throws (PostgreSQL unreachable).
 */
export async function keptDataCache(
  db: Kysely<Database>,
  tables: readonly StampedTable[],
): Promise<Map<string, unknown> | null> {
  if (db.isTransaction) return null;
  const store = storeOf(db);
  const read = store.stamps.current(tables);
  const stamp = read instanceof Promise ? await read : read;
  if (stamp === null) return null;
  let caches = byStore.get(store);
  if (!caches) byStore.set(store, (caches = new Map()));
  const key = tables.join(',');
  let cache = caches.get(key);
  if (!cache || cache.stamp !== stamp || cache.entries.size >= MAX_ENTRIES) {
    cache = { stamp, entries: new Map() };
    caches.set(key, cache);
  }
  return cache.entries;
}

/**
 * `read()`'s answer for `key`, from the cache of `tables` while they are unchanged: a total
 * (paging through one search's results counts its matches once), a record every request of a
 * route looks up. What `read` throws is not kept. The value is shared by every request it
 * serves: callers do not change it.
 * @param key identifies the value and every input it was read with, e.g. the table name, `|`,
 *   the filter as JSON.
 */
export async function cachedValue<T>(
  db: Kysely<Database>,
  tables: readonly StampedTable[],
  key: string,
  read: () => Promise<T>,
): Promise<T> {
  const cache = await keptDataCache(db, tables);
  if (cache?.has(key)) return cache.get(key) as T;
  const value = await read();
  cache?.set(key, value);
  return value;
}
