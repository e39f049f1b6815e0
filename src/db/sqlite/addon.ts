/**
 * Where a worker thread finds the better-sqlite3 addon the store's own connection uses: the
 * store's threads (`./store-thread.ts`: WAL checkpoints and search readers) load it again there,
 * with `process.dlopen`, so they need no JavaScript file on disk (the single executable has none).
 */
import { createRequire } from 'node:module';
import { addonFileOf } from '../../native.js';

/** Whether this runs under Deno (SQLite is then `node:sqlite`, which a worker opens by itself). */
export const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';

/**
 * The better-sqlite3 addon file the store's connection was loaded from (the checkout's, or the
 * file the single executable extracted it to), or null under Deno or when it cannot be found.
 */
export function addonFile(): string | null {
  if (isDeno) return null;
  const native = (globalThis as { __OUTREACH_NATIVE_SQLITE__?: unknown }).__OUTREACH_NATIVE_SQLITE__;
  if (typeof native === 'string') return native;
  if (native !== undefined) return addonFileOf(native);
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
  } catch {
    return null;
  }
}
