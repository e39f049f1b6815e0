/** Where the CLI writes and which environment it reads. */
import type { Writable } from 'node:stream';

/**
 * The process's own by default; a test passes its own streams and environment to run commands
 * in-process (commander's help and errors go there too).
 */
export interface CliIo {
  stdout: Writable;
  /** `isTTY` picks the progress bar over one line per check (`backlinks check`). */
  stderr: Writable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
}

/** The running process's stdout, stderr and environment. */
export const processIo = (): CliIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });
