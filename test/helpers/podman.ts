/**
 * podman for the image tests (test/image/image.ts), on a containers storage of the test's own
 * (`storageArgs` of build/image.ts, driver vfs), so nothing of the machine's images or containers is
 * touched and two checkouts can run at once.
 *
 * What podman needs on this machine (and the CI machine, the same image): the runc runtime (crun
 * fails on its mixed cgroups), the cgroupfs manager (no systemd), and ulimits within the machine's
 * hard limits (nofile is 20000 here; podman's default of 1048576 makes runc fail to start the
 * container). `PODMAN_FLAGS` and `ULIMITS` say so on every command line; `podmanService` writes
 * the same into a containers.conf for `podman system service`, whose containers are made by API
 * calls that carry no such options (Testcontainers).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { sleep } from './ports.js';

/** The engine options every podman command of the tests gets. */
export const PODMAN_FLAGS = ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs'];

/** Soft and hard limits a container gets, within this machine's hard limits. */
export const ULIMITS = { nofile: '20000:20000', nproc: '32768:32768' };

/** `podman run` options for the ULIMITS. */
export const ULIMIT_ARGS = Object.entries(ULIMITS).flatMap(([name, value]) => ['--ulimit', `${name}=${value}`]);

export interface Podman {
  /** Runs `podman ARGS…` to its end. */
  (args: string[]): { code: number | null; stdout: string; stderr: string };
  /** Runs `podman ARGS…` and returns its stdout; throws with its output when it exits non-zero. */
  ok(args: string[]): string;
}

/** podman on the storage `storage` (build/image.ts `storageArgs`). */
export function podmanOn(storage: string[]): Podman {
  const run = (args: string[]) => {
    const result = spawnSync('podman', [...storage, ...PODMAN_FLAGS, ...args], {
      encoding: 'utf8',
      maxBuffer: 64 * 2 ** 20,
    });
    return { code: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  };
  return Object.assign(run, {
    ok(args: string[]) {
      const result = run(args);
      if (result.code !== 0)
        throw new Error(`podman ${args.join(' ')} exited ${result.code}:\n${result.stdout}${result.stderr}`);
      return result.stdout;
    },
  });
}

/**
 * Whether the kernel runs arm64 executables through qemu (binfmt_misc's `qemu-aarch64` entry,
 * enabled, with the F flag so the interpreter works inside a container's root).
 */
export function arm64Emulated(): boolean {
  const entry = '/proc/sys/fs/binfmt_misc/qemu-aarch64';
  if (!existsSync(entry)) return false;
  const text = readFileSync(entry, 'utf8');
  return text.startsWith('enabled') && /^flags: .*F/m.test(text);
}

/** Resolves with the ms until `url` answers 200, polling every 50 ms; rejects after `timeoutMs`. */
export async function until200(url: string, timeoutMs: number, started = performance.now()): Promise<number> {
  let last = '';
  while (performance.now() - started < timeoutMs) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - started;
      last = `status ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(50);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (last: ${last})`);
}

export interface PodmanService {
  /** `unix://…`, for DOCKER_HOST. */
  dockerHost: string;
  stop(): Promise<void>;
}

/**
 * Starts `podman system service` on `storage` (Docker's API on a unix socket in `dir`) with a
 * containers.conf carrying PODMAN_FLAGS and ULIMITS; resolves once it answers `/_ping`.
 * @throws when it does not answer within 20 s (with its output).
 */
export async function podmanService(storage: string[], dir: string): Promise<PodmanService> {
  const conf = join(dir, 'containers.conf');
  const limits = Object.entries(ULIMITS).map(([name, value]) => `"${name}=${value}"`);
  writeFileSync(
    conf,
    `[containers]\ndefault_ulimits = [${limits.join(', ')}]\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n`,
  );
  const socket = join(dir, 'podman.sock');
  let output = '';
  const child: ChildProcess = spawn('podman', [...storage, 'system', 'service', '--time=0', `unix://${socket}`], {
    env: { ...process.env, CONTAINERS_CONF: conf },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
  };
  const started = performance.now();
  for (;;) {
    const ping = await new Promise<boolean>((done) => {
      const req = request({ socketPath: socket, path: '/_ping', timeout: 1000 }, (res) => {
        res.resume();
        done(res.statusCode === 200);
      });
      req.on('error', () => done(false));
      req.on('timeout', () => req.destroy());
      req.end();
    });
    if (ping) return { dockerHost: `unix://${socket}`, stop };
    if (performance.now() - started > 20_000 || child.exitCode !== null) {
      await stop();
      throw new Error(`podman system service did not answer on ${socket}:\n${output}`);
    }
    await sleep(100);
  }
}
