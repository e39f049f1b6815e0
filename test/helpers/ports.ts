/** Small helpers of the scripts and tests that start servers on loopback. */
import { createServer } from 'node:net';

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
