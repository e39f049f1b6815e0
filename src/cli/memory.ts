/**
 * V8's memory settings of the long-running commands (`serve`, `inbox sync`), set by the running
 * process: the single executable cannot be given V8 flags (a Node 20 SEA ignores its
 * configuration's `execArgv`, docs/performance.md), so only the flags V8 reads while it runs can
 * be used: `--optimize-for-size`, `--heap-growing-percent` and `--semi-space-growth-factor`.
 * V8 stamps its code cache with its flags: the build's own start (build/sea.ts) turns all three
 * off, so that the cache it takes matches a fresh start.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { Config } from '../config.js';

const MIB = 2 ** 20;

/**
 * `server.optimizeForSize` sets V8's `--optimize-for-size`, which V8 honours when set at run
 * time (unlike `--max-semi-space-size`, read only when the heap is made). Call as the command
 * starts.
 */
export function applyMemorySettings(config: Config): void {
  if (config.server.optimizeForSize) setFlagsFromString('--optimize-for-size');
}

/**
 * The memory settings of a long-running command once its steady work begins (`serve` once it
 * serves, after any `--import`, which then grows the heap as V8 would; `inbox sync` at once):
 * - `server.heapGrowingPercent` sets V8's `--heap-growing-percent` (read at every full
 *   collection, so it holds from the next one on); 0 leaves V8's own factor;
 * - `server.maxSemiSpaceMb` caps the young generation (`capSemiSpace`); 0 leaves V8's own cap.
 */
export function applySteadyMemorySettings(config: Config): void {
  if (config.server.heapGrowingPercent > 0)
    setFlagsFromString(`--heap-growing-percent=${config.server.heapGrowingPercent}`);
  capSemiSpace(config.server.maxSemiSpaceMb);
}

/** V8's own `--semi-space-growth-factor`: each growth of the young generation doubles it. */
const V8_GROWTH_FACTOR = 2;

/**
 * Keeps each of V8's two semi-spaces (the young generation) at most `maxMb` MiB, the effect of
 * `--max-semi-space-size` for a process that cannot be started with it. V8 starts a semi-space
 * at 1 MiB and doubles it (up to 16 MiB on 64-bit) after scavenges that kept much alive; it reads
 * `--semi-space-growth-factor` at each growth. So after every collection (a `gc` performance
 * entry) this sets the factor to 1 (no growth) once a semi-space has reached `maxMb`, and back
 * to V8's 2 while it is smaller (V8 shrinks it again when the process allocates little). Sizes
 * are powers of two: a `maxMb` between two of them stops the growth at the larger. A collection
 * that runs before the observer is called (several in one long task, or the first after a worker
 * thread started, which resets the factor) may still double it once past `maxMb`. V8's flags are
 * the process's: the worker threads' young generations (the store's threads: checkpoints and searches)
 * grow only while the main thread's is below `maxMb`. `maxMb` 0 changes nothing. Returns a
 * function that stops watching. Docs: docs/configuration.md, "Memory: server.maxSemiSpaceMb".
 */
export function capSemiSpace(maxMb: number): () => void {
  if (maxMb <= 0) return () => {};
  const check = () => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (!young) return;
    // What one semi-space can hold, a whole number of MiB (used + available: `space_size` counts
    // the second semi-space only once V8 has committed it).
    const semiMb = Math.round((young.space_used_size + young.space_available_size) / MIB);
    // Set at every check, not only when it changes: starting a worker thread puts V8's factor
    // back to at least 2 (test/cli/memory.test.ts). About 2 µs.
    setFlagsFromString(`--semi-space-growth-factor=${semiMb >= maxMb ? 1 : V8_GROWTH_FACTOR}`);
  };
  check();
  const observer = new PerformanceObserver(check);
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
