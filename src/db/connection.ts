/**
 * Opening the store: the one entry point (`openStore`) for every command and the server. The
 * store's shape and its transactions are in `./store.ts`; SQLite's connection in `./sqlite.ts`.
 */
import { openSqliteStore } from './sqlite.js';
import type { OpenOptions, Store } from './store.js';

export type { OpenOptions, Store, TracedQuery } from './store.js';
export { inTransaction, storeOf } from './store.js';

/**
 * Opens the store at `location`: a SQLite file's path (created, with its directory, when missing),
 * or `:memory:`. Does not migrate: see `migrate()`.
 * @throws when the file cannot be opened or is not a SQLite database.
 */
export async function openStore(location: string, options: OpenOptions = {}): Promise<Store> {
  return openSqliteStore(location, options);
}
