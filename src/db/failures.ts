/**
 * Failures of the store that are no fault of the request (decisions.md §16 "Failures"; issue #21
 * item 3): the database cannot be reached, its file is damaged, its disk is full, or a statement
 * ran out of time. A request that meets one is answered 503 `SERVICE_UNAVAILABLE` with
 * `Retry-After`, never 500; and when the store itself is down (not merely slow), it is marked not
 * ready until a check that reaches the data succeeds again (`checkStore`), so `/readyz` takes the
 * instance out of a load balancer's rotation meanwhile.
 */
import { ShareFullError } from './share.js';
import type { Store } from './store.js';

/**
 * `down`: the store cannot serve (unreachable, refused, damaged, full): not ready until a check
 * passes. `busy`: this statement ran out of time (a lock, a long statement, a deadlock), was
 * refused its turn among the searches (`ShareFullError`) or was a stale prepared statement in a
 * transaction: answered 503, the store stays ready.
 */
export type StoreFailure = 'down' | 'busy';

/** SQLite primary result codes (better-sqlite3's `code` before any `_EXTENDED` part). */
const SQLITE_DOWN = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_CANTOPEN']);
const SQLITE_BUSY = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED']);
/** The same under `node:sqlite` (Deno), by primary result code number. */
const SQLITE_DOWN_NUMBERS = new Set([26, 11, 10, 13, 14]);
const SQLITE_BUSY_NUMBERS = new Set([5, 6]);

/** Socket errors of a PostgreSQL connection. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
/** `pg`'s own messages for a connection that failed or an answer that never came. */
const PG_DOWN_MESSAGE =
  /^(Connection terminated|Query read timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated unexpectedly)/;

/**
 * What `error` (thrown by a statement) says of the store, or null when it is the request's or
 * the code's own failure (a constraint, a syntax error).
 */
export function storeFailureOf(error: unknown): StoreFailure | null {
  if (typeof error !== 'object' || error === null) return null;
  if (error instanceof ShareFullError) return 'busy';
  const { code, errcode, message } = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_')) {
      const primary = code.replace(/^(SQLITE_[A-Z]+).*$/, '$1');
      if (SQLITE_DOWN.has(primary)) return 'down';
      if (SQLITE_BUSY.has(primary)) return 'busy';
      return null;
    }
    if (NETWORK_CODES.has(code)) return 'down';
    // SQLSTATE: 08 connection exception, 57P01-03 shut down or starting, 53 insufficient
    // resources, 28 authentication, 3D000 no such database: nothing this instance can serve.
    if (/^(08|28|53)/.test(code) || /^57P0[1-3]$/.test(code) || code === '3D000') return 'down';
    // 57014 statement timeout, 40001 serialization failure, 40P01 deadlock, 55P03 lock not available.
    if (code === '57014' || code === '40001' || code === '40P01' || code === '55P03') return 'busy';
    if (isStalePreparedStatement(error)) return 'busy';
  }
  if (typeof errcode === 'number') {
    const primary = errcode & 0xff;
    if (SQLITE_DOWN_NUMBERS.has(primary)) return 'down';
    if (SQLITE_BUSY_NUMBERS.has(primary)) return 'busy';
  }
  if (typeof message === 'string' && PG_DOWN_MESSAGE.test(message)) return 'down';
  return null;
}

/**
 * Whether `error` says that a prepared statement no longer serves: its result's columns changed
 * (a migration of another instance added one to a table it reads: SQLSTATE 0A000 from
 * `RevalidateCachedQuery`), or the connection no longer has it (26000, after a `DISCARD ALL`).
 * A `busy` failure: the connection is dropped (src/db/postgres/store.ts), so the next request
 * prepares it afresh.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  const { code, routine } = error as { code?: unknown; routine?: unknown };
  return (code === '0A000' && routine === 'RevalidateCachedQuery') || code === '26000';
}

/**
 * Notes a failure a statement of `store` met: a `down` one marks the store not ready (the reason
 * is kept, without internals). Called by the store's drivers for every failed statement.
 * @returns whether `error` is a failure of the store (`storeFailureOf`).
 */
export function noteStoreFailure(store: Store, error: unknown): boolean {
  const failure = storeFailureOf(error);
  if (failure === 'down' && store.health.downSince === null) store.health.downSince = Date.now();
  return failure !== null;
}

/**
 * Whether `store` can serve now (for `/readyz`), by a check that reaches the data itself, which
 * clears a `down` mark when it passes and sets one when it fails:
 * - SQLite, every time: a new connection to the file reads its schema and a table (the store's
 *   own connection could answer from its page cache while the file is damaged);
 * - PostgreSQL, when marked down: a statement on a pooled connection (when not, the caller's
 *   own statements show whether the server answers).
 */
export function checkStore(store: Store): Promise<boolean> {
  return store.pieces.checkStore();
}
