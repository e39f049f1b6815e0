/** Where the CLI writes and which environment it reads, and how it writes a line. */
import type { Readable, Writable } from 'node:stream';
import { escapeControlCharacters } from '../domain/text.js';

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

let pipesGuarded = false;

/**
 * The running process's stdout, stderr, environment and stdin. A write to a stdout or stderr
 * whose reader is gone (EPIPE: a killed test runner, `| head`) is dropped instead of ending the
 * process with an uncaught error: a server keeps serving, and stops on SIGTERM, without its
 * output (issue #29; the logger does the same, src/logger.ts).
 */
export const processIo = (): CliIo => {
  if (!pipesGuarded) {
    pipesGuarded = true;
    for (const stream of [process.stdout, process.stderr])
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') throw error;
      });
  }
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    // Node makes process.stdin (a stream) when it is first read: only a command that reads it pays.
    get stdin() {
      return process.stdin;
    },
  };
};

/**
 * Writes one line to `stream`: every line a command prints goes through here, so text from the
 * store, an import, a mailbox or a page (token and account names, emails, URLs, error messages)
 * reaches the operator's terminal with its control and format characters escaped
 * (`escapeControlCharacters`: U+009B as `\u{9b}`, a line feed as `\u{a}`), never acted on.
 */
export function printer(stream: Writable): (line?: string) => void {
  return (line = '') => {
    stream.write(`${escapeControlCharacters(line)}\n`);
  };
}
