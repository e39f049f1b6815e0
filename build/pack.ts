/**
 * `npm run pack`: the npm packages, on esbuild's and Biome's pattern (issue #29), as tarballs in
 * `dist/npm/`:
 *
 *   outreach-api-<version>.tgz              the main package: the launcher (bin/launcher.cjs, its
 *                                           `outreach-api` command) and bin/platform.cjs, the
 *                                           JavaScript bundle (dist/outreach-api.cjs, run under
 *                                           Node where no executable fits), `outreach-api/testing`
 *                                           and `outreach-api/client` (dist/lib/); no dependency,
 *                                           every platform package packed with it optional, better-sqlite3 an
 *                                           optional peer (the bundle's driver)
 *   outreach-api-<platform>-<version>.tgz   `@outreach-api/<platform>`: the single executable at
 *                                           bin/outreach-api, with `os`, `cpu` and `libc`
 *
 * The repository's package.json is the development manifest (private, its dependencies bundled
 * into what is packed); each packed manifest is written here from its name, version, description,
 * license, engines and repository. The platforms are bin/platform.cjs's `PLATFORMS`; each needs
 * its executable: `--executable <platform>=PATH` (repeatable), by default `dist/outreach-api` for
 * the platform this runs on and `dist/<platform>/outreach-api` for the others. A platform
 * without one is skipped, and said so (`--all-platforms`: an error instead, for a release).
 * Builds first (`npm run build`) when an output it packs is missing or older than the sources.
 *
 *   node --import tsx build/pack.ts [--executable linux-arm64=PATH]... [--all-platforms]
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { EXECUTABLE, PLATFORMS, packageOf } from '../bin/platform.cjs';
import { ROOT } from './bundle.js';
import { LIBRARIES, libraryExports } from './library.js';

/** Where the tarballs go. */
export const NPM_DIR = join(ROOT, 'dist/npm');

/**
 * The main package's files besides its package.json, relative to the checkout and to the package:
 * the launcher, the bundle, and what a user reads (the README and the docs/ it links to, so its
 * links hold in node_modules/outreach-api/ too; the licence).
 */
const MAIN_FILES = [
  'bin/launcher.cjs',
  'bin/platform.cjs',
  'dist/outreach-api.cjs',
  'README.md',
  'LICENSE',
  ...readdirSync(join(ROOT, 'docs')).map((file) => `docs/${file}`),
];
/** Files npm puts in every package whatever its `files` say (so not listed there). */
const ALWAYS_PACKED = new Set(['README.md', 'LICENSE']);

interface RootManifest {
  name: string;
  version: string;
  description?: string;
  license?: string;
  engines?: Record<string, string>;
  repository?: unknown;
  dependencies: Record<string, string>;
}

const log = (line: string): void => {
  process.stdout.write(`pack: ${line}\n`);
};

/** The platform this runs on, as a `PLATFORMS` key. */
const HOST = `${process.platform}-${process.arch}`;

/** Each platform's executable: the defaults, then `--executable KEY=PATH`. @throws on an unknown platform. */
function executables(argv: string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const key of Object.keys(PLATFORMS))
    found.set(key, join(ROOT, key === HOST ? 'dist/outreach-api' : `dist/${key}/outreach-api`));
  argv.forEach((arg, i) => {
    if (arg !== '--executable') return;
    const [key, path] = (argv[i + 1] ?? '').split(/=(.*)/s);
    if (!key || !path || !(key in PLATFORMS))
      throw new Error(`--executable takes <platform>=PATH, a platform among ${Object.keys(PLATFORMS).join(', ')}`);
    found.set(key, resolve(path));
  });
  return found;
}

/** The newest modification time under `paths` (files and directories, recursively), ms. */
function newest(paths: string[]): number {
  let latest = 0;
  const visit = (path: string) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else latest = Math.max(latest, stat.mtimeMs);
  };
  for (const path of paths) if (existsSync(path)) visit(path);
  return latest;
}

/** Runs `npm run build` when a built file to pack is missing or older than the sources. */
function buildIfNeeded(outputs: string[]): void {
  const sources = newest(['src', 'sql', 'build', 'package.json'].map((path) => join(ROOT, path)));
  const stale = outputs.filter((file) => !existsSync(file) || statSync(file).mtimeMs < sources);
  if (stale.length === 0) return;
  log(`building first: ${stale.map((file) => relative(ROOT, file)).join(', ')} missing or older than the sources`);
  execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'build/build.ts')], { cwd: ROOT, stdio: 'inherit' });
}

/** Puts `from` at `to` (a hard link where it can: the executable is 90 MiB), keeping its mode. */
function place(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
    chmodSync(to, statSync(from).mode & 0o777);
  }
}

/** `npm pack` of the package staged in `dir` into `NPM_DIR`; answers the tarball's file name. */
function npmPack(dir: string): { filename: string; size: number; entryCount: number } {
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm]] : ['npm', []];
  const out = execFileSync(command, [...args, 'pack', '--json', '--ignore-scripts', '--pack-destination', NPM_DIR], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return (JSON.parse(out) as { filename: string; size: number; entryCount: number }[])[0]!;
}

/** The `exports` of the libraries built into dist/lib/ (those whose every file is there). */
function exportsOf(): Record<string, unknown> {
  const built = Object.entries(libraryExports('dist/lib')).filter(([, conditions]) =>
    JSON.stringify(conditions)
      .match(/\.\/dist\/lib\/[^"]+/g)!
      .every((file) => existsSync(join(ROOT, file))),
  );
  return { ...Object.fromEntries(built), './package.json': './package.json' };
}

/**
 * Writes every tarball into `NPM_DIR` (removing the tarballs there before); answers their paths.
 * @throws when a build fails, an executable is missing under `--all-platforms`, or `npm pack` fails.
 */
export function pack(argv: string[] = []): string[] {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as RootManifest;
  const platformExecutables = executables(argv);
  const packed = [...platformExecutables].filter(([key, file]) => {
    if (existsSync(file) || key === HOST) return true;
    if (argv.includes('--all-platforms')) throw new Error(`no executable for ${key} at ${file}`);
    log(`skipped ${packageOf(key)}: no executable at ${relative(ROOT, file)} (--executable ${key}=PATH)`);
    return false;
  });
  const libraryFiles = Object.keys(LIBRARIES).map((name) => join(ROOT, 'dist/lib', `${name}.mjs`));
  buildIfNeeded([
    join(ROOT, 'dist/outreach-api.cjs'),
    ...libraryFiles,
    ...packed.filter(([key]) => key === HOST).map(([, file]) => file),
  ]);

  const common = {
    version: root.version,
    license: root.license,
    ...(root.repository ? { repository: root.repository } : {}),
  };
  const stage = join(NPM_DIR, '.stage');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(NPM_DIR, { recursive: true });
  for (const file of readdirSync(NPM_DIR)) if (file.endsWith('.tgz')) rmSync(join(NPM_DIR, file));
  const tarballs: string[] = [];
  try {
    for (const [key, executable] of packed) {
      const dir = join(stage, key);
      place(executable, join(dir, EXECUTABLE));
      place(join(ROOT, 'LICENSE'), join(dir, 'LICENSE'));
      const { os, cpu, libc } = PLATFORMS[key]!;
      const manifest = {
        name: packageOf(key),
        ...common,
        description: `The single executable of outreach-api for ${key}${libc ? ` (${libc})` : ''}`,
        os: [os],
        cpu: [cpu],
        ...(libc ? { libc: [libc] } : {}),
        files: [EXECUTABLE],
        preferUnplugged: true,
      };
      writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
      tarballs.push(report(npmPack(dir)));
    }

    const dir = join(stage, 'outreach-api');
    const libraries = existsSync(join(ROOT, 'dist/lib')) ? ['dist/lib/'] : [];
    for (const file of MAIN_FILES) place(join(ROOT, file), join(dir, file));
    for (const file of libraries.length ? readdirSync(join(ROOT, 'dist/lib')) : [])
      place(join(ROOT, 'dist/lib', file), join(dir, 'dist/lib', file));
    const manifest = {
      name: root.name,
      ...common,
      description: root.description,
      engines: root.engines,
      bin: { 'outreach-api': 'bin/launcher.cjs' },
      exports: exportsOf(),
      files: [...MAIN_FILES.filter((file) => !ALWAYS_PACKED.has(file)), ...libraries],
      // The platform packages packed with it: a main package naming one that was skipped (no executable
      // built here) would leave its installs without a lockfile entry for it, which `npm ci` refuses.
      optionalDependencies: Object.fromEntries(packed.map(([key]) => [packageOf(key), root.version])),
      peerDependencies: { 'better-sqlite3': root.dependencies['better-sqlite3'] },
      peerDependenciesMeta: { 'better-sqlite3': { optional: true } },
    };
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    tarballs.push(report(npmPack(dir)));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return tarballs;
}

/** Logs one tarball; answers its path. */
function report(tarball: { filename: string; size: number; entryCount: number }): string {
  const path = join(NPM_DIR, tarball.filename);
  log(`${relative(ROOT, path)}: ${(tarball.size / 2 ** 20).toFixed(1)} MiB, ${tarball.entryCount} files`);
  return path;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    pack(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`pack: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
