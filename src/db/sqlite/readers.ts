/**
 * SQLite's searches off the event loop (issue #28). The store's one connection runs every
 * statement synchronously on the event loop (`./store.ts`), so a statement that reads many rows
 * holds every other request for as long as it runs: even over stored folded text, counting the
 * matches of a 1–2 character term over 200,000 prospects takes a few hundred milliseconds, and a
 * frequent trigram (`com`) as long. Searches run instead on reader threads (./store-thread.ts):
 * each a worker with a read-only connection of its own to the same file, seeing what was
 * committed when its statement began (WAL), never an open transaction's rows, so exactly what the
 * store's connection would read outside a transaction.
 *
 * - At most `size` searches run at once, each on a thread of its own for its turn (`Share`): its
 *   page and its count one after the other. One more waits up to `waitMs` for a thread, then is
 *   refused (503). The first thread is the store's own, which the WAL checkpoints run on too
 *   (started with them, or at the first search); more start when more searches run at once.
 *   Each read connection keeps a page cache of 64 MiB and, on Linux, runs at a lower priority
 *   than the event loop.
 * - Not for `:memory:` (no second connection can see it) or when the addon cannot be found: the
 *   store then runs searches on its own connection, as before.
 * - A thread that fails (its statement's error is only that statement's) is replaced by a new one
 *   at the next search.
 */
import { Share } from '../share.js';
import type { StoreThread, StoreThreadHolder } from './store-thread.js';

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
  /** Takes no turn after (the threads are ended by their holder, `StoreThreadHolder.close`). */
  close(): void;
}

/**
 * Reader threads over the SQLite file of `threads`, or null where there can be none (`:memory:`,
 * or no addon file found under Node). The first is the store's own worker thread (`threads`,
 * shared with the WAL checkpoints, ./store-thread.ts); more start as more searches run at once.
 * @param options.size threads at most (`db.searchConnections`); `waitMs`: how long a search waits
 * for one (`db.searchWaitMs`).
 */
export function openSqliteReaders(
  threads: StoreThreadHolder,
  options: { size: number; waitMs: number },
): SqliteReaders | null {
  if (!threads.possible) return null;
  const share = new Share(options.size, options.waitMs);
  const idle: StoreThread[] = [];
  const all = new Set<StoreThread>();
  let closed = false;
  /** The store's thread while no turn has it, else a thread of the readers' own. */
  const start = (): StoreThread => {
    const shared = threads.get();
    return all.has(shared) ? threads.another() : shared;
  };
  return {
    turn(fn) {
      return share.run(async () => {
        if (closed) throw new Error('the store is closed');
        let thread = idle.pop();
        if (!thread) {
          thread = start();
          all.add(thread);
        }
        const reader = thread;
        try {
          return await fn((sql, parameters) => reader.read(sql, parameters));
        } finally {
          if (reader.failed) all.delete(reader);
          else idle.push(reader);
        }
      });
    },
    close() {
      closed = true;
      all.clear();
      idle.length = 0;
    },
  };
}
