/** Where the CLI writes and which environment it reads. */
import type { Readable, Writable } from 'node:stream';

/**
 * The process's own by default; a test passes its own streams and environment to run commands
 * in-process (commander's help and errors go there too).
 */
export interface CliIo {
  stdout: Writable;
  /** `isTTY` picks the progress bar over one line per check (`backlinks check`). */
  stderr: Writable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Where `accounts password` reads (a terminal has `isTTY` and `setRawMode`); default: none (empty). */
  stdin?: Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
}

/** The running process's stdout, stderr, environment and stdin. */
export const processIo = (): CliIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  stdin: process.stdin,
});
