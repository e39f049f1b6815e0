/** Small helpers of the scripts and tests that start servers on loopback. */
import { connect, createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Resolves after `ms` milliseconds (real time: for waiting on child processes, never in unit tests). */
export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Resolves once `check()` (a value or a promise of one) is true, asked every `intervalMs` (real
 * time: for what child processes and servers do by themselves); throws `timed out waiting for
 * <what> (<timeoutMs> ms)` when it is still false after `timeoutMs`.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)`);
    await sleep(intervalMs);
  }
}

/**
 * Resolves once a TCP connection to 127.0.0.1:`port` opens (polled every 20 ms, real time: a child
 * process starting). Throws `${name} exited: <why>` as soon as `exited()` returns a reason, and
 * `${name} did not listen on <port> within <timeoutMs> ms` after `timeoutMs` (with `log()` appended).
 */
export async function waitForPort(
  port: number,
  options: { name: string; timeoutMs: number; exited: () => string | null; log?: () => string },
): Promise<void> {
  const { name, timeoutMs, exited, log = () => '' } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = exited();
    if (why !== null) throw new Error(`${name} exited: ${why}${log()}`);
    const open = await new Promise<boolean>((done) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        done(true);
      });
      socket.once('error', () => done(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port} within ${timeoutMs} ms${log()}`);
    await sleep(20);
  }
}
