/**
 * Where a SQLite database file is, checked before it is opened (issue #21): a command that only
 * reads or changes a store refuses a path with no database ("no database at PATH") instead of
 * creating an empty one there, and a command that may create one (`migrate`, `seed`, `import`,
 * `serve`) creates its file and missing directories itself, one at a time, so a path that cannot
 * be created fails at once with the path and the reason (Node's recursive `mkdir` never returns
 * on `/proc/nope`, and SQLite says only "unable to open database file").
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A database location that cannot be used, with the path and the reason in its message. */
export class DatabasePathError extends Error {
  override readonly name = 'DatabasePathError';
}

/** Whether `location` names a SQLite file: not `:memory:`, and not a URL (`postgres://…`). */
export const isDatabaseFile = (location: string): boolean =>
  location !== ':memory:' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(location);

/** The system's words for a failed file operation (`EACCES: permission denied, mkdir '/x'` → `permission denied`). */
function reasonOf(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const words = /^[A-Z0-9]+: ([^,]+),/.exec(message ?? '')?.[1];
  return words ?? code ?? String(error);
}

/**
 * Makes sure the SQLite database at `path` can be opened, before the store opens it.
 * - An existing file is left as it is (a directory there is refused).
 * - A missing one is refused when `create` is false: `no database at PATH`.
 * - Else its missing directories are made one by one, then the file itself (empty: SQLite makes
 *   it a database when it opens it).
 * `:memory:` and URLs pass unchecked.
 * @returns true when this call created the file.
 * @throws DatabasePathError naming the path and, when it could not be created, the reason
 *   (`permission denied`, `read-only file system`, `not a directory`, …).
 */
export function prepareDatabaseFile(path: string, options: { create: boolean }): boolean {
  if (!isDatabaseFile(path)) return false;
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) throw new DatabasePathError(`${path} is a directory, not a database file`);
    return false;
  }
  if (!options.create) throw new DatabasePathError(`no database at ${path}`);
  const missing: string[] = [];
  for (let dir = dirname(path); !existsSync(dir); dir = dirname(dir)) {
    missing.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory()) continue;
      throw new DatabasePathError(`cannot create the database at ${path}: directory ${dir}: ${reasonOf(error)}`);
    }
  }
  try {
    writeFileSync(path, '', { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new DatabasePathError(`cannot create the database at ${path}: ${reasonOf(error)}`);
  }
  return true;
}
