/**
 * `npm run build`: the single executable `dist/outreach-api` (Linux x64), offline.
 *
 * 1. esbuild bundles build/entry.ts (the CLI and server) into one CommonJS file,
 *    dist/outreach-api.cjs (build/bundle.ts).
 * 2. @yao-pkg/pkg in SEA mode turns it into a Node single executable application with the
 *    better-sqlite3 addon as a SEA asset. pkg's SEA mode would download a Node binary; its
 *    internal `sea()` takes `useLocalNode`/`nodePath` (not exposed on the 6.14 command line), so
 *    we call it with the Node running this script (debug symbols stripped when `strip` exists).
 *    pkg injects with `npx postject` from a temp directory: we put that directory inside this
 *    checkout so npx finds our postject devDependency, and run npx offline so it never fetches.
 * 3. pkg does not report a failed injection, so the result is checked by running `--version`.
 * 4. The libraries `outreach-api/testing` and `outreach-api/client` into dist/lib/ (build/library.ts).
 *
 * Run with `node --import tsx build/build.ts`. Options: `--no-strip`, `--bundle-only`, `--no-minify`
 * (readable function names in a CPU profile of the bundle: `node --cpu-prof dist/outreach-api.cjs serve …`).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { NATIVE_SQLITE_ASSET } from '../src/native.js';
import { ADDON, ROOT, bundleCli } from './bundle.js';
import { buildLibraries } from './library.js';

const dist = join(ROOT, 'dist');
const bundle = join(dist, 'outreach-api.cjs');
const executable = join(dist, 'outreach-api');

interface SeaTarget {
  nodeRange: string;
  platform: string;
  arch: string;
  output: string;
}
interface SeaOptions {
  targets: SeaTarget[];
  signature?: boolean;
  nodePath?: string;
  useLocalNode?: boolean;
  seaConfig?: Record<string, unknown>;
}
type Sea = (entryPoint: string, options: SeaOptions) => Promise<void>;

const log = (line: string): void => {
  process.stdout.write(`build: ${line}\n`);
};
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** The Node binary to embed: this one, or a copy without debug symbols when `strip` exists. */
function baseNode(work: string, strip: boolean): string {
  if (!strip) return process.execPath;
  const copy = join(work, 'node');
  copyFileSync(process.execPath, copy);
  try {
    execFileSync('strip', [copy], { stdio: 'pipe' });
    execFileSync(copy, ['-e', '0'], { stdio: 'pipe' });
    return copy;
  } catch {
    log('strip unavailable or failed; embedding the node binary as is');
    return process.execPath;
  }
}

async function packageExecutable(strip: boolean): Promise<void> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `the executable embeds the running Node, so build on Linux x64 (this is ${process.platform}-${process.arch})`,
    );
  }
  const work = join(dist, '.work');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  // pkg writes its blob under os.tmpdir() and runs `npx postject` and `node` from there.
  process.env.TMPDIR = work;
  process.env.npm_config_offline = 'true';
  process.env.npm_config_yes = 'false';
  process.env.PATH = [dirname(process.execPath), process.env.PATH].join(delimiter);
  rmSync(executable, { force: true });
  const require = createRequire(import.meta.url);
  const sea = (require('@yao-pkg/pkg/lib-es5/sea.js') as { default: Sea }).default;
  try {
    await sea(bundle, {
      targets: [
        { nodeRange: `node${process.versions.node.split('.')[0]}`, platform: 'linux', arch: 'x64', output: executable },
      ],
      nodePath: baseNode(work, strip),
      signature: false,
      seaConfig: {
        disableExperimentalSEAWarning: true,
        useCodeCache: true,
        assets: { [NATIVE_SQLITE_ASSET]: ADDON },
      },
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  chmodSync(executable, 0o755);
  const printed = execFileSync(executable, ['--version'], { encoding: 'utf8', env: { PATH: '/nonexistent' } }).trim();
  log(`${executable}: ${mib(statSync(executable).size)}, --version prints ${printed}`);
}

async function main(argv: string[]): Promise<void> {
  mkdirSync(dist, { recursive: true });
  const bundled = await bundleCli(bundle, !argv.includes('--no-minify'));
  log(`bundled ${bundled.migrations} migration(s) into ${bundle} (${mib(bundled.bytes)})`);
  const libraries = await buildLibraries(join(dist, 'lib'));
  log(`outreach-api/testing and outreach-api/client: ${libraries.length} files in ${join(dist, 'lib')}`);
  if (!argv.includes('--bundle-only')) await packageExecutable(!argv.includes('--no-strip'));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`build: ${(error as Error).message ?? String(error)}\n`);
  process.exitCode = 1;
});
