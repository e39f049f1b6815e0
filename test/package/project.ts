/**
 * The package as a user gets it: the tarballs `npm run pack` wrote (dist/npm/) installed by file
 * path into an empty project outside the checkout, and the recipes of the documentation
 * (docs/testing.md, docs/ci.md) written into it as they stand. Vitest and Jest are the checkout's
 * devDependencies, linked into the project (a user would install them; here they come from the
 * lockfile, with no registry).
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The tarballs of this version, main package first. @throws when `npm run pack` has not written them. */
export function tarballs(): string[] {
  const files = [`outreach-api-${VERSION}.tgz`, `outreach-api-linux-x64-${VERSION}.tgz`].map((name) =>
    join(ROOT, 'dist/npm', name),
  );
  for (const file of files)
    if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build && npm run pack`);
  return files;
}

/** The shell command that installs the tarballs as a user's dev dependencies, from no registry. */
export const INSTALL_COMMAND = (): string =>
  ['npm install --save-dev --no-audit --no-fund --offline', ...tarballs().map((t) => `'${t}'`)].join(' ');

export interface Project {
  dir: string;
  /** Runs `command` in bash in `cwd` (default the project); answers its status and output. */
  sh(command: string, options?: { cwd?: string; env?: Record<string, string>; timeoutMs?: number }): Promise<Run>;
  remove(): void;
}

export interface Run {
  status: number | null;
  output: string;
}

/**
 * A new project in a temporary directory with the tarballs installed (`npm install` by file path,
 * no registry) and, with `runners`, the checkout's vitest and jest linked into its node_modules.
 */
export function installedProject(options: { runners?: boolean; install?: boolean } = {}): Project {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-api-user-'));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'user-project', private: true }, null, 2)}\n`);
  if (options.install !== false) execFileSync('bash', ['-c', INSTALL_COMMAND()], { cwd: dir, stdio: 'pipe' });
  if (options.runners)
    for (const name of ['vitest', 'jest']) {
      symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
      mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules/.bin', name), join(dir, 'node_modules/.bin', name));
    }
  return {
    dir,
    sh: (command, { cwd = dir, env = {}, timeoutMs = 120_000 } = {}) => sh(command, cwd, env, timeoutMs),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `bash -eo pipefail -c command`, as a CI runner's shell, with output collected (stdin closed). */
function sh(command: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<Run> {
  return new Promise((done) => {
    // Not NODE_TEST_CONTEXT: a `node --test` in the project would think it runs inside this test.
    const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', command], {
      cwd,
      env: { ...inherited, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      done({ status, output });
    });
  });
}

/** A fenced block of a Markdown document whose info string has `title="…"`, under its nearest heading. */
export interface TitledBlock {
  heading: string;
  title: string;
  text: string;
}

/** Every titled fenced block of `file` (relative to the checkout), in order, as it stands. */
export function titledBlocks(file: string): TitledBlock[] {
  const blocks: TitledBlock[] = [];
  let heading = '';
  let block: { title: string; lines: string[] } | undefined;
  for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
    if (block) {
      if (line !== '```') block.lines.push(line);
      else {
        if (block.title) blocks.push({ heading, title: block.title, text: `${block.lines.join('\n')}\n` });
        block = undefined;
      }
    } else if (line.startsWith('```')) block = { title: /title="([^"]+)"/.exec(line)?.[1] ?? '', lines: [] };
    else if (/^#{2,3} /.test(line)) heading = line.replace(/^#+ /, '');
  }
  return blocks;
}

export interface DocRecipe {
  heading: string;
  /** Its files, by path in the project. */
  files: Map<string, string>;
  /** The block titled `run`: the command. */
  run: string;
}

/** The recipes of a document: under each heading, its titled files and the block titled `run`. */
export function docRecipes(file: string): DocRecipe[] {
  const recipes = new Map<string, DocRecipe>();
  for (const { heading, title, text } of titledBlocks(file)) {
    const recipe = recipes.get(heading) ?? { heading, files: new Map(), run: '' };
    recipes.set(heading, recipe);
    if (title === 'run') recipe.run = text;
    else recipe.files.set(title, text);
  }
  return [...recipes.values()];
}

/** Writes `files` under `dir` (paths relative to it). */
export function writeFiles(dir: string, files: Map<string, string>): void {
  for (const [path, text] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Processes whose working directory is `dir` or under it (Linux: /proc/<pid>/cwd). */
export function processesUnder(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) found.push(Number(entry));
    } catch {} // gone, or not ours to read
  }
  return found;
}
