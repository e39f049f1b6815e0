/**
 * `npm run build`: the single executable of this machine's platform, `dist/outreach-api`
 * (`dist/outreach-api.exe` on Windows), offline.
 *
 * 1. esbuild bundles build/entry.ts (the CLI and server) into one CommonJS file,
 *    dist/outreach-api.cjs (build/bundle.ts).
 * 2. build/sea.ts turns it into a Node single executable application embedding the Node running
 *    this script (debug symbols stripped on Linux) and the better-sqlite3 addon of this checkout,
 *    with V8's code cache.
 * 3. The result is checked by running `--version` with no node on PATH.
 * 4. The libraries `outreach-api/testing` and `outreach-api/client` into dist/lib/ (build/library.ts).
 *
 * So the executable is of the platform and arch that build it: Linux x64 here and in CI; the
 * release workflow (.github/workflows/release.yml) runs it on macOS and Windows runners, where it
 * has not been tried from this repository's machine. Linux arm64 is built on x64 by build/arm64.ts.
 *
 * Run with `node --import tsx build/build.ts`. Options: `--no-strip`, `--bundle-only`, `--no-minify`
 * (readable function names in a CPU profile of the bundle: `node --cpu-prof dist/outreach-api.cjs serve …`).
 * Exits 1 with one line on stderr when a step fails.
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADDON, ROOT, bundleCli } from './bundle.js';
import { buildLibraries } from './library.js';
import { mib, seaExecutable, versionOf } from './sea.js';

const dist = join(ROOT, 'dist');
const bundle = join(dist, 'outreach-api.cjs');

/** Where `npm run build` writes the executable of this platform. */
export const HOST_EXECUTABLE = join(dist, process.platform === 'win32' ? 'outreach-api.exe' : 'outreach-api');

const log = (line: string): void => {
  process.stdout.write(`build: ${line}\n`);
};

async function packageExecutable(strip: boolean): Promise<void> {
  const arch = process.arch;
  if (arch !== 'x64' && arch !== 'arm64') throw new Error(`no single executable for ${arch} (x64 and arm64 only)`);
  await seaExecutable(
    {
      bundle,
      addon: ADDON,
      node: process.execPath,
      platform: process.platform,
      arch,
      output: HOST_EXECUTABLE,
      codeCache: true,
      // GNU strip on Linux; a macOS binary is signed, and Windows has no strip.
      strip: strip && process.platform === 'linux' ? 'strip' : null,
    },
    log,
  );
  log(`${HOST_EXECUTABLE}: ${mib(statSync(HOST_EXECUTABLE).size)}, --version prints ${versionOf(HOST_EXECUTABLE)}`);
}

/**
 * Bundles, then (unless `--bundle-only`) writes HOST_EXECUTABLE. `argv`: the options above.
 * Throws when esbuild, pkg or the `--version` check fails.
 */
export async function buildHostExecutable(argv: string[] = []): Promise<void> {
  mkdirSync(dist, { recursive: true });
  const bundled = await bundleCli(bundle, !argv.includes('--no-minify'));
  log(`bundled ${bundled.migrations} migration(s) into ${bundle} (${mib(bundled.bytes)})`);
  const libraries = await buildLibraries(join(dist, 'lib'));
  log(`outreach-api/testing and outreach-api/client: ${libraries.length} files in ${join(dist, 'lib')}`);
  if (!argv.includes('--bundle-only')) await packageExecutable(!argv.includes('--no-strip'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildHostExecutable(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`build: ${(error as Error).message ?? String(error)}\n`);
    process.exitCode = 1;
  });
}
