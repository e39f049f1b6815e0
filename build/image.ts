/**
 * The container image, built from the Dockerfile with buildah, without a daemon or a registry:
 * one image per arch on a base made here, gathered into a multi-arch OCI image index and written as
 * one OCI layout archive (`npm run release`, and the image test, test/image/image.test.ts).
 *
 * The base (FROM scratch) holds what the single executable and its SQLite addon need and nothing
 * else, the set gcr.io/distroless/cc-debian12 holds for the Dockerfile's users:
 * - the shared libraries both ask for (ELF `NEEDED`, followed to the end, and the program
 *   interpreter), copied from this Debian machine: amd64's from /lib/x86_64-linux-gnu, arm64's from
 *   Debian's arm64 packages of the same names (fetched once with apt-get into dist/.cache, since the
 *   cross toolchain's libc6-arm64-cross does not follow the point releases' security fixes);
 * - /etc/passwd and /etc/group with root, nobody and nonroot (65532, home /home/nonroot owned by it),
 *   /etc/nsswitch.conf (`hosts: files dns`: glibc reads /etc/hosts, then the resolver), the CA
 *   bundle of Debian's ca-certificates at /etc/ssl/certs/ca-certificates.crt, and /tmp (1777).
 * No time zone data: Node's ICU carries its own. No shell: the HEALTHCHECK runs the executable.
 *
 * buildah builds the Dockerfile with `--format docker`, keeping the HEALTHCHECK; an OCI image config
 * has no such field and buildah drops it when it writes OCI, so it is put back into each config as
 * `config.Healthcheck`, the extension Docker reads from OCI images (moby's docker-image-spec).
 * Everything is stamped with time 0 (`--timestamp 0`, the archive's tar headers), so the same
 * executables and libraries give the same archive.
 *
 * Debian's packages it needs: buildah (and apt-get for arm64's libraries). Containers storage goes
 * where the caller says (`storageArgs`), driver vfs, isolation chroot: what works unprivileged of
 * a daemon on this machine.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ROOT } from './bundle.js';

/** Docker's name of an arch, and how this machine finds that arch's libraries. */
export type ImageArch = 'amd64' | 'arm64';

interface ArchLibraries {
  /** Debian's multiarch triplet: the libraries go to /lib/<triplet>/ in the image. */
  triplet: string;
  /** Where the libraries are found on this machine, in order. */
  dirs: () => string[];
}

const CACHE = join(ROOT, 'dist', '.cache');

/** Debian's packages that hold every library the executable and the addon ask for. */
const LIBRARY_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6'];

const ARCHES: Record<ImageArch, ArchLibraries> = {
  amd64: { triplet: 'x86_64-linux-gnu', dirs: () => ['/lib/x86_64-linux-gnu', '/lib64'] },
  arm64: {
    triplet: 'aarch64-linux-gnu',
    dirs: () => {
      const root = debianPackages('arm64', LIBRARY_PACKAGES);
      return [join(root, 'lib/aarch64-linux-gnu'), join(root, 'usr/lib/aarch64-linux-gnu'), join(root, 'lib')];
    },
  },
};

export interface ImageInput {
  arch: ImageArch;
  /** The single executable for that arch. */
  executable: string;
  /** The SQLite addon it embeds (loaded at run time: its libraries go into the base too). */
  addon: string;
}

export interface ImageResult {
  /** `localhost/outreach-api:<version>`, the manifest list in buildah's storage. */
  list: string;
  /** Per arch, the image's name in buildah's storage. */
  images: Partial<Record<ImageArch, string>>;
  /** Per arch, the sizes of its layers as the archive stores them (gzip), in bytes. */
  compressedBytes: Partial<Record<ImageArch, number>>;
}

/** buildah's and podman's options for a containers storage of its own under `dir` (vfs). */
export function storageArgs(dir: string): string[] {
  return ['--root', join(dir, 'storage'), '--runroot', join(dir, 'run'), '--storage-driver', 'vfs'];
}

const log = (line: string): void => {
  process.stdout.write(`build:image: ${line}\n`);
};

/** Runs `buildah ARGS…` on `storage`; throws with the end of its output when it fails. */
function buildah(storage: string[], args: string[]): string {
  try {
    return execFileSync('buildah', [...storage, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    throw new Error(`buildah ${args.join(' ')} failed:\n${`${failed.stdout}${failed.stderr}`.slice(-4000)}`);
  }
}

/**
 * Builds one image per input from the Dockerfile (EXECUTABLE=release) on a base made here, a
 * manifest list of them, and writes it to `archive` as an OCI layout tar whose index is named
 * `outreach-api:<version>` (podman and Docker load it under that name). `work` is a scratch
 * directory (emptied). Throws with buildah's output when a step fails.
 */
export function buildImages(
  inputs: ImageInput[],
  options: { version: string; storage: string[]; work: string; archive: string },
): ImageResult {
  const { version, storage, work } = options;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const context = join(work, 'context');
  const images: ImageResult['images'] = {};
  for (const input of inputs) {
    const base = `localhost/outreach-api-base:${version}-${input.arch}`;
    const rootfs = join(work, `base-${input.arch}`);
    writeBaseRootfs(input, rootfs);
    const build = ['build', '--isolation', 'chroot', '--timestamp', '0', '--platform', `linux/${input.arch}`];
    buildah(storage, [...build, '-f', join(rootfs, 'Containerfile'), '-t', base, rootfs]);
    mkdirSync(join(context, input.arch), { recursive: true });
    copyFileSync(input.executable, join(context, input.arch, 'outreach-api'));
    chmodSync(join(context, input.arch, 'outreach-api'), 0o755);
    const image = `localhost/outreach-api:${version}-${input.arch}`;
    buildah(storage, [
      ...build,
      '--format',
      'docker',
      '--build-arg',
      `BASE=${base}`,
      '--build-arg',
      'EXECUTABLE=release',
      '-f',
      join(ROOT, 'Dockerfile'),
      '-t',
      image,
      context,
    ]);
    images[input.arch] = image;
    log(`built ${image} on ${base}`);
  }
  const list = `localhost/outreach-api:${version}`;
  try {
    buildah(storage, ['manifest', 'rm', list]);
  } catch {
    // No list of that name yet.
  }
  buildah(storage, ['manifest', 'create', list]);
  for (const image of Object.values(images)) buildah(storage, ['manifest', 'add', list, `containers-storage:${image}`]);
  const layout = join(work, 'layout');
  buildah(storage, ['manifest', 'push', '--all', '--format', 'oci', list, `oci:${layout}:outreach-api:${version}`]);
  const compressedBytes = finishLayout(layout, storage, images);
  writeArchive(layout, options.archive);
  return { list, images, compressedBytes };
}

/** The shared libraries `files` need, to the end: name → path on this machine; and the interpreter. */
function libraryClosure(files: string[], dirs: string[]): { libraries: Map<string, string>; interpreter: string } {
  const libraries = new Map<string, string>();
  let interpreter = '';
  const find = (name: string): string => {
    for (const dir of dirs) if (existsSync(join(dir, name))) return realpathSync(join(dir, name));
    throw new Error(`${name} is not in ${dirs.join(', ')}`);
  };
  const queue = [...files];
  while (queue.length) {
    const file = queue.shift()!;
    const headers = execFileSync('readelf', ['--dynamic', '--program-headers', '--wide', file], { encoding: 'utf8' });
    interpreter ||= /\[Requesting program interpreter: ([^\]]+)\]/.exec(headers)?.[1] ?? '';
    for (const [, name] of headers.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)) {
      if (libraries.has(name!)) continue;
      const path = find(name!);
      libraries.set(name!, path);
      queue.push(path);
    }
  }
  if (!interpreter) throw new Error(`${files[0]} names no program interpreter`);
  return { libraries, interpreter };
}

/** Writes `dir/rootfs`, `dir/home` and `dir/Containerfile`: the base of `input.arch` (see the header). */
function writeBaseRootfs(input: ImageInput, dir: string): void {
  const arch = ARCHES[input.arch];
  const dirs = arch.dirs();
  const rootfs = join(dir, 'rootfs');
  rmSync(dir, { recursive: true, force: true });
  const { libraries, interpreter } = libraryClosure([input.executable, input.addon], dirs);
  const libDir = join(rootfs, 'lib', arch.triplet);
  for (const sub of ['etc/ssl/certs', 'tmp', 'usr/local/bin', 'var/lib', `lib/${arch.triplet}`])
    mkdirSync(join(rootfs, sub), { recursive: true });
  mkdirSync(join(dir, 'home'));
  chmodSync(join(rootfs, 'tmp'), 0o1777);
  for (const [name, path] of libraries) {
    if (`/${name}` === interpreter || basename(interpreter) === name) continue;
    copyFileSync(path, join(libDir, name));
  }
  mkdirSync(join(rootfs, dirname(interpreter)), { recursive: true });
  const loader = dirs.map((d) => join(d, basename(interpreter))).find((file) => existsSync(file));
  if (!loader) throw new Error(`${basename(interpreter)} is not in ${dirs.join(', ')}`);
  copyFileSync(realpathSync(loader), join(rootfs, interpreter));
  writeFileSync(
    join(rootfs, 'etc/passwd'),
    [
      'root:x:0:0:root:/root:/sbin/nologin',
      'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin',
      'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin',
      '',
    ].join('\n'),
  );
  writeFileSync(join(rootfs, 'etc/group'), ['root:x:0:', 'nobody:x:65534:', 'nonroot:x:65532:', ''].join('\n'));
  writeFileSync(join(rootfs, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
  copyFileSync('/etc/ssl/certs/ca-certificates.crt', join(rootfs, 'etc/ssl/certs/ca-certificates.crt'));
  writeFileSync(
    join(dir, 'Containerfile'),
    ['FROM scratch', 'COPY rootfs/ /', 'COPY --chown=65532:65532 home/ /home/nonroot/', ''].join('\n'),
  );
  log(`base ${input.arch}: ${[...libraries.keys()].join(', ')} (loader ${interpreter})`);
}

/**
 * Debian's `packages` for `arch`, unpacked once under dist/.cache (their root directory). apt-get
 * runs on a state of its own (this machine's sources, another arch's lists), so nothing of the
 * machine's apt or dpkg changes. Throws with apt-get's output when the archive cannot be reached.
 */
function debianPackages(arch: string, packages: string[]): string {
  const root = join(CACHE, `debian-${arch}-${packages.join('-')}`);
  if (existsSync(join(root, '.complete'))) return root;
  const state = join(CACHE, `apt-${arch}`);
  for (const sub of ['lists/partial', 'archives/partial', 'debs']) mkdirSync(join(state, sub), { recursive: true });
  writeFileSync(join(state, 'status'), '');
  const options = [
    '-o',
    `APT::Architecture=${arch}`,
    '-o',
    `APT::Architectures=${arch}`,
    '-o',
    `Dir::State::Lists=${join(state, 'lists')}`,
    '-o',
    `Dir::State::status=${join(state, 'status')}`,
    '-o',
    `Dir::Cache=${state}`,
    '-o',
    'Debug::NoLocking=1',
    '-o',
    'APT::Sandbox::User=root',
  ];
  log(`fetching Debian's ${packages.join(', ')} for ${arch} with apt-get`);
  const apt = (args: string[], cwd?: string) =>
    execFileSync('apt-get', [...options, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  apt(['update', '-qq']);
  apt(['download', '-qq', ...packages], join(state, 'debs'));
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const debs = readdirSync(join(state, 'debs')).filter((file) => file.endsWith('.deb'));
  for (const deb of debs) execFileSync('dpkg-deb', ['-x', join(state, 'debs', deb), root]);
  writeFileSync(join(root, '.complete'), `${debs.sort().join('\n')}\n`);
  log(`unpacked ${debs.join(', ')}`);
  return root;
}

function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { architecture: string; os: string };
  annotations?: Record<string, string>;
}

/**
 * Puts each image's HEALTHCHECK (from buildah's docker-format config) into its OCI config in the
 * layout `dir`, rewriting the config, manifest and index blobs whose digests change, and names the
 * index for Docker too. Returns the compressed layer bytes per arch.
 */
function finishLayout(
  dir: string,
  storage: string[],
  images: Partial<Record<ImageArch, string>>,
): Partial<Record<ImageArch, number>> {
  const blob = (digest: string) => join(dir, 'blobs', 'sha256', digest.replace(/^sha256:/, ''));
  const readJson = <T>(digest: string): T => JSON.parse(readFileSync(blob(digest), 'utf8')) as T;
  const writeJson = (value: unknown, old: Descriptor): Descriptor => {
    const text = JSON.stringify(value);
    const digest = `sha256:${sha256(text)}`;
    writeFileSync(blob(digest), text);
    if (digest !== old.digest) rmSync(blob(old.digest), { force: true });
    return { ...old, digest, size: Buffer.byteLength(text) };
  };
  const top = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
  const compressed: Partial<Record<ImageArch, number>> = {};
  top.manifests = top.manifests.map((indexDescriptor) => {
    const index = readJson<{ manifests: Descriptor[] }>(indexDescriptor.digest);
    index.manifests = index.manifests.map((manifestDescriptor) => {
      const arch = manifestDescriptor.platform?.architecture as ImageArch;
      const manifest = readJson<{ config: Descriptor; layers: Descriptor[] }>(manifestDescriptor.digest);
      compressed[arch] = manifest.layers.reduce((sum, layer) => sum + layer.size, 0);
      const inspected = JSON.parse(buildah(storage, ['inspect', '--type', 'image', images[arch]!])) as {
        Docker: { config: { Healthcheck?: unknown } };
      };
      const healthcheck = inspected.Docker.config.Healthcheck;
      if (!healthcheck) throw new Error(`${images[arch]} has no HEALTHCHECK`);
      const config = readJson<{ config: Record<string, unknown> }>(manifest.config.digest);
      config.config.Healthcheck = healthcheck;
      manifest.config = writeJson(config, manifest.config);
      return writeJson(manifest, manifestDescriptor);
    });
    const named = writeJson(index, indexDescriptor);
    // podman names the loaded image by ref.name (localhost/outreach-api:<version>); Docker and
    // containerd by this one.
    const tag = named.annotations?.['org.opencontainers.image.ref.name'];
    return tag
      ? { ...named, annotations: { ...named.annotations, 'io.containerd.image.name': `docker.io/library/${tag}` } }
      : named;
  });
  writeFileSync(join(dir, 'index.json'), JSON.stringify(top));
  return compressed;
}

/** Tars the layout `dir` into `archive` with fixed names order, owners and times. */
function writeArchive(dir: string, archive: string): void {
  mkdirSync(dirname(archive), { recursive: true });
  rmSync(archive, { force: true });
  execFileSync('tar', [
    '--create',
    '--file',
    archive,
    '--directory',
    dir,
    '--sort=name',
    '--mtime=@0',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--mode=u+rw,go+r,go-w',
    '--format=ustar',
    'oci-layout',
    'index.json',
    'blobs',
  ]);
}
