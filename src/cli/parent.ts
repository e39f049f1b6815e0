/**
 * `serve --exit-with-parent` (issue #29): a server started by a test runner or a script stops,
 * as on SIGTERM, when whatever started it is gone, so a killed runner leaves no server behind.
 *
 * Two signs, whichever comes first:
 * - standard input, when it is a pipe or a socket (what a parent's `spawn` with `stdio: 'pipe'`
 *   gives), reaches its end: the parent closed it or died, and the kernel closed it. Standard
 *   input that is a terminal, a file or /dev/null (a shell's `cmd &`, a service manager) is
 *   left alone: it would end at once, or a read of a terminal would stop a background process;
 * - the parent process changes (`process.ppid`, polled every `PARENT_POLL_MS`): the parent died
 *   and the process was handed to init or a subreaper.
 * Opt-in only: a service manager's empty stdin must not stop a production server.
 */
import { fstatSync } from 'node:fs';
import type { Readable } from 'node:stream';

/** How often the parent process id is compared with the one at start, ms. */
export const PARENT_POLL_MS = 200;

/** Whether file descriptor `fd` is a pipe or a socket (not a terminal, a file or /dev/null). */
function isPipe(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/**
 * Calls `onGone(reason)` once, when standard input (a pipe) ends or the parent process changes.
 * Reads and discards standard input meanwhile. The timer does not keep the process alive.
 * @param stdin the process's standard input (file descriptor 0).
 */
export function watchParent(onGone: (reason: string) => void, stdin: Readable = process.stdin): void {
  let called = false;
  const gone = (reason: string) => {
    if (called) return;
    called = true;
    clearInterval(timer);
    onGone(reason);
  };
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) gone(`the parent process ${parent} is gone`);
  }, PARENT_POLL_MS);
  timer.unref();
  if (isPipe(0)) {
    stdin.on('end', () => gone('standard input closed'));
    stdin.on('error', () => gone('standard input closed'));
    stdin.resume();
  }
}
