/** Child processes the tests start and watch: their output, how they ended, whether they still run. */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { until } from './ports.js';

/** How a process ended: its exit code, or the signal that ended it. */
export interface Ending {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Watched {
  child: ChildProcess;
  /** Its stdout and stderr so far, interleaved as they arrived. */
  output: () => string;
  /** Settles once it has ended and its output is read (a process it left running holds that open). */
  exit: Promise<Ending>;
  /** Settles as soon as it has ended. */
  ended: Promise<Ending>;
}

/** Keeps what `child` (spawned with stdout and stderr piped) writes, and how it ends. */
export function watch(child: ChildProcess): Watched {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const settle = (event: 'close' | 'exit') =>
    new Promise<Ending>((resolve) => child.once(event, (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, exit: settle('close'), ended: settle('exit') };
}

/** Whether process `pid` runs (one that ended and waits for its parent to reap it does not). */
export function running(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * The JSON a server wrote to `path` with `serve --ready-file`, once it is there; fails at once
 * with the output of `watched` when that process ends first, and after `timeoutMs`.
 */
export async function readyFileOf<
  T = { url: string; apiUrl: string; adminUrl: string | null; pid: number; token?: string },
>(path: string, watched?: Watched, timeoutMs = 30_000): Promise<T> {
  let gone = false;
  void watched?.ended.then(() => (gone = true));
  await until(() => gone || existsSync(path), `the ready file ${path}`, timeoutMs, 5);
  if (!existsSync(path)) throw new Error(`ended before it was ready:\n${watched?.output()}`);
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}
