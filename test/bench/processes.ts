/**
 * Child processes of the bench: the server under test, the floor servers, and their memory.
 * Each child is spawned in its own process group and stopped by its own pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync, closeSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { API, AUTH_HEADERS } from './endpoints.js';
import { ROOT } from './generate.js';
import { freePort, sleep } from '../helpers/ports.js';

/** Every child still running, so that none outlives the bench if it stops on an error. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function track(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
}

export interface Child {
  process: ChildProcess;
  pid: number;
  origin: string;
  stop(): Promise<void>;
}

/** Status of GET `path` with the bench token, or null when nothing answers. */
export function probe(port: number, path = `${API}/me`): Promise<number | null> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, headers: AUTH_HEADERS, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? null));
    });
    req.on('error', () => resolve(null));
    req.end();
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
}

/**
 * Starts `command … serve --db <db> --port <free> --host 127.0.0.1 --config <config>` and waits
 * for the first 200 on GET /me (with the bench token).
 * @returns the child and the milliseconds from spawn to that answer.
 */
export async function startServer(
  command: string[],
  options: { db: string; config: string; logFile?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv },
): Promise<Child & { readyMs: number }> {
  const port = await freePort();
  const log = options.logFile ? openSync(options.logFile, 'a') : 'ignore';
  const started = performance.now();
  const child = spawn(
    command[0]!,
    [
      ...command.slice(1),
      'serve',
      '--db',
      options.db,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--config',
      options.config,
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', log, log],
      env: { ...process.env, ...options.env },
    },
  );
  if (typeof log === 'number') closeSync(log);
  track(child);
  const stop = stopper(child);
  const deadline = started + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `${command.join(' ')} serve exited with ${child.exitCode}${options.logFile ? ` (see ${options.logFile})` : ''}`,
      );
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`${command.join(' ')} serve did not answer within ${options.timeoutMs ?? 60_000} ms`);
    }
    const status = await probe(port);
    if (status === 200)
      return {
        process: child,
        pid: child.pid!,
        origin: `http://127.0.0.1:${port}`,
        stop,
        readyMs: performance.now() - started,
      };
    if (status !== null) {
      await stop();
      throw new Error(`${command.join(' ')} serve answered GET /me with ${status}`);
    }
    await sleep(2);
  }
}

/** Starts a floor server (floors.ts) on `specPath`; resolves once it listens. */
export async function startFloor(specPath: string, logFile: string): Promise<Child> {
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/bench/floors.ts'), specPath], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', log],
  });
  closeSync(log);
  track(child);
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code} (see ${logFile})`)));
  });
  return { process: child, pid: child.pid!, origin: `http://127.0.0.1:${port}`, stop: stopper(child) };
}

/**
 * Peak resident set (VmHWM), current resident set (VmRSS) and the latter by kind (RssAnon: private
 * memory; RssFile: mapped files; RssShmem: shared memory) of `pid`, bytes; null when
 * `/proc/PID/status` cannot be read (not Linux, or the process is gone).
 */
export function memoryOf(
  pid: number,
): { peakRss: number; rss: number; rssAnon: number; rssFile: number; rssShmem: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return {
      peakRss: kb('VmHWM'),
      rss: kb('VmRSS'),
      rssAnon: kb('RssAnon'),
      rssFile: kb('RssFile'),
      rssShmem: kb('RssShmem'),
    };
  } catch {
    return null;
  }
}
