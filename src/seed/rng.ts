/** The seeded pseudo-random numbers of the generated datasets (the demo seed, the benchmark). */

/** mulberry32: a small, fast, well-distributed 32-bit PRNG. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** `items[i]` for the first items (so every value occurs), then a random one. */
  cover<T>(items: readonly T[], i: number): T {
    return i < items.length ? items[i]! : this.pick(items);
  }
  /** Rounded to `digits` decimals, so the JSON text is stable and short. */
  real(min: number, max: number, digits = 2): number {
    return Number((min + this.next() * (max - min)).toFixed(digits));
  }
}
