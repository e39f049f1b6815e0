/**
 * WAL checkpoints off the request path.
 *
 * By default SQLite checkpoints inside the commit that makes the WAL reach 1,000 pages: that
 * commit copies the pages into the database file and syncs it, 50–170 ms measured on this
 * project's machine against 0.02–0.3 ms for the others (the PATCH tail of issue #11). The server
 * instead turns the store's automatic checkpoint off and runs `PRAGMA wal_checkpoint(PASSIVE)`
 * every `intervalMs` on a second connection in a worker thread. A passive checkpoint never waits
 * for, nor blocks, readers or writers, so the event loop that serves requests never pays for it.
 * Under a sustained write load the WAL file grows until a checkpoint catches up with the writers
 * (SQLite restarts the WAL from the start at the next write after that), and is truncated back to
 * `journal_size_limit` then.
 *
 * The worker loads the same better-sqlite3 addon as the main thread (from the checkout, or the
 * file the single executable extracted it to) and uses only its native `Database` class, so it
 * needs no JavaScript file on disk. Not used under Deno or for `:memory:` stores (the automatic
 * checkpoint stays on there). If the worker fails, the automatic checkpoint is turned back on.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../logger.js';
import type { Maintenance, SqliteStore } from '../store.js';
import { addonFile } from './addon.js';

/** The automatic checkpoint threshold SQLite uses by default (pages), restored when the worker stops or fails. */
const DEFAULT_AUTOCHECKPOINT = 1000;
/** The WAL file is truncated to this size (bytes) when SQLite restarts it. */
const JOURNAL_SIZE_LIMIT = 64 * 2 ** 20;

/** The worker: CommonJS source run with `eval` (no file needed inside the single executable). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const module_ = { exports: {} };
process.dlopen(module_, workerData.addonFile);
const addon = module_.exports;
if (!addon.isInitialized) { addon.setErrorConstructor(Error); addon.isInitialized = true; }
const db = new addon.Database(workerData.path, workerData.path, false, false, true, 5000, null, null);
db.exec('PRAGMA synchronous = ' + workerData.synchronous);
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)', {}, false);
let last = -1;
const timer = setInterval(() => {
  const started = performance.now();
  const row = checkpoint.get();
  const ms = performance.now() - started;
  // Report only checkpoints that copied pages (log: pages in the WAL; checkpointed: copied so far).
  if (row.checkpointed !== last && row.checkpointed > 0) parentPort.postMessage({ ms, pages: row.log, checkpointed: row.checkpointed, busy: row.busy });
  last = row.checkpointed;
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'stop') { clearInterval(timer); db.close(); parentPort.close(); }
});
`;

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
  const file = addonFile();
  if (file === null || store.path === ':memory:' || store.path === '') return null;
  const { logger } = options;
  const synchronous = (store.sqlite.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { addonFile: file, path: store.path, synchronous, intervalMs: options.intervalMs ?? 100 },
  });
  worker.unref();
  store.sqlite.exec(`PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
  store.sqlite.exec('PRAGMA wal_autocheckpoint = 0');
  const stats: CheckpointStats = { count: 0, totalMs: 0, maxMs: 0 };
  let running = true;
  const fallBack = () => {
    if (!running) return;
    running = false;
    store.sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
  };
  worker.on('message', (m: { ms: number; pages: number; checkpointed: number; busy: number }) => {
    stats.count++;
    stats.totalMs += m.ms;
    stats.maxMs = Math.max(stats.maxMs, m.ms);
    logger.log('debug', 'wal checkpoint', {
      ms: Math.round(m.ms * 100) / 100,
      walPages: m.pages,
      checkpointedPages: m.checkpointed,
    });
  });
  worker.on('error', (error) => {
    logger.log('warn', 'background wal checkpoints failed; checkpointing on commit again', { error: error.name });
    fallBack();
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    stats,
    async stop() {
      // Kept alive until it has stopped: an unref'd worker alone would let the process exit first.
      worker.ref();
      if (running) worker.postMessage('stop');
      fallBack();
      await exited;
      logger.log('info', 'wal checkpoints in the background', {
        count: stats.count,
        totalMs: Math.round(stats.totalMs),
        maxMs: Math.round(stats.maxMs * 100) / 100,
      });
    },
  };
}
