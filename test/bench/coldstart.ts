/**
 * Cold start of `serve` on the existing (large) bench database: from spawning the process to the
 * first 200 on GET /me with a valid token. The single executable (dist/outreach-api) is compared
 * with `node` running the same bundle (dist/outreach-api.cjs); runs alternate, after one
 * unmeasured run of each (so "cold" means a new process, not a cold page cache).
 *
 * The executable is rebuilt with `npm run build` when it is missing or older than the sources
 * (src/, sql/, build/, package-lock.json): it embeds the migrations, so a stale one could not
 * even open a database migrated by newer code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './generate.js';
import { startServer } from './processes.js';

export const EXE = join(ROOT, 'dist/outreach-api');
export const BUNDLE = join(ROOT, 'dist/outreach-api.cjs');

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Why the executable must be (re)built, or null when it is current. */
export function buildReason(): string | null {
  if (!existsSync(EXE) || !existsSync(BUNDLE)) return 'dist/outreach-api is missing';
  const sources = Math.max(...['src', 'sql', 'build', 'package-lock.json'].map((p) => newestMtime(join(ROOT, p))));
  return Math.min(statSync(EXE).mtimeMs, statSync(BUNDLE).mtimeMs) < sources
    ? 'dist/outreach-api is older than the sources'
    : null;
}

/** `npm run build`; returns its duration in seconds. @throws when the build fails. */
export function build(): number {
  const started = performance.now();
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}\n${result.stderr}`);
  return (performance.now() - started) / 1000;
}

export interface ColdStart {
  runs: number;
  executable: { medianMs: number; minMs: number; maxMs: number; samples: number[] };
  nodeBundle: { medianMs: number; minMs: number; maxMs: number; samples: number[] };
  /** executable median / node bundle median. */
  ratio: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export async function coldStart(db: string, config: string, runs: number, logFile: string): Promise<ColdStart> {
  const variants: [keyof Omit<ColdStart, 'runs' | 'ratio'>, string[]][] = [
    ['executable', [EXE]],
    ['nodeBundle', [process.execPath, BUNDLE]],
  ];
  const samples = { executable: [] as number[], nodeBundle: [] as number[] };
  const once = async (command: string[]) => {
    const server = await startServer(command, { db, config, logFile, timeoutMs: 30_000 });
    await server.stop();
    return server.readyMs;
  };
  for (const [, command] of variants) await once(command);
  for (let i = 0; i < runs; i++) for (const [name, command] of variants) samples[name].push(await once(command));
  const summary = (xs: number[]) => ({
    medianMs: median(xs),
    minMs: Math.min(...xs),
    maxMs: Math.max(...xs),
    samples: xs.map((x) => Math.round(x * 10) / 10),
  });
  const executable = summary(samples.executable);
  const nodeBundle = summary(samples.nodeBundle);
  return { runs, executable, nodeBundle, ratio: executable.medianMs / nodeBundle.medianMs };
}
