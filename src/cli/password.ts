/**
 * Reading a new password for `outreach-api accounts password ACCOUNT_ID` (decisions.md §18):
 * from the terminal without echo, asked twice; or, with `--password-stdin`, the whole of standard
 * input (one trailing newline dropped), for scripts. The password never reaches an argument, the
 * environment or any output.
 */
import type { Readable } from 'node:stream';
import type { CliIo } from './io.js';

type CliInput = NonNullable<CliIo['stdin']>;

/** Most bytes read from standard input (a password is at most 1024 characters). */
const MAX_STDIN_BYTES = 64 * 1024;

/** A refusal to report in one line (exit code 1). */
export class PasswordInputError extends Error {}

/**
 * Reads all of `input` (at most 64 KiB) and drops one trailing `\n` or `\r\n`.
 * @throws PasswordInputError when it is longer.
 */
export async function readPasswordFromStdin(input: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of input) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += buffer.length;
    if (bytes > MAX_STDIN_BYTES) throw new PasswordInputError('standard input is too long for a password');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * Asks `prompt` on the terminal `input` and reads one line with echo off (raw mode: each key is
 * read as typed and nothing is written back). Backspace deletes; Ctrl-C or Ctrl-D cancel.
 * @throws PasswordInputError when cancelled or the input ends.
 */
function askHidden(input: CliInput, output: CliIo['stderr'], prompt: string): Promise<string> {
  // Echo off before the prompt shows: what is typed (or pasted) as soon as it shows is never echoed.
  input.setRawMode!(true);
  input.resume();
  output.write(prompt);
  return new Promise<string>((resolve, reject) => {
    let typed = '';
    const finish = (error?: Error) => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.setRawMode!(false);
      input.pause();
      output.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onEnd = () => finish(new PasswordInputError('the terminal closed before a password was entered'));
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003' || char === '\u0004') return finish(new PasswordInputError('cancelled'));
        if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('');
        else typed += char;
      }
    };
    input.on('data', onData);
    input.once('end', onEnd);
  });
}

/**
 * The new password: from standard input with `fromStdin`, else asked twice on the terminal.
 * @param problemOf the password rule: what is wrong with a password, or undefined; checked on
 *   the first entry, so a refused password is not asked for twice.
 * @throws PasswordInputError with the rule's words when the password breaks it, when standard
 *   input is not a terminal (and `fromStdin` is not set), when the two entries differ, or when
 *   reading is cancelled.
 */
export async function readNewPassword(
  input: CliInput,
  output: CliIo['stderr'],
  fromStdin: boolean,
  problemOf: (password: string) => string | undefined,
): Promise<string> {
  const checked = (password: string) => {
    const problem = problemOf(password);
    if (problem) throw new PasswordInputError(`${problem} Nothing was changed.`);
    return password;
  };
  if (fromStdin) return checked(await readPasswordFromStdin(input));
  if (!input.isTTY || typeof input.setRawMode !== 'function')
    throw new PasswordInputError(
      'standard input is not a terminal: type the password in a terminal, or pass --password-stdin to read it from standard input',
    );
  const first = checked(await askHidden(input, output, 'New password: '));
  const second = await askHidden(input, output, 'The same password again: ');
  if (first !== second) throw new PasswordInputError('the two passwords differ; nothing was changed');
  return first;
}
