/** The source of time for everything that depends on it, so tests can drive it. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to: `advance(ms)` or `set(ms)`. For tests. */
export class FakeClock implements Clock {
  constructor(private ms = Date.UTC(2026, 10, 1, 12, 0, 0)) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}

/** ISO 8601 UTC with milliseconds, the store's and the API's date-time format. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}
