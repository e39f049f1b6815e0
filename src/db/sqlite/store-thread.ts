/**
 * A worker thread of the SQLite store, with connections of its own to the store's file: the one
 * place where SQLite work runs off the event loop. It does two jobs, each on its own connection,
 * opened when first asked for:
 * - **reads** (`read`): one statement at a time on a read-only connection (`PRAGMA query_only`)
 *   with a 64 MiB page cache, seeing what was committed when the statement began (WAL), never an
 *   open transaction's rows: the search readers (`./readers.ts`);
 * - **WAL checkpoints** (`startCheckpoints`): `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`
 *   on a second connection (`./checkpointer.ts`); a checkpoint waits while a read runs on the
 *   thread, and a read while a checkpoint runs.
 *
 * Why one thread for both: each worker thread is a V8 isolate with Node's bootstrap in it, about
 * 10 MiB of resident memory before it does anything (a bare `node` process: 40.9 MiB, 51.4 MiB
 * with one idle worker). The store's first search reader is the thread the checkpoints already
 * run on (`StoreThreadHolder`), so a server that searched holds one such thread, not two.
 *
 * On Linux the thread runs at a lower priority than the event loop (`NICE`): when the CPU is
 * short, requests are served before searches and checkpoints. Under Node it loads the
 * better-sqlite3 addon the store uses (`addonFile`), under Deno it opens `node:sqlite`: no
 * JavaScript file is needed on disk.
 */
import { Worker } from 'node:worker_threads';
import { addonFile, isDeno } from './addon.js';

/**
 * The thread: CommonJS source run with `eval`. Messages in: `{ kind: 'read', sql, parameters }`
 * (answered `{ kind: 'rows', rows }` or `{ kind: 'error', error: { message, code, errcode } }`),
 * `{ kind: 'checkpoints', intervalMs, synchronous }` (then `{ kind: 'checkpoint', ms, pages,
 * checkpointed, busy }` for each checkpoint that copied pages) and `{ kind: 'stop-checkpoints' }`
 * (answered `{ kind: 'checkpoints-stopped' }`). A read's prepared statements are kept (a
 * search's SQL text is the same for every term), at most 64.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let open;
if (workerData.addonFile) {
  class SqliteError extends Error { constructor(message, code) { super(message); this.code = code; } }
  const module_ = { exports: {} };
  process.dlopen(module_, workerData.addonFile);
  const addon = module_.exports;
  if (!addon.isInitialized) { addon.setErrorConstructor(SqliteError); addon.isInitialized = true; }
  open = () => {
    const raw = new addon.Database(workerData.path, workerData.path, false, false, true, workerData.busyTimeoutMs, null, null);
    return { exec: (sql) => raw.exec(sql), prepare: (sql) => raw.prepare(sql, raw, false), close: () => raw.close() };
  };
} else {
  const { DatabaseSync } = require('node:sqlite');
  open = () => {
    const raw = new DatabaseSync(workerData.path);
    raw.exec('PRAGMA busy_timeout = ' + workerData.busyTimeoutMs);
    return { exec: (sql) => raw.exec(sql), prepare: (sql) => raw.prepare(sql), close: () => raw.close() };
  };
}
if (workerData.nice) { try { require('node:os').setPriority(workerData.nice); } catch {} }
let reader;
const statements = new Map();
function read({ sql, parameters }) {
  try {
    if (!reader) {
      reader = open();
      reader.exec('PRAGMA query_only = 1');
      reader.exec('PRAGMA cache_size = -' + workerData.cacheKiB);
    }
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = reader.prepare(sql);
      if (statements.size >= 64) statements.delete(statements.keys().next().value);
    } else statements.delete(sql);
    statements.set(sql, statement);
    const rows = statement.all(...parameters.map((p) => (typeof p === 'boolean' ? Number(p) : p)));
    parentPort.postMessage({ kind: 'rows', rows });
  } catch (error) {
    parentPort.postMessage({ kind: 'error', error: { message: String(error && error.message), code: error && error.code, errcode: error && error.errcode } });
  }
}
let checkpoints;
function startCheckpoints({ intervalMs, synchronous }) {
  if (checkpoints) return;
  const db = open();
  db.exec('PRAGMA synchronous = ' + synchronous);
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let last = -1;
  const timer = setInterval(() => {
    const started = performance.now();
    const row = checkpoint.get();
    const ms = performance.now() - started;
    // Only checkpoints that copied pages (log: pages in the WAL; checkpointed: copied so far).
    if (row.checkpointed !== last && row.checkpointed > 0) parentPort.postMessage({ kind: 'checkpoint', ms, pages: row.log, checkpointed: row.checkpointed, busy: row.busy });
    last = row.checkpointed;
  }, intervalMs);
  checkpoints = { db, timer };
}
function stopCheckpoints() {
  if (checkpoints) { clearInterval(checkpoints.timer); checkpoints.db.close(); checkpoints = undefined; }
  parentPort.postMessage({ kind: 'checkpoints-stopped' });
}
parentPort.on('message', (message) => {
  if (message.kind === 'read') read(message);
  else if (message.kind === 'checkpoints') startCheckpoints(message);
  else if (message.kind === 'stop-checkpoints') stopCheckpoints();
});
`;

/**
 * The read connection's page cache, KiB. On the bench's database (200,000 prospects and 200,000
 * leads in one project) the leads search cost 40 % more CPU per response with SQLite's default
 * (2 MiB) and 15 % more with 16 MiB; the 1–2 character counts, which read every row, took the same
 * with each (docs/performance.md, "a smaller page cache").
 */
const READ_CACHE_KIB = 64 * 1024;

/**
 * The thread's niceness on Linux, where it is a thread's own (elsewhere it would be the whole
 * process's, so it is left alone): when the CPU is short, the event loop is served before the
 * searches. On the loaded 2-core development machine a thread spinning beside the event loop
 * delayed it up to 61 ms at the same niceness and up to 29 ms at 19 (15 s each, 1 ms timer).
 */
const NICE = 10;

/** A checkpoint that copied pages: its duration (ms), the WAL's pages and those copied so far. */
export interface CheckpointReport {
  ms: number;
  pages: number;
  checkpointed: number;
  busy: number;
}

type FromThread =
  | { kind: 'rows'; rows: unknown[] }
  | { kind: 'error'; error: { message: string; code?: string; errcode?: number } }
  | ({ kind: 'checkpoint' } & CheckpointReport)
  | { kind: 'checkpoints-stopped' };

/** One worker thread over the store's file (see the module comment). */
export class StoreThread {
  private readonly worker: Worker;
  private pendingRead: { resolve(rows: unknown[]): void; reject(error: unknown): void } | undefined;
  private pendingStop: (() => void) | undefined;
  private onCheckpoint: ((report: CheckpointReport) => void) | undefined;
  private readonly failureListeners: ((error: unknown) => void)[] = [];
  /** What keeps the process alive now (a read or a stop in hand): the thread alone does not. */
  private holds = 0;
  /** Set once the thread failed or exited: it takes no statement again. */
  failed = false;

  /** @param busyTimeoutMs each connection's busy timeout (ms). */
  constructor(path: string, busyTimeoutMs: number) {
    this.worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: {
        addonFile: addonFile(),
        path,
        busyTimeoutMs,
        cacheKiB: READ_CACHE_KIB,
        nice: process.platform === 'linux' ? NICE : 0,
      },
    });
    this.worker.unref();
    this.worker.on('message', (message: FromThread) => {
      if (message.kind === 'checkpoint') this.onCheckpoint?.(message);
      else if (message.kind === 'checkpoints-stopped') this.settleStop();
      else {
        const pending = this.pendingRead;
        this.pendingRead = undefined;
        if (!pending) return;
        if (message.kind === 'rows') pending.resolve(message.rows);
        else pending.reject(Object.assign(new Error(message.error.message), message.error));
      }
    });
    this.worker.on('error', (error) => this.fail(error, true));
    this.worker.on('exit', (code) => this.fail(new Error(`the store's worker thread exited (${code})`), false));
  }

  /**
   * Reads the rows of the SELECT `sql` with `parameters` on the thread's read-only connection.
   * One read at a time (the caller's turn, `./readers.ts`).
   * @throws the statement's error (message, `code`, `errcode`), or the thread's if it failed.
   */
  read(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    if (this.failed) return Promise.reject(new Error("the store's worker thread has stopped"));
    return new Promise<unknown[]>((resolve, reject) => {
      this.pendingRead = { resolve, reject };
      this.hold();
      this.worker.postMessage({ kind: 'read', sql, parameters });
    }).finally(() => this.release());
  }

  /**
   * Starts WAL checkpoints on the thread every `intervalMs`; `onCheckpoint` hears of each that
   * copied pages. `synchronous` is the store connection's `PRAGMA synchronous` (0–3).
   */
  startCheckpoints(
    options: { intervalMs: number; synchronous: number },
    onCheckpoint: (r: CheckpointReport) => void,
  ): void {
    this.onCheckpoint = onCheckpoint;
    this.worker.postMessage({ kind: 'checkpoints', ...options });
  }

  /** Stops the checkpoints after the one in hand and closes their connection; resolves then, or once the thread has gone. */
  stopCheckpoints(): Promise<void> {
    if (this.failed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.pendingStop = resolve;
      this.hold();
      this.worker.postMessage({ kind: 'stop-checkpoints' });
    });
  }

  /** Calls `listener` once if the thread fails (an error in it; not when it is stopped). */
  onFailure(listener: (error: unknown) => void): void {
    this.failureListeners.push(listener);
  }

  /** Ends the thread at once (a read in hand is rejected). */
  async stop(): Promise<void> {
    await this.worker.terminate();
  }

  private settleStop(): void {
    const stopped = this.pendingStop;
    this.pendingStop = undefined;
    if (!stopped) return;
    this.release();
    stopped();
  }

  private fail(error: unknown, unexpected: boolean): void {
    if (this.failed) return;
    this.failed = true;
    this.pendingRead?.reject(error);
    this.pendingRead = undefined;
    this.settleStop();
    if (unexpected) for (const listener of this.failureListeners) listener(error);
  }

  private hold(): void {
    if (this.holds++ === 0) this.worker.ref();
  }

  private release(): void {
    if (--this.holds === 0) this.worker.unref();
  }
}

/**
 * The store's worker threads, each started on first use: its own, shared by the WAL checkpoints
 * and the first search reader (`get`; one that failed is replaced at the next call), and the
 * further search readers (`another`). `close` ends them all.
 */
export class StoreThreadHolder {
  private thread: StoreThread | undefined;
  private readonly others = new Set<StoreThread>();
  private closed = false;

  /** @param busyTimeoutMs each connection's busy timeout (ms). */
  constructor(
    private readonly path: string,
    private readonly busyTimeoutMs: number,
  ) {}

  /** Whether a thread can open the file: not `:memory:`, and the addon found under Node. */
  get possible(): boolean {
    return this.path !== ':memory:' && this.path !== '' && (isDeno || addonFile() !== null);
  }

  /**
   * The store's own thread (started now if there is none, or the last one failed).
   * @throws when the store is closed or no thread can open the file (`possible`).
   */
  get(): StoreThread {
    if (!this.thread || this.thread.failed) this.thread = this.start();
    return this.thread;
  }

  /**
   * A thread of its own over the same file, not shared (a second search reader).
   * @throws as `get` does.
   */
  another(): StoreThread {
    for (const thread of this.others) if (thread.failed) this.others.delete(thread);
    const thread = this.start();
    this.others.add(thread);
    return thread;
  }

  /** Ends every thread (a read in hand is rejected); no thread starts after. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([this.thread, ...this.others].map((thread) => thread?.stop()));
    this.others.clear();
  }

  private start(): StoreThread {
    if (this.closed) throw new Error('the store is closed');
    if (!this.possible) throw new Error('no worker thread can open this store');
    return new StoreThread(this.path, this.busyTimeoutMs);
  }
}
