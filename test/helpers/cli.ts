/**
 * The `outreach-api` command line run two ways: in this process (`runCli` with captured stdout
 * and stderr and its own environment: no process start-up, for what a command prints and the exit
 * code it answers) and as a real process (for what only a process shows: signals, a server that
 * keeps running, another process writing meanwhile).
 *
 * The real process runs the bundle the executable is made from (build/bundle.ts) under plain
 * `node`, built once per test process: it starts in about 0.35 s against 1.5 s for
 * `bin/outreach-api.js`, which loads the sources through tsx on every start. The `npm start` and
 * Deno cases of test/cli/shutdown.test.ts still start from the sources.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { ROOT, bundleCli } from '../../build/bundle.js';
import { runCli } from '../../src/cli/index.js';

let bundled: Promise<string> | undefined;

/**
 * The path of this test process's bundle of the CLI (dist/test/cli-PID.cjs, inside the checkout so
 * it finds better-sqlite3's addon), built on first use and deleted when the process exits. Run it
 * as `node PATH ARGS`.
 */
export function cliBundle(): Promise<string> {
  bundled ??= (async () => {
    const dir = join(ROOT, 'dist/test');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `cli-${process.pid}.cjs`);
    process.once('exit', () => rmSync(file, { force: true }));
    await bundleCli(file, false);
    return file;
  })();
  return bundled;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A stream that keeps what is written to it. */
class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/**
 * Runs `outreach-api ARGS` in this process. `env` is the whole environment the CLI reads (none
 * of this process's), so a test states every variable it relies on; `stdin` is what standard
 * input holds (not a terminal; empty by default).
 */
export async function cli(args: string[], env: Record<string, string> = {}, stdin = ''): Promise<CliResult> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runCli(args, { stdout, stderr, env, stdin: Readable.from([Buffer.from(stdin)]) });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Runs `outreach-api ARGS` as a real process with `env` added to this process's environment. */
export async function cliProcess(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const bin = await cliBundle();
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

export interface ServeProcess {
  /** http://127.0.0.1:PORT, read from the "listening on" line. */
  origin: string;
  /** What the process printed on stdout so far. */
  stdout(): string;
  /** Sends SIGTERM and waits for the process to end. */
  close(): Promise<void>;
  /** Sends `signal` (SIGKILL: the `kill -9` of a crash) without waiting. */
  kill(signal: NodeJS.Signals): void;
  /** Settles when the process has ended (and its output is read). */
  exited: Promise<void>;
}

/**
 * Starts `outreach-api ARGS` (a `serve` command line) as a real process and resolves once it
 * prints that it listens (rejects if it exits first). Close it in a `finally`.
 */
export async function serveProcess(args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [await cliBundle(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const close = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return closed;
  };
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}${err}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match)
        resolve({ origin: match[1]!, stdout: () => out, close, kill: (signal) => child.kill(signal), exited: closed });
    });
  });
}
