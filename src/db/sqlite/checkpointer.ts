/**
 * WAL checkpoints off the request path.
 *
 * By default SQLite checkpoints inside the commit that makes the WAL reach 1,000 pages: that
 * commit copies the pages into the database file and syncs it, 50–170 ms measured on this
 * project's machine against 0.02–0.3 ms for the others (the PATCH tail of issue #11). The server
 * instead turns the store's automatic checkpoint off and runs `PRAGMA wal_checkpoint(PASSIVE)`
 * every `intervalMs` on a connection of its own in the store's worker thread (./store-thread.ts,
 * which the first search reader shares). A passive checkpoint never waits for, nor blocks,
 * readers or writers, so the event loop that serves requests never pays for it. Under a
 * sustained write load the WAL file grows until a checkpoint catches up with the writers (SQLite
 * restarts the WAL from the start at the next write after that), and is truncated back to
 * `journal_size_limit` then.
 *
 * The thread loads the same better-sqlite3 addon as the main thread (from the checkout, or the
 * file the single executable extracted it to), so it needs no JavaScript file on disk. Not used
 * under Deno or for `:memory:` stores (the automatic checkpoint stays on there). If the thread
 * fails, the automatic checkpoint is turned back on.
 */
import type { Logger } from '../../logger.js';
import type { Maintenance, SqliteStore } from '../store.js';
import { addonFile } from './addon.js';

/** The automatic checkpoint threshold SQLite uses by default (pages), restored when the checkpoints stop or fail. */
const DEFAULT_AUTOCHECKPOINT = 1000;
/** The WAL file is truncated to this size (bytes) when SQLite restarts it. */
const JOURNAL_SIZE_LIMIT = 64 * 2 ** 20;

export interface CheckpointStats {
  /** Checkpoints that copied pages. */
  count: number;
  /** Their total and longest duration, ms (in the worker, never on the request path). */
  totalMs: number;
  maxMs: number;
}

export interface Checkpointer extends Maintenance {
  stats: CheckpointStats;
  /** Stops the worker (after its checkpoint in hand) and turns the automatic checkpoint back on. */
  stop(): Promise<void>;
}

/**
 * Moves `store`'s WAL checkpoints to a worker thread (see the module comment). Each checkpoint
 * that copied pages is logged at `debug` with its duration; `stop()` logs a summary at `info`.
 * `Store.startMaintenance` of a SQLite store.
 * @returns null when the store cannot have one (Deno, `:memory:`, addon not found): its automatic
 * checkpoint is left on.
 */
export function startBackgroundCheckpoints(
  store: SqliteStore,
  options: { logger: Logger; intervalMs?: number },
): Checkpointer | null {
  if (addonFile() === null || store.path === ':memory:' || store.path === '') return null;
  const { logger } = options;
  const synchronous = (store.sqlite.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous;
  const thread = store.worker();
  store.sqlite.exec(`PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
  store.sqlite.exec('PRAGMA wal_autocheckpoint = 0');
  const stats: CheckpointStats = { count: 0, totalMs: 0, maxMs: 0 };
  let running = true;
  const fallBack = () => {
    if (!running) return;
    running = false;
    store.sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
  };
  thread.startCheckpoints({ intervalMs: options.intervalMs ?? 100, synchronous }, (m) => {
    stats.count++;
    stats.totalMs += m.ms;
    stats.maxMs = Math.max(stats.maxMs, m.ms);
    logger.log('debug', 'wal checkpoint', {
      ms: Math.round(m.ms * 100) / 100,
      walPages: m.pages,
      checkpointedPages: m.checkpointed,
    });
  });
  thread.onFailure((error) => {
    if (!running) return;
    logger.log('warn', 'background wal checkpoints failed; checkpointing on commit again', {
      error: (error as Error).name,
    });
    fallBack();
  });
  return {
    stats,
    async stop() {
      const wasRunning = running;
      fallBack();
      if (wasRunning) await thread.stopCheckpoints();
      logger.log('info', 'wal checkpoints in the background', {
        count: stats.count,
        totalMs: Math.round(stats.totalMs),
        maxMs: Math.round(stats.maxMs * 100) / 100,
      });
    },
  };
}
