/**
 * The ready file (`serve --ready-file PATH`, or `OUTREACH_API_READY_FILE`; issue #29): a JSON
 * object a test runner or a CI step reads instead of parsing the banner or guessing a port.
 *
 * `serve` checks before it opens the database that the file's directory takes a new file (and
 * removes a file left there by an earlier run), writes the file once the server answers (after
 * it listens and its workers run) and removes it when it stops gracefully. The file appears
 * whole or not at all: it is written under a temporary name in the same directory and renamed.
 * `outreach-api wait --ready-file PATH` reads it (./wait.ts).
 */
import {
  closeSync,
  constants,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** What the ready file holds. */
export interface ReadyFile {
  /** The server's origin, with the port it listens on (also under `--port 0`): `http://127.0.0.1:41234`. */
  url: string;
  /** The API's base URL: `${url}/api/public/v1`. */
  apiUrl: string;
  /** The fixture admin API, `${url}/__admin`, with `--fixture`; `null` without it. */
  adminUrl: string | null;
  /** The server's process id. */
  pid: number;
  /** outreach-api's version. */
  version: string;
  /** With `--demo`, and only while it is an active token: the demo token, with every scope. */
  token?: string;
}

/** The temporary name `write` renames into place: hidden, in the same directory, this process's own. */
const temporaryOf = (path: string): string => join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);

/** Why `dir` takes no new file, in words, from the error creating one there. */
function unwritable(dir: string, error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return existsSync(dir) ? `the directory ${dir} takes no new file` : `the directory ${dir} does not exist`;
    case 'ENOTDIR':
      return `${dir} is not a directory`;
    case 'EACCES':
    case 'EPERM':
      return `the directory ${dir} is not writable`;
    case 'EROFS':
      return `${dir} is on a read-only file system`;
    default:
      return `${dir}: ${error.code ?? error.message}`;
  }
}

/**
 * Checks that the ready file can be written, before the server starts: creates and removes its
 * temporary file, and removes a ready file an earlier run left at `path` (a reader must never
 * take it for this run's).
 * @returns the absolute path (a later `chdir` changes nothing).
 * @throws Error with a one-line message (`cannot write the ready file …: the directory … does not exist`).
 */
export function prepareReadyFile(path: string): string {
  const absolute = resolve(path);
  const fail = (reason: string) => new Error(`cannot write the ready file ${path}: ${reason}`);
  let directory = false;
  try {
    directory = statSync(absolute).isDirectory();
  } catch {
    // Nothing there yet (or not visible): the probe below says whether a file can be made.
  }
  if (directory) throw fail('it is a directory');
  const probe = temporaryOf(absolute);
  try {
    closeSync(openSync(probe, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o644));
    rmSync(probe, { force: true });
    rmSync(absolute, { force: true });
  } catch (error) {
    throw fail(unwritable(dirname(absolute), error as NodeJS.ErrnoException));
  }
  return absolute;
}

/**
 * Writes `ready` to `path` atomically (a temporary file in the same directory, then a rename).
 * @returns the text written, for `removeReadyFile`.
 * @throws when the file cannot be written (the directory changed since `prepareReadyFile`).
 */
export function writeReadyFile(path: string, ready: ReadyFile): string {
  const text = `${JSON.stringify(ready, null, 2)}\n`;
  const temporary = temporaryOf(path);
  const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o644);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  return text;
}

/** Removes the ready file at `path` if it still holds `text` (what this process wrote); never throws. */
export function removeReadyFile(path: string, text: string): void {
  try {
    if (readFileSync(path, 'utf8') === text) rmSync(path, { force: true });
  } catch {
    // Gone already, or not ours to remove.
  }
}

/**
 * The ready file at `path`, or why there is none yet (it does not exist, or it is not a ready
 * file: JSON without a `url` string).
 */
export function readReadyFile(path: string): { ready: ReadyFile } | { missing: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { missing: code === 'ENOENT' ? `no ready file at ${path} yet` : `cannot read ${path}: ${code}` };
  }
  try {
    const ready = JSON.parse(text) as ReadyFile;
    if (typeof ready?.url === 'string') return { ready };
  } catch {
    // Not JSON: reported below.
  }
  return { missing: `${path} is not a ready file (a JSON object with a "url")` };
}
