/**
 * The server's V8 heap settings, applied by the process itself (no `NODE_OPTIONS` needed; Node
 * 20's single-executable format cannot carry V8 flags).
 *
 * Under a sustained write load (2,000+ requests/s) V8 grows the young generation from 1 MiB
 * semi-spaces to 16 MiB ones: about 40 MiB of extra resident memory that a server answering in
 * ~0.1–1 ms per request does not need, since almost nothing it allocates outlives a request.
 * `--max-semi-space-size` is read only when the heap is created, but the growth factor is read
 * each time the young generation would grow, so setting it to 1 at run time keeps the
 * semi-spaces at their initial size. Measured with `npm run bench` (see the README's Performance
 * section): peak RSS and the write runs' throughput with and without it.
 */
import { setFlagsFromString } from 'node:v8';

/** V8 flags the operator already chose (command line or NODE_OPTIONS) are left alone. */
const OPERATOR_CHOICE = /--(max-)?semi-space|--semi-space-growth-factor|--max-new-space|--min-semi-space/;

/** Keeps the young generation at its initial size for this process. Does nothing under Deno. */
export function limitYoungGeneration(env: NodeJS.ProcessEnv = process.env): void {
  if (typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined') return;
  if (OPERATOR_CHOICE.test(`${process.execArgv.join(' ')} ${env.NODE_OPTIONS ?? ''}`)) return;
  setFlagsFromString('--semi-space-growth-factor=1');
}
