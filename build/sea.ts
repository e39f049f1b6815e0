/**
 * One single executable from the bundle: a Node binary (this one, or another platform's), the
 * bundle as the SEA main script and better-sqlite3's addon as a SEA asset, put together by
 * @yao-pkg/pkg's `sea()`. `npm run build` (build/build.ts) makes this platform's executable with
 * the Node running it; build/arm64.ts makes Linux arm64's with the Node of the npm registry.
 *
 * pkg's SEA mode would download a Node binary; its internal `sea()` takes `nodePath` (not exposed on
 * the 6.14 command line), so we hand it the Node binary to embed. It writes the blob with the `node`
 * first on PATH (we put the running one there) and injects it with `npx postject` from a temp
 * directory: we put that directory inside this checkout so npx finds our postject devDependency,
 * and run npx offline so it never fetches. pkg does not report a failed injection: the caller checks
 * the result by running it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { NATIVE_SQLITE_ASSET } from '../src/native.js';
import { ROOT } from './bundle.js';

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
   * V8's code cache in the blob: 0.2–0.3 s less at every start, but made by the running Node, so
   * only for an executable of this platform and arch, and not byte-for-byte repeatable (V8 writes
   * strings' hashes under a seed drawn at random per process).
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
    await sea(input.bundle, {
      targets: [
        { nodeRange: `node${process.versions.node.split('.')[0]}`, platform, arch: input.arch, output: input.output },
      ],
      nodePath: strippedNode(input.node, work, input.strip, log),
      // pkg signs macOS executables ad hoc (`codesign`), as macOS requires on arm64.
      signature: input.platform === 'darwin',
      seaConfig: {
        disableExperimentalSEAWarning: true,
        useCodeCache: input.codeCache,
        assets: { [NATIVE_SQLITE_ASSET]: input.addon },
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
