/**
 * Group commit for SQLite's one connection (issue #33 item 3; `db.synchronous: full`,
 * decisions.md §7): several transactions share one `fsync` of the WAL, done off the event loop,
 * and none of their callers goes on before the `fsync` that covers its commit has returned.
 *
 * Why not `PRAGMA synchronous = FULL` itself: it makes every `COMMIT` call `fsync` on the WAL
 * before it returns, and better-sqlite3 is synchronous, so the whole process (every other request,
 * the timers) stops for each one: 0.5–4 ms on this machine's disk, measured per commit while other
 * work ran on it, which capped `POST …/replies` at a few hundred commits a second with a p99 at
 * half that rate of 78–98 ms.
 *
 * Why not one `BEGIN … COMMIT` around several requests' work, each a `SAVEPOINT`: the one
 * connection is then inside a transaction between the requests, so every read of every other
 * request (the token lookup, the idempotency key, a page) either sees rows that are not committed
 * yet — and may be rolled back with the group, after being answered — or waits for the group's
 * `COMMIT`; and that `COMMIT` still stops the process for its `fsync`.
 *
 * What this does instead:
 * - The connection runs `PRAGMA synchronous = NORMAL`: a `COMMIT` writes its WAL frames (the
 *   `write()` calls are done when it returns, so a killed process loses nothing of it: the
 *   kernel holds the pages) but does not wait for the disk. SQLite still syncs the WAL before
 *   every checkpoint and the database file after it, and the WAL's header when the WAL is reused.
 * - Each commit is noted (`noteCommit`); its caller then awaits `durable()`, which resolves once
 *   an `fsync` of the WAL file *started after* that commit has returned. The `fsync` runs on
 *   libuv's thread pool, so the event loop keeps serving meanwhile.
 * - At most one `fsync` is in flight. Commits noted while it runs wait for the next one, which
 *   starts as soon as it returns and covers all of them: the group is "every commit since the
 *   last `fsync` began", so a commit waits at most for the rest of one `fsync` and one more,
 *   there is no timer, and a lone commit starts its own `fsync` at once.
 * - Each request keeps its own transaction (`BEGIN IMMEDIATE` … `COMMIT`), so a failure rolls
 *   back only its own writes, and a read never sees another request's uncommitted rows.
 * - An `fsync` that fails rejects every waiter it covered with its error (their requests fail:
 *   nothing is acknowledged that may not be on disk), and the next one is tried for later commits.
 *
 * What a reader may see: a row committed whose `fsync` is still in flight (at most one `fsync`,
 * a few ms) is visible to other requests' reads before its writer is answered. A process crash
 * (kill -9) loses none of it; only a power loss or a kernel crash in that window could, as with
 * any store that lets readers see a commit before its log is flushed.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';

/** The WAL file as `GroupCommit` uses it: synced, then closed with the store. */
export interface SyncedFile {
  sync(): Promise<void>;
  close(): Promise<void>;
}

interface Waiter {
  /** The commit count this waiter needs on disk. */
  upTo: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Counts of what `GroupCommit` did, for the bench and tests. */
export interface GroupCommitStats {
  /** Commits noted. */
  commits: number;
  /** `fsync` calls of the WAL made. */
  syncs: number;
}

/**
 * The write queue of one SQLite file in WAL mode (see the module comment): `noteCommit()` after
 * each commit on the connection, then `await durable()` before answering for it.
 */
export class GroupCommit {
  /** Commits noted so far. */
  private noted = 0;
  /** Commits known to be on disk (every one noted before the last `fsync` that returned began). */
  private synced = 0;
  private waiters: Waiter[] = [];
  /** The `fsync` in flight, with what follows it (`syncOnce`), or null. */
  private syncing: Promise<void> | null = null;
  private handle: SyncedFile | null = null;
  private closed = false;
  readonly stats: GroupCommitStats = { commits: 0, syncs: 0 };

  /**
   * @param walPath the database file's WAL (`<path>-wal`).
   * @param failed sees an `fsync` (or `open`) error before the waiters are rejected with it.
   * @param openFile opens the WAL, null when there is none (tests give a file whose `sync` they
   *   hold); default `openWal`.
   */
  constructor(
    private readonly walPath: string,
    private readonly failed: (error: unknown) => void = () => {},
    private readonly openFile: (walPath: string) => Promise<SyncedFile | null> = openWal,
  ) {}

  /** Notes that a transaction (or a statement outside one) committed on the connection just now. */
  noteCommit(): void {
    this.noted++;
    this.stats.commits++;
  }

  /**
   * Resolves once every commit noted before this call is on disk (at once when there is none).
   * @throws the error of the `fsync` (or of opening the WAL) that was to cover them.
   */
  durable(): Promise<void> {
    const upTo = this.noted;
    if (this.synced >= upTo || this.closed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ upTo, resolve, reject });
      this.kick();
    });
  }

  /** Waits for the `fsync` in flight, then closes the WAL's handle; `durable()` after it syncs nothing. */
  async close(): Promise<void> {
    while (this.syncing) await this.syncing;
    this.closed = true;
    await this.handle?.close();
    this.handle = null;
  }

  /** Starts an `fsync` when none is in flight and someone waits. */
  private kick(): void {
    if (this.syncing || this.waiters.length === 0) return;
    this.syncing = this.syncOnce();
  }

  private async syncOnce(): Promise<void> {
    let upTo = this.noted;
    try {
      this.handle ??= await this.openFile(this.walPath);
      // Read just before the call: every commit noted so far wrote its frames before it.
      upTo = this.noted;
      // No WAL yet: nothing was written to one (a migration's read, `exclusive` that only read).
      if (this.handle) {
        await this.handle.sync();
        this.stats.syncs++;
      }
      this.synced = Math.max(this.synced, upTo);
      this.settle(upTo, null);
    } catch (error) {
      this.failed(error);
      this.settle(upTo, error);
    }
    this.syncing = null;
    this.kick();
  }

  /** Resolves (or with `error`, rejects) the waiters whose commits the `fsync` up to `upTo` covered. */
  private settle(upTo: number, error: unknown): void {
    const covered = this.waiters.filter((w) => w.upTo <= upTo);
    this.waiters = this.waiters.filter((w) => w.upTo > upTo);
    for (const waiter of covered) {
      if (error === null) waiter.resolve();
      else waiter.reject(error);
    }
  }
}

/**
 * Opens the WAL at `walPath` for `fsync`, and syncs its directory once, so that the file's name is
 * on disk too (SQLite does that at the WAL's first sync, which under `NORMAL` waits for the first
 * checkpoint). Null when there is no WAL yet (nothing was ever written to it).
 * @throws when the file cannot be opened.
 */
async function openWal(walPath: string): Promise<FileHandle | null> {
  const handle = await open(walPath, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!handle) return null;
  // A directory cannot be opened so everywhere (Windows): there, the file's own sync is all.
  const directory = await open(dirname(walPath), 'r').catch(() => null);
  try {
    await directory?.sync();
  } finally {
    await directory?.close();
  }
  return handle;
}
