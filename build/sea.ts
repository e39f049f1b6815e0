/**
 * One single executable from the bundle: a Node binary (this one, or another platform's), a small
 * loader as the SEA main script (build/sea-loader.ts), and as SEA assets the bundle, V8's code
 * cache of a whole start of it (made here by running it, for this platform only), better-sqlite3's
 * addon and the reference page's files, put together by @yao-pkg/pkg's `sea()`. `npm run build` (build/build.ts) makes this platform's executable with
 * the Node running it; build/arm64.ts makes Linux arm64's with the Node of the npm registry.
 *
 * pkg's SEA mode would download a Node binary; its internal `sea()` takes `nodePath` (not exposed on
 * the 6.14 command line), so we hand it the Node binary to embed. It writes the blob with the `node`
 * first on PATH (we put the running one there) and injects it with `npx postject` from a temp
 * directory: we put that directory inside this checkout so npx finds our postject devDependency,
 * and run npx offline so it never fetches. pkg does not report a failed injection: the caller checks
 * the result by running it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { DOCS_ASSET_FILES, docsSeaAsset } from '../src/http/docs-assets.js';
import { NATIVE_SQLITE_ASSET } from '../src/native.js';
import { build } from 'esbuild';
import { ROOT } from './bundle.js';
import { BUNDLE_ASSET, CODE_CACHE_ASSET, MAKE_CODE_CACHE_VARIABLE } from './sea-assets.js';

interface PkgTarget {
  nodeRange: string;
  platform: string;
  arch: string;
  output: string;
}
interface PkgSeaOptions {
  targets: PkgTarget[];
  signature?: boolean;
  nodePath?: string;
  seaConfig?: Record<string, unknown>;
}
type PkgSea = (entryPoint: string, options: PkgSeaOptions) => Promise<void>;

/** pkg's names of Node's platforms (`process.platform` → pkg target platform). */
const PKG_PLATFORMS: Partial<Record<NodeJS.Platform, string>> = { linux: 'linux', darwin: 'macos', win32: 'win' };

export interface SeaInput {
  /** The CommonJS bundle (build/bundle.ts). */
  bundle: string;
  /** better-sqlite3's addon built for `platform`/`arch`, embedded as the SEA asset. */
  addon: string;
  /** The Node binary to embed; must be the version running this build (the blob format is per version). */
  node: string;
  platform: NodeJS.Platform;
  arch: 'x64' | 'arm64';
  /** Where the executable goes (replaced). */
  output: string;
  /**
   * V8's code cache of a whole start (build/sea-loader.ts) in the blob: made by running the bundle
   * under `node`, which must be the Node embedded, so only for an executable of this platform and
   * arch; not byte-for-byte repeatable (V8 writes strings' hashes under a seed drawn at random per
   * process). Without it the executable compiles the bundle at every start.
   */
  codeCache: boolean;
  /**
   * A `strip` for the binary's platform (`strip`, `aarch64-linux-gnu-strip`): the Node binary is
   * embedded without its debug symbols (about 20 MiB less). Null embeds it as it is.
   */
  strip: string | null;
}

/** Makes `input.output` and marks it executable. Throws when pkg throws or nothing was written. */
export async function seaExecutable(input: SeaInput, log: (line: string) => void): Promise<void> {
  const platform = PKG_PLATFORMS[input.platform];
  if (!platform) throw new Error(`no single executable for ${input.platform}`);
  const work = join(ROOT, 'dist', `.work-${input.platform}-${input.arch}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const saved = { TMPDIR: process.env.TMPDIR, PATH: process.env.PATH };
  // pkg writes its blob under os.tmpdir() and runs `npx postject` and `node` from there.
  process.env.TMPDIR = work;
  process.env.npm_config_offline = 'true';
  process.env.npm_config_yes = 'false';
  process.env.PATH = [dirname(process.execPath), process.env.PATH].join(delimiter);
  rmSync(input.output, { force: true });
  const require = createRequire(import.meta.url);
  const sea = (require('@yao-pkg/pkg/lib-es5/sea.js') as { default: PkgSea }).default;
  try {
    const loader = join(work, 'loader.cjs');
    await build({
      absWorkingDir: ROOT,
      entryPoints: ['build/sea-loader.ts'],
      outfile: loader,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      logLevel: 'warning',
    });
    const cache = input.codeCache ? await makeCodeCache(input.node, loader, input.bundle, work) : undefined;
    if (cache) log(`code cache of a start: ${mib(statSync(cache).size)}`);
    await sea(loader, {
      targets: [
        { nodeRange: `node${process.versions.node.split('.')[0]}`, platform, arch: input.arch, output: input.output },
      ],
      nodePath: strippedNode(input.node, work, input.strip, log),
      // pkg signs macOS executables ad hoc (`codesign`), as macOS requires on arm64.
      signature: input.platform === 'darwin',
      seaConfig: {
        disableExperimentalSEAWarning: true,
        // The loader is small; the bundle's cache is the asset below.
        useCodeCache: false,
        assets: {
          [BUNDLE_ASSET]: input.bundle,
          ...(cache ? { [CODE_CACHE_ASSET]: cache } : {}),
          [NATIVE_SQLITE_ASSET]: input.addon,
          ...docsAssetFiles(),
        },
      },
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
  if (!statSync(input.output, { throwIfNoEntry: false })?.size) throw new Error(`pkg wrote no ${input.output}`);
  chmodSync(input.output, 0o755);
}

/** How long the code cache's start may take before the build gives up, ms. */
const CODE_CACHE_START_MS = 60_000;

/**
 * Runs `serve --demo --fixture` from `bundle` through `loader` under `node` on a new database file
 * in `work`, asks `/healthz` and the API's `/me` (with the demo token) once, stops it with
 * SIGTERM, and returns the code cache the loader wrote at exit: the functions a start and a first
 * API request compile, for the executable to skip compiling. The demo and the fixture make it
 * cover `startFixture()`'s start as well as a plain `serve`'s (what one start does not call is
 * compiled when first called, as without a cache).
 * @throws when the server does not answer within CODE_CACHE_START_MS, answers either request
 * with another status than 200, or no cache was written.
 */
async function makeCodeCache(node: string, loader: string, bundle: string, work: string): Promise<string> {
  const cache = join(work, 'code-cache.bin');
  const ready = join(work, 'ready.json');
  const child = spawn(
    node,
    [loader, 'serve', '--db', join(work, 'code-cache.db'), '--demo', '--fixture', '--port', '0', '--ready-file', ready],
    {
      cwd: work,
      stdio: 'ignore',
      // Only what a start needs: no OUTREACH_API_* setting of this shell reaches it. V8 stamps the
      // cache with its flags at exit and rejects it when they differ at load: the start must not
      // set --optimize-for-size (server.optimizeForSize), --heap-growing-percent
      // (server.heapGrowingPercent) nor --semi-space-growth-factor (server.maxSemiSpaceMb), or
      // every start compiles from scratch.
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        [MAKE_CODE_CACHE_VARIABLE]: [bundle, cache].join(delimiter),
        OUTREACH_API_SERVER_OPTIMIZE_FOR_SIZE: 'false',
        OUTREACH_API_SERVER_HEAP_GROWING_PERCENT: '0',
        OUTREACH_API_SERVER_MAX_SEMI_SPACE_MB: '0',
      },
    },
  );
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  try {
    const deadline = Date.now() + CODE_CACHE_START_MS;
    while (!existsSync(ready)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error('the code cache start did not get ready');
      await new Promise((done) => setTimeout(done, 10));
    }
    const { url, apiUrl, token } = JSON.parse(readFileSync(ready, 'utf8')) as {
      url: string;
      apiUrl: string;
      token: string;
    };
    const health = await fetch(`${url}/healthz`);
    if (health.status !== 200) throw new Error(`the code cache start answered /healthz ${health.status}`);
    // An API request too, so that a client's first call (auth, the token's row, a handler) finds
    // its functions compiled (docs/performance.md, "Cold start and the environment").
    const me = await fetch(`${apiUrl}/me`, { headers: { authorization: `Bearer ${token}` } });
    if (me.status !== 200) throw new Error(`the code cache start answered /me ${me.status}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  if (!statSync(cache, { throwIfNoEntry: false })?.size) throw new Error('the code cache start wrote no cache');
  return cache;
}

/**
 * The reference page's files (Swagger UI) by SEA asset key: read on first use from the blob
 * (build/entry.ts), not part of the script every start reads.
 * @throws when `swagger-ui-dist` is not installed.
 */
function docsAssetFiles(): Record<string, string> {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return Object.fromEntries(DOCS_ASSET_FILES.map((name) => [docsSeaAsset(name), join(dir, name)]));
}

/** `node`, or a copy of it in `work` without debug symbols when `strip` is given and works. */
function strippedNode(node: string, work: string, strip: string | null, log: (line: string) => void): string {
  if (!strip) return node;
  const copy = join(work, 'node');
  copyFileSync(node, copy);
  try {
    execFileSync(strip, [copy], { stdio: 'pipe' });
    return copy;
  } catch {
    log(`${strip} unavailable or failed; embedding ${node} as is`);
    return node;
  }
}

/**
 * Runs `executable --version` with nothing else on PATH (through `wrapper`, e.g. qemu, when
 * given) and returns what it printed. Throws when it fails to run or exits non-zero.
 */
export function versionOf(executable: string, wrapper: string[] = []): string {
  const env: NodeJS.ProcessEnv =
    process.platform === 'win32' ? { SystemRoot: process.env.SystemRoot } : { PATH: '/nonexistent' };
  const [command, ...args] = [...wrapper, executable, '--version'];
  // The wrapper is looked up on this PATH; the executable sees none.
  const path = (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, command!));
  const resolved = wrapper.length ? (path.find((file) => existsSync(file)) ?? command!) : command!;
  return execFileSync(resolved, args, { encoding: 'utf8', env }).trim();
}

/** `bytes` in MiB with one decimal, for build logs. */
export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
