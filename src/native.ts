/**
 * The better-sqlite3 native addon inside the single executable (`npm run build`).
 *
 * A Node single executable application cannot `require()` a `.node` file from its blob, and the
 * kernel can only map a shared object from a real file. So the build embeds the addon as a SEA
 * asset, and on first use this module writes it once to a private per-version cache directory
 * and loads it with `process.dlopen`. The loaded addon is handed to better-sqlite3 as its
 * `nativeBinding` (see `src/db/connection.ts`). Nothing here runs from source or under Deno.
 */
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { constants as osConstants, homedir, tmpdir } from 'node:os';
import { isAbsolute, join, sep } from 'node:path';

/** SEA asset key (and cached file name) of the better-sqlite3 addon. */
export const NATIVE_SQLITE_ASSET = 'better_sqlite3.node';

/**
 * Where the addon may be cached, best first: `$XDG_CACHE_HOME/outreach-api/<leaf>`, else
 * `~/.cache/outreach-api/<leaf>`, then `<tmpdir>/outreach-api-<uid>/<leaf>` for when the home
 * directory is missing or not writable. `leaf` is `<version>-<content hash>`, so a new build
 * never loads an old addon.
 */
export function nativeCacheDirs(leaf: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs: string[] = [];
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) dirs.push(join(xdg, 'outreach-api', leaf));
  let home = '';
  try {
    home = homedir();
  } catch {
    // No HOME and no passwd entry: only the temp directory is left.
  }
  if (home && isAbsolute(home)) dirs.push(join(home, '.cache', 'outreach-api', leaf));
  dirs.push(join(tmpdir(), `outreach-api-${process.getuid?.() ?? 'user'}`, leaf));
  return dirs;
}

/**
 * A directory we may load code from: a real directory (not a symlink) owned by us that nobody
 * else can write to. Otherwise another local user could swap the addon under us (this matters
 * for the shared temp directory).
 */
function assertPrivateDir(dir: string): void {
  const stat = lstatSync(dir);
  const uid = process.getuid?.();
  if (!stat.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (uid !== undefined && stat.uid !== uid) throw new Error(`${dir} belongs to another user`);
  if ((stat.mode & 0o022) !== 0) throw new Error(`${dir} is writable by others`);
}

/**
 * `mkdir -p` with mode 0700 for what it creates. Not `mkdirSync(…, { recursive: true })`: Node 20's
 * spins forever where mkdir answers ENOENT under an existing parent (e.g. HOME=/proc).
 */
function makeDirs(dir: string): void {
  let path = '';
  for (const part of dir.split(sep)) {
    path = path ? join(path, part) : part || sep;
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/**
 * Makes sure `dir/name` holds exactly `bytes` (mode 0500 in a 0700 directory) and returns its
 * path. An existing file of the right size, owned by us, is reused; otherwise the bytes are
 * written to a temporary name and renamed into place, so a concurrent start never sees half a file.
 * @throws when the directory cannot be created or written, or is not private.
 */
export function materialise(dir: string, name: string, bytes: Uint8Array): string {
  makeDirs(dir);
  assertPrivateDir(dir);
  assertPrivateDir(join(dir, '..'));
  const file = join(dir, name);
  try {
    const stat = lstatSync(file);
    if (
      stat.isFile() &&
      stat.size === bytes.byteLength &&
      stat.uid === (process.getuid?.() ?? stat.uid) &&
      (stat.mode & 0o022) === 0
    )
      return file;
    rmSync(file, { force: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const partial = `${file}.${process.pid}.partial`;
  const fd = openSync(
    partial,
    fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW,
    0o500,
  );
  try {
    for (let offset = 0; offset < bytes.byteLength; ) offset += writeSync(fd, bytes, offset);
    if (fstatSync(fd).size !== bytes.byteLength) throw new Error(`short write to ${partial}`);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
  return file;
}

/** The file each addon loaded by `dlopenAddon` came from (a worker thread loads it again from there). */
const addonFiles = new WeakMap<object, string>();

/** The file `addon` (exports returned by `dlopenAddon`) was loaded from, or null. */
export function addonFileOf(addon: unknown): string | null {
  return typeof addon === 'object' && addon !== null ? (addonFiles.get(addon) ?? null) : null;
}

/** Loads a native addon from `file` and returns its exports. */
export function dlopenAddon(file: string): unknown {
  const module = { exports: {} as unknown };
  process.dlopen(module, file, osConstants.dlopen.RTLD_NOW);
  if (typeof module.exports === 'object' && module.exports !== null) addonFiles.set(module.exports, file);
  return module.exports;
}

/**
 * Writes `bytes` to the first usable cache directory for `leaf` and loads it. A directory that
 * cannot be written, is not private, or sits on a `noexec` mount is skipped for the next.
 * @throws with every directory's reason when none works.
 */
export function loadCachedAddon(bytes: Uint8Array, leaf: string, env: NodeJS.ProcessEnv = process.env): unknown {
  const failures: string[] = [];
  for (const dir of nativeCacheDirs(leaf, env)) {
    try {
      return dlopenAddon(materialise(dir, NATIVE_SQLITE_ASSET, bytes));
    } catch (error) {
      failures.push(`${dir}: ${(error as Error).message}`);
    }
  }
  throw new Error(`cannot load the embedded SQLite driver; tried\n  ${failures.join('\n  ')}`);
}
