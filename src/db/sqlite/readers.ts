/**
 * SQLite's searches off the event loop (issue #28). The store's one connection runs every
 * statement synchronously on the event loop (`./store.ts`), so a statement that reads many rows
 * holds every other request for as long as it runs: even over stored folded text, counting the
 * matches of a 1–2 character term over 200,000 prospects takes a few hundred milliseconds, and a
 * frequent trigram (`com`) as long. Searches run instead on reader threads: each a worker with a
 * connection of its own to the same file, read-only (`PRAGMA query_only`), seeing what was
 * committed when its statement began (WAL), never an open transaction's rows, so exactly what the
 * store's connection would read outside a transaction.
 *
 * - At most `size` searches run at once, each on a thread of its own for its turn (`Share`): its
 *   page and its count one after the other. One more waits up to `waitMs` for a thread, then is
 *   refused (503). Threads start at the first search, not with the store; each keeps a page cache
 *   of 64 MiB and, on Linux, runs at a lower priority than the event loop (`READER_NICE`).
 * - Under Node a thread loads the better-sqlite3 addon the store uses (`addonFile`), under Deno it
 *   opens `node:sqlite`: no JavaScript file is needed on disk.
 * - Not for `:memory:` (no second connection can see it) or when the addon cannot be found: the
 *   store then runs searches on its own connection, as before.
 * - A thread that fails (its statement's error is only that statement's) is replaced by a new one
 *   at the next search.
 */
import { Worker } from 'node:worker_threads';
import { Share } from '../share.js';
import { addonFile, isDeno } from './addon.js';

/**
 * The reader: CommonJS source run with `eval`. One statement at a time: `{ sql, parameters }` in,
 * `{ rows }` or `{ error: { message, code, errcode } }` out. Prepared statements are kept (the
 * SQL text of a search is the same for every term), at most 64.
 */
const READER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let db;
if (workerData.addonFile) {
  class SqliteError extends Error { constructor(message, code) { super(message); this.code = code; } }
  const module_ = { exports: {} };
  process.dlopen(module_, workerData.addonFile);
  const addon = module_.exports;
  if (!addon.isInitialized) { addon.setErrorConstructor(SqliteError); addon.isInitialized = true; }
  const raw = new addon.Database(workerData.path, workerData.path, false, false, true, workerData.busyTimeoutMs, null, null);
  db = { exec: (sql) => raw.exec(sql), prepare: (sql) => raw.prepare(sql, raw, false) };
} else {
  const { DatabaseSync } = require('node:sqlite');
  const raw = new DatabaseSync(workerData.path);
  raw.exec('PRAGMA busy_timeout = ' + workerData.busyTimeoutMs);
  db = { exec: (sql) => raw.exec(sql), prepare: (sql) => raw.prepare(sql) };
}
if (workerData.nice) { try { require('node:os').setPriority(workerData.nice); } catch {} }
db.exec('PRAGMA query_only = 1');
db.exec('PRAGMA cache_size = -' + workerData.cacheKiB);
const statements = new Map();
parentPort.on('message', ({ sql, parameters }) => {
  try {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      if (statements.size >= 64) statements.delete(statements.keys().next().value);
    } else statements.delete(sql);
    statements.set(sql, statement);
    const rows = statement.all(...parameters.map((p) => (typeof p === 'boolean' ? Number(p) : p)));
    parentPort.postMessage({ rows });
  } catch (error) {
    parentPort.postMessage({ error: { message: String(error && error.message), code: error && error.code, errcode: error && error.errcode } });
  }
});
`;

/**
 * Each reader's page cache, KiB. SQLite's default (2 MiB) makes a search over 200,000 leads read
 * most pages from the file again: counting a 1-character term's matches took 0.9–1.2 s with it,
 * 0.4 s with 64 MiB (the 200,000-row bench database, one project).
 */
const CACHE_KIB = 64 * 1024;

/**
 * The niceness of each reader thread on Linux, where it is a thread's own (elsewhere it would be
 * the whole process's, so it is left alone): when the CPU is short, the event loop is served
 * before the searches. On the loaded 2-core development machine a thread spinning beside the event
 * loop delayed it up to 61 ms at the same niceness and up to 29 ms at 19 (15 s each, 1 ms timer).
 */
const READER_NICE = 10;

/** The reader's answer to one statement. */
type Answer = { rows: unknown[] } | { error: { message: string; code?: string; errcode?: number } };

/** One reader thread: a statement at a time. */
class ReaderThread {
  private readonly worker: Worker;
  private pending: { resolve(rows: unknown[]): void; reject(error: unknown): void } | undefined;
  /** Set once the thread failed or exited: it takes no statement again. */
  failed = false;

  constructor(path: string, busyTimeoutMs: number) {
    this.worker = new Worker(READER_SOURCE, {
      eval: true,
      workerData: {
        addonFile: addonFile(),
        path,
        busyTimeoutMs,
        cacheKiB: CACHE_KIB,
        nice: process.platform === 'linux' ? READER_NICE : 0,
      },
    });
    this.worker.unref();
    this.worker.on('message', (answer: Answer) => {
      const pending = this.pending;
      this.pending = undefined;
      if (!pending) return;
      if ('rows' in answer) pending.resolve(answer.rows);
      else pending.reject(Object.assign(new Error(answer.error.message), answer.error));
    });
    const fail = (error: unknown) => {
      this.failed = true;
      this.pending?.reject(error);
      this.pending = undefined;
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the search reader thread exited (${code})`)));
  }

  all(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      // Kept alive while it answers, so a process waiting for a search does not exit under it.
      this.worker.ref();
      this.worker.postMessage({ sql, parameters });
    }).finally(() => this.worker.unref()) as Promise<unknown[]>;
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

/** Reads the rows of the SELECT `sql` with `parameters` on the reader thread of a turn. */
export type ReadRows = (sql: string, parameters: readonly unknown[]) => Promise<unknown[]>;

export interface SqliteReaders {
  /**
   * Runs `fn` with a reader thread of its own (one turn of the share: a search's page and count
   * run one after the other on it, so a search never waits for itself) and resolves with what
   * `fn` resolves with.
   * @throws ShareFullError when no thread came free within the wait (`fn` then never runs).
   */
  turn<T>(fn: (read: ReadRows) => Promise<T>): Promise<T>;
  /** Stops every thread (a statement in hand is abandoned). */
  close(): Promise<void>;
}

/**
 * Reader threads over the SQLite file at `path`, or null where there can be none (`:memory:`, or
 * no addon file found under Node).
 * @param options.size threads at most (`db.searchConnections`); `waitMs`: how long a search waits
 * for one (`db.searchWaitMs`); `busyTimeoutMs`: each connection's busy timeout.
 */
export function openSqliteReaders(
  path: string,
  options: { size: number; waitMs: number; busyTimeoutMs: number },
): SqliteReaders | null {
  if (path === ':memory:' || path === '' || (!isDeno && addonFile() === null)) return null;
  const share = new Share(options.size, options.waitMs);
  const idle: ReaderThread[] = [];
  const all = new Set<ReaderThread>();
  let closed = false;
  return {
    turn(fn) {
      return share.run(async () => {
        if (closed) throw new Error('the store is closed');
        let thread = idle.pop();
        if (!thread) {
          thread = new ReaderThread(path, options.busyTimeoutMs);
          all.add(thread);
        }
        const reader = thread;
        try {
          return await fn((sql, parameters) => reader.all(sql, parameters));
        } finally {
          if (reader.failed) all.delete(reader);
          else idle.push(reader);
        }
      });
    },
    async close() {
      closed = true;
      await Promise.all([...all].map((thread) => thread.stop()));
      all.clear();
      idle.length = 0;
    },
  };
}
