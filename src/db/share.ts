/**
 * A bounded share of a store for statements that may read many rows: searches (issue #28). At
 * most `size` of them run at once (PostgreSQL: connections of the pool, so the rest of the pool
 * always serves cheap requests; SQLite: reader threads, `./sqlite/readers.ts`); one more waits
 * its turn, first come first served, for up to `waitMs`, then is refused with `ShareFullError`,
 * which the HTTP layer answers 503 `SERVICE_UNAVAILABLE` with `Retry-After` (src/http/app.ts).
 */

/**
 * A statement refused before it ran: every place of its share stayed taken for `waitMs`. No fault
 * of the store, which stays ready (`storeFailureOf` says `busy`).
 */
export class ShareFullError extends Error {
  readonly code = 'SHARE_FULL';
  /** When to try again, s: the wait, rounded up (at least 1). */
  readonly retryAfterSeconds: number;
  constructor(waitMs: number) {
    super(`every search connection stayed in use for ${waitMs} ms`);
    this.retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  }
}

/** Defaults of the share (config `db.searchConnections`, `db.searchWaitMs`; docs/configuration.md). */
export const SHARE_DEFAULTS = {
  /** SQLite: reader threads. */
  sqliteSize: 1,
  /** PostgreSQL: a third of the pool, at least 1. */
  postgresSize: (poolSize: number) => Math.max(1, Math.floor(poolSize / 3)),
  waitMs: 1000,
} as const;

interface Waiter {
  grant(): void;
}

export class Share {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  /**
   * @param size statements that may run at once (at least 1).
   * @param waitMs how long one more may wait for a place, ms.
   */
  constructor(
    readonly size: number,
    readonly waitMs: number,
  ) {}

  /**
   * Runs `fn` once a place is free and resolves with what it resolves with.
   * @throws ShareFullError when no place came free within `waitMs` (`fn` then never runs).
   */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.enter();
    try {
      return await fn();
    } finally {
      this.leave();
    }
  }

  private enter(): Promise<void> {
    if (this.running < this.size) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant() {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(new ShareFullError(this.waitMs));
      }, this.waitMs);
      this.waiting.push(waiter);
    });
  }

  /** Hands the place to the first waiter, or frees it. */
  private leave(): void {
    const next = this.waiting.shift();
    if (next) next.grant();
    else this.running--;
  }
}
