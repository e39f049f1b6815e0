/**
 * A consistent copy of a live database (decisions.md §15 "Backup"), with SQLite's `VACUUM INTO`:
 * it reads one snapshot inside a read transaction, so writers (in WAL mode) go on meanwhile and
 * the copy holds every transaction committed before it began and nothing after. The copy is
 * compacted and self-contained (no `-wal` file): restoring is starting the server on it.
 */
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BackupError, type BackupResult, type SqliteStore } from '../store.js';

/**
 * Writes a copy of `store` to `file` (`Store.backupTo` of a SQLite store): first under a
 * temporary name in the same directory, then renamed, so `file` never holds a partial copy.
 * @throws BackupError when `file` already exists or its directory does not.
 */
export async function backupTo(store: SqliteStore, file: string): Promise<BackupResult> {
  if (existsSync(file)) throw new BackupError(`${file} already exists; choose a new file name`);
  if (!existsSync(dirname(file))) throw new BackupError(`directory ${dirname(file)} does not exist`);
  const partial = join(dirname(file), `.${basename(file)}.partial-${process.pid}`);
  rmSync(partial, { force: true });
  const started = performance.now();
  try {
    await store.exclusive((sqlite) => sqlite.prepare('VACUUM INTO ?').run(partial));
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
  return { bytes: statSync(file).size, durationMs: performance.now() - started };
}
