/**
 * `npm run test:image`: the container image, built as `npm run release` builds it (build/image.ts:
 * the Dockerfile with buildah, on the base made here, both arches in one OCI archive), loaded from
 * that archive into podman as a user would, and run:
 * - as the non-root user 65532, answering `/readyz` (the time from `podman run` is printed), and
 *   its HEALTHCHECK command, read from the archive's image config, passes in the running container
 *   and fails in one with no server;
 * - the demo with `--fixture` (the demo token, the admin API behind its token);
 * - a database on a named volume that the user owns, kept across a `podman stop` (SIGTERM: the
 *   server drains and exits 0) and a new container on the same volume;
 * - a read-only root with a tmpfs on /tmp (exec: the SQLite driver is loaded from there);
 * - the arm64 image under qemu (binfmt_misc), where the kernel has it registered;
 * - Testcontainers for Node through `podman system service` (Docker's API), `Wait.forHttp` on
 *   `/readyz`, Ryuk off (its image is on Docker Hub, out of reach here): docs/ci.md's recipe.
 *
 * It uses dist/outreach-api and dist/linux-arm64/outreach-api, building either when it is missing
 * (`npm test` builds both just before). Ports are published on 127.0.0.1 only (Testcontainers'
 * on every address: it has no option for that). Skipped in one line without buildah, podman or
 * runc; under `CI` that is a failure, and so is an arm64 image it cannot run.
 *
 *   node --import tsx --test test/image/image.ts
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ARM64_EXECUTABLE, arm64AddonPath, buildArm64Executable } from '../../build/arm64.js';
import { HOST_EXECUTABLE, buildHostExecutable } from '../../build/build.js';
import { ADDON, ROOT } from '../../build/bundle.js';
import { type ImageInput, buildImages, storageArgs } from '../../build/image.js';
import { freePort } from '../helpers/ports.js';
import { ULIMIT_ARGS, arm64Emulated, podmanOn, podmanService, until200 } from '../helpers/podman.js';
import { serviceSkip } from '../helpers/services.js';

const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
/** The name the archive gives its image (build/image.ts): Docker and podman both load it so. */
const IMAGE = `outreach-api:${version}`;
const DEMO_TOKEN = 'oapi_demo_all_scopes_0000000000000000000000000000';
const ADMIN_TOKEN = 'image-test-admin-token-0123456789';
const NONROOT = 65532;

const skip =
  (await serviceSkip('buildah')) || (await serviceSkip('podman')) || (await serviceSkip('runc')) || undefined;

/** Whether the arm64 image is built and run: the cross compiler (to build it) and qemu (to run it). */
async function arm64Skip(): Promise<string | false> {
  const missing =
    (await serviceSkip('aarch64-linux-gnu-g++')) ||
    (await serviceSkip('qemu-aarch64-static')) ||
    (arm64Emulated() ? false : 'no qemu-aarch64 entry with the F flag in /proc/sys/fs/binfmt_misc (.ci/run adds it)');
  if (missing && process.env.CI) throw new Error(`the arm64 image: ${missing}; CI is set, so this is a failure`);
  return missing;
}

describe('the container image', { skip }, () => {
  let work = '';
  let archive = '';
  const podman = () => podmanOn(storageArgs(join(work, 'run')));
  let arm64: string | false = false;
  let compressed: Partial<Record<string, number>> = {};
  const containers: string[] = [];

  /** `podman run -d` of the loaded image with ULIMITS and `args`; returns the container's name. */
  const start = (name: string, args: string[], command: string[] = []): string => {
    containers.push(name);
    podman().ok(['run', '-d', '--name', name, ...ULIMIT_ARGS, ...args, IMAGE, ...command]);
    return name;
  };

  /** Resolves with the ms until `container` answers `/readyz` on `port`; else fails with its logs. */
  const ready = async (
    container: string,
    port: number,
    timeoutMs = 30_000,
    started = performance.now(),
    on = podman(),
  ) => {
    try {
      return await until200(`http://127.0.0.1:${port}/readyz`, timeoutMs, started);
    } catch (error) {
      const logs = on(['logs', container]);
      throw new Error(`${(error as Error).message}\n${container}'s output:\n${logs.stdout}${logs.stderr}`);
    }
  };

  /** The OCI config of `arch`'s image in the archive. */
  const configOf = (arch: string): { config: { Healthcheck?: { Test: string[] }; User?: string } } => {
    const member = (digest: string) =>
      JSON.parse(
        execFileSync('tar', ['-xOf', archive, `blobs/sha256/${digest.slice('sha256:'.length)}`], { encoding: 'utf8' }),
      );
    const top = JSON.parse(execFileSync('tar', ['-xOf', archive, 'index.json'], { encoding: 'utf8' }));
    const index = member(top.manifests[0].digest);
    const entry = index.manifests.find((m: { platform: { architecture: string } }) => m.platform.architecture === arch);
    return member(member(entry.digest).config.digest);
  };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'outreach-image-'));
    archive = join(work, `outreach-api-${version}.oci.tar`);
    arm64 = await arm64Skip();
    if (!existsSync(HOST_EXECUTABLE)) await buildHostExecutable();
    const inputs: ImageInput[] = [{ arch: 'amd64', executable: HOST_EXECUTABLE, addon: ADDON }];
    if (!arm64) {
      if (!existsSync(ARM64_EXECUTABLE)) await buildArm64Executable();
      inputs.push({ arch: 'arm64', executable: ARM64_EXECUTABLE, addon: arm64AddonPath() });
    }
    const started = performance.now();
    const built = buildImages(inputs, {
      version,
      storage: storageArgs(join(work, 'build')),
      work: join(work, 'layout'),
      archive,
    });
    compressed = built.compressedBytes;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const sizes = Object.entries(built.compressedBytes).map(
      ([arch, bytes]) => `${arch} ${(bytes / 2 ** 20).toFixed(1)} MiB`,
    );
    process.stdout.write(
      `image: built in ${seconds} s; compressed ${sizes.join(', ')}; archive ${statSync(archive).size} bytes\n`,
    );
    // The images as a user gets them: from the archive, into a storage that has seen nothing else.
    rmSync(join(work, 'build'), { recursive: true, force: true });
    podman().ok(['load', '-i', archive]);
  });

  after(() => {
    if (!work) return;
    for (const name of containers) podman()(['rm', '-f', '-t', '0', name]);
    podman()(['volume', 'prune', '-f']);
    rmSync(work, { recursive: true, force: true });
  });

  test('amd64 and under 60 MB compressed, runs as a non-root user, answers /readyz; its HEALTHCHECK passes', async () => {
    assert.ok((compressed.amd64 ?? Infinity) <= 60e6, `amd64 layers: ${compressed.amd64} bytes compressed`);
    const config = configOf('amd64');
    assert.equal(config.config.User, `${NONROOT}:${NONROOT}`);
    const healthcheck = config.config.Healthcheck?.Test;
    assert.ok(
      healthcheck && healthcheck[0] === 'CMD',
      `HEALTHCHECK in the archive's config: ${JSON.stringify(healthcheck)}`,
    );
    const port = await freePort();
    const started = performance.now();
    const name = start('outreach-image-ready', ['-p', `127.0.0.1:${port}:8080`]);
    const readyMs = await ready(name, port, 30_000, started);
    process.stdout.write(`image: amd64 ready ${Math.round(readyMs)} ms after podman run\n`);
    const pid = podman().ok(['inspect', '-f', '{{.State.Pid}}', name]).trim();
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    assert.match(status, new RegExp(`^Uid:\\s+${NONROOT}\\s+${NONROOT}\\s+${NONROOT}\\s+${NONROOT}$`, 'm'));
    assert.match(status, new RegExp(`^Gid:\\s+${NONROOT}\\s+${NONROOT}\\s+${NONROOT}\\s+${NONROOT}$`, 'm'));
    // podman reads no HEALTHCHECK from an OCI config (Docker does): run its command as Docker would.
    const healthy = podman()(['exec', name, ...healthcheck.slice(1)]);
    assert.equal(healthy.code, 0, `${healthcheck.join(' ')}: ${healthy.stdout}${healthy.stderr}`);
    const noServer = podman()([
      'run',
      '--rm',
      ...ULIMIT_ARGS,
      '--entrypoint',
      healthcheck[1]!,
      IMAGE,
      ...healthcheck.slice(2),
    ]);
    assert.notEqual(noServer.code, 0, 'the HEALTHCHECK passed with no server running');
  });

  test('the demo with --fixture: the demo token, and the admin API behind its token', async () => {
    const port = await freePort();
    const name = start(
      'outreach-image-fixture',
      ['-p', `127.0.0.1:${port}:8080`, '-e', `OUTREACH_API_FIXTURE_ADMIN_TOKEN=${ADMIN_TOKEN}`],
      ['serve', '--demo', '--fixture', '--seed', '1', '--db', ':memory:'],
    );
    const origin = `http://127.0.0.1:${port}`;
    await ready(name, port);
    const me = await fetch(`${origin}/api/public/v1/me`, { headers: { authorization: `Bearer ${DEMO_TOKEN}` } });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { data: { owner: { id: string } } }).data.owner.id, 'acct_demo');
    const reset = (authorization?: string) =>
      fetch(`${origin}/__admin/reset`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      });
    // The request comes from podman's bridge, not loopback: only the admin token opens the admin API.
    assert.equal((await reset()).status, 403);
    assert.equal((await reset(`Bearer ${ADMIN_TOKEN}`)).status, 200);
    podman().ok(['rm', '-f', '-t', '0', name]);
  });

  test('keeps its database on a volume the user owns; podman stop drains and exits 0; a new container finds it', async () => {
    const volume = 'outreach-image-data';
    const mount = ['-v', `${volume}:/var/lib/outreach-api`];
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const first = start('outreach-image-first', ['-p', `127.0.0.1:${port}:8080`, ...mount]);
    await ready(first, port);
    const cli = (container: string, args: string[]) =>
      podman()
        .ok(['exec', container, 'outreach-api', ...args])
        .trim();
    const account = cli(first, ['accounts', 'create', '--email', 'image@example.test', '--name', 'Image']);
    const token = cli(first, ['tokens', 'create', '--account', account, '--name', 'image', '--scopes', 'all']);
    const me = () => fetch(`${origin}/api/public/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await me()).status, 200);

    podman().ok(['stop', '-t', '20', first]);
    assert.equal(podman().ok(['inspect', '-f', '{{.State.ExitCode}}', first]).trim(), '0');
    const logs = podman().ok(['logs', first]);
    assert.match(logs, /"signal":"SIGTERM".*"msg":"stopped"/);
    const mountpoint = podman().ok(['volume', 'inspect', '-f', '{{.Mountpoint}}', volume]).trim();
    for (const file of [mountpoint, join(mountpoint, 'outreach.db')]) assert.equal(statSync(file).uid, NONROOT, file);

    await ready(start('outreach-image-second', ['-p', `127.0.0.1:${port}:8080`, ...mount]), port);
    const again = await me();
    assert.equal(again.status, 200, 'the token made before the restart');
    assert.equal(((await again.json()) as { data: { owner: { id: string } } }).data.owner.id, account);
  });

  test('runs on a read-only root with an exec-able tmpfs on /tmp (the ready file, the SQLite driver)', async () => {
    const port = await freePort();
    const name = start('outreach-image-read-only', [
      '-p',
      `127.0.0.1:${port}:8080`,
      '--read-only',
      // Docker mounts no tmpfs by itself with --read-only; podman would.
      '--read-only-tmpfs=false',
      '--tmpfs',
      '/tmp:rw,exec,nosuid',
      '-v',
      'outreach-image-read-only:/var/lib/outreach-api',
    ]);
    await ready(name, port);
    podman().ok(['rm', '-f', '-t', '0', name]);
  });

  test('arm64 under qemu: answers /readyz, drains on SIGTERM', async (t) => {
    if (arm64) return t.skip(arm64);
    // A storage of its own: pulling arm64 from the archive takes the image's name from amd64's.
    const emulated = podmanOn(storageArgs(join(work, 'arm64')));
    const id = emulated
      .ok(['pull', '--arch', 'arm64', `oci-archive:${archive}`])
      .trim()
      .split('\n')
      .at(-1)!;
    assert.equal(emulated.ok(['image', 'inspect', '-f', '{{.Architecture}}', id]).trim(), 'arm64');
    const port = await freePort();
    const name = 'outreach-image-arm64';
    try {
      const started = performance.now();
      emulated.ok(['run', '-d', '--name', name, ...ULIMIT_ARGS, '-p', `127.0.0.1:${port}:8080`, id]);
      const readyMs = await ready(name, port, 120_000, started, emulated);
      process.stdout.write(`image: arm64 under qemu ready ${Math.round(readyMs)} ms after podman run\n`);
      emulated.ok(['stop', '-t', '30', name]);
      assert.equal(emulated.ok(['inspect', '-f', '{{.State.ExitCode}}', name]).trim(), '0');
    } finally {
      emulated(['rm', '-f', '-t', '0', name]);
    }
  });

  test('Testcontainers starts it through podman system service and waits on /readyz', async () => {
    const service = await podmanService(storageArgs(join(work, 'run')), work);
    // Testcontainers reads its settings from the environment when it first connects.
    Object.assign(process.env, {
      DOCKER_HOST: service.dockerHost,
      TESTCONTAINERS_RYUK_DISABLED: 'true',
      // This machine has a /.dockerenv, so Testcontainers would look for the ports on the bridge's gateway.
      TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1',
    });
    const { GenericContainer, Wait } = await import('testcontainers');
    try {
      // docs/ci.md "Testcontainers", as written there.
      const started = performance.now();
      const container = await new GenericContainer(IMAGE)
        .withCommand(['serve', '--demo', '--fixture', '--db', ':memory:'])
        .withEnvironment({ OUTREACH_API_FIXTURE_ADMIN_TOKEN: ADMIN_TOKEN })
        .withExposedPorts(8080)
        .withWaitStrategy(Wait.forHttp('/readyz', 8080).forStatusCode(200))
        .start();
      const startMs = performance.now() - started;
      try {
        const origin = `http://${container.getHost()}:${container.getMappedPort(8080)}`;
        const me = await fetch(`${origin}/api/public/v1/me`, { headers: { authorization: `Bearer ${DEMO_TOKEN}` } });
        assert.equal(me.status, 200);
        const reset = await fetch(`${origin}/__admin/reset`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        });
        assert.equal(reset.status, 200);
        process.stdout.write(`image: Testcontainers' start() resolved after ${Math.round(startMs)} ms\n`);
      } finally {
        await container.stop();
      }
    } finally {
      await service.stop();
    }
  });
});
