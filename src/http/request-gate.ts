/**
 * Counts the requests in flight and can hold new ones back: the fixture's reset runs with no
 * request in flight (decisions.md §14: a request finishes before a reset or starts after it), and
 * a graceful shutdown can wait for the requests in flight (`drain()`). One per app.
 */
export class RequestGate {
  private inFlight = 0;
  /** Settles when the exclusive section running now ends; null when none runs. */
  private closed: Promise<void> | null = null;
  private idle: (() => void)[] = [];

  /** Requests in flight now. */
  get size(): number {
    return this.inFlight;
  }

  /** Runs `fn` as a request in flight, after any exclusive section running now. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    while (this.closed) await this.closed;
    this.inFlight++;
    try {
      return await fn();
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  /** Resolves when no request is in flight (at once when none is). */
  drain(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * Runs `fn` alone: requests that arrive meanwhile wait, `fn` starts once the requests in flight
   * have finished, and they go on when it ends (whether it returned or threw). Exclusive sections
   * run one after the other.
   */
  async exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    while (this.closed) await this.closed;
    let open!: () => void;
    this.closed = new Promise((resolve) => {
      open = resolve;
    });
    try {
      await this.drain();
      return await fn();
    } finally {
      this.closed = null;
      open();
    }
  }
}
