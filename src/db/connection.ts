/**
 * Opening the store: the one entry point (`openStore`) for every command and the server. The
 * store's shape and its transactions are in `./store.ts`; SQLite's connection in `./sqlite/store.ts`.
 */
import { isPostgresUrl } from './location.js';
import { POSTGRES_CAPABILITIES } from './postgres/capabilities.js';
import { openSqliteStore, SQLITE_CAPABILITIES } from './sqlite/store.js';
import type { OpenOptions, Store, StoreCapabilities } from './store.js';

export type { OpenOptions, Store, StoreCapabilities, TracedQuery } from './store.js';
export { inTransaction, storeOf } from './store.js';
export { describeLocation, withoutPasswords } from './location.js';

/**
 * Opens the store at `location` (decisions.md §16): a `postgres://` or `postgresql://` URL opens
 * a pool on that PostgreSQL database (no connection is made before the first statement);
 * anything else is a SQLite file's path (created, with its directory, when missing) or
 * `:memory:`. Does not migrate: see `migrate()`. The PostgreSQL store (and the `pg` driver) is
 * loaded only here, when a URL asks for it: a SQLite start never pays for it (docs/performance.md).
 * @throws when the SQLite file cannot be opened or is not a SQLite database.
 */
export async function openStore(location: string, options: OpenOptions = {}): Promise<Store> {
  if (isPostgresUrl(location)) {
    const { openPostgresStore } = await import('./postgres/store.js');
    return openPostgresStore(location, options);
  }
  return openSqliteStore(location, options);
}

/**
 * What the store at `location` can do, before it is opened (for the commands that refuse early
 * what it cannot: `serve --fixture` needs `canSnapshot`); the same as the opened store's.
 */
export const capabilitiesAt = (location: string): StoreCapabilities =>
  isPostgresUrl(location) ? POSTGRES_CAPABILITIES : SQLITE_CAPABILITIES;
