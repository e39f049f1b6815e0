/**
 * What a PostgreSQL store can do (see `StoreCapabilities`), apart from ./store.ts so that asking
 * (`capabilitiesAt`) does not load the `pg` driver: a SQLite start never loads it.
 */
import type { StoreCapabilities } from '../store.js';

/** Every instance may use the database at once; no snapshot (the fixture needs SQLite). */
export const POSTGRES_CAPABILITIES: StoreCapabilities = {
  product: 'PostgreSQL',
  canSnapshot: false,
  sharedByInstances: true,
};
