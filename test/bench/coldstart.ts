/**
 * Cold start of `serve` on the existing (large) bench database: from spawning the process to the
 * first 200 on GET /me with a valid token. The single executable (dist/outreach-api) is compared
 * with `node` running the same bundle (dist/outreach-api.cjs) and with the floor: `node` starting
 * a bare `node:http` server that answers 200 at once, the least any Node server takes to answer
 * here. Runs alternate, after one unmeasured run of each (so "cold" means a new process, not a
 * cold page cache).
 *
 * Node 20 reads and parses the file `NODE_EXTRA_CA_CERTS` names while the process starts, before
 * any JavaScript runs, so where the environment sets it every Node process starts later (about
 * 40 ms on this project's machine, whose shells set it). Then the executable and the floor are also
 * measured with it unset, so the report separates what the environment adds from what ours does.
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

/** Spawn → first 200, ms, over the runs of one command. */
export interface StartTimes {
  medianMs: number;
  minMs: number;
  maxMs: number;
  samples: number[];
}

export interface ColdStart {
  runs: number;
  executable: StartTimes;
  nodeBundle: StartTimes;
  /** `node` with a bare `node:http` server answering 200 (FLOOR_SOURCE). */
  floor: StartTimes;
  /** executable median / node bundle median. */
  ratio: number;
  /** The value of `NODE_EXTRA_CA_CERTS` in the bench's environment, or null when unset. */
  extraCaCerts: string | null;
  /** When `extraCaCerts` is set: the executable and the floor started with it unset. */
  withoutExtraCaCerts: { executable: StartTimes; floor: StartTimes } | null;
}

/**
 * The floor's server, run as `node -e FLOOR_SOURCE serve … --port P …`: it takes the same
 * arguments as `serve` and answers every request 200 with a small JSON body.
 */
const FLOOR_SOURCE = `const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
require('node:http').createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end('{"ok":true}');
}).listen(port, '127.0.0.1');`;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const summary = (xs: number[]): StartTimes => ({
  medianMs: median(xs),
  minMs: Math.min(...xs),
  maxMs: Math.max(...xs),
  samples: xs.map((x) => Math.round(x * 10) / 10),
});

/**
 * `runs` alternating cold starts of each variant on `db` (after one unmeasured start each), see
 * the module comment. @throws when a start fails or takes over 30 s.
 */
export async function coldStart(db: string, config: string, runs: number, logFile: string): Promise<ColdStart> {
  const extraCaCerts = process.env.NODE_EXTRA_CA_CERTS || null;
  const unset = { NODE_EXTRA_CA_CERTS: '' };
  const variants: { name: string; command: string[]; env?: NodeJS.ProcessEnv }[] = [
    { name: 'executable', command: [EXE] },
    { name: 'nodeBundle', command: [process.execPath, BUNDLE] },
    { name: 'floor', command: [process.execPath, '-e', FLOOR_SOURCE] },
    ...(extraCaCerts
      ? [
          { name: 'executableUnset', command: [EXE], env: unset },
          { name: 'floorUnset', command: [process.execPath, '-e', FLOOR_SOURCE], env: unset },
        ]
      : []),
  ];
  const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  const once = async (variant: (typeof variants)[number]) => {
    const server = await startServer(variant.command, { db, config, logFile, timeoutMs: 30_000, env: variant.env });
    await server.stop();
    return server.readyMs;
  };
  for (const variant of variants) await once(variant);
  for (let i = 0; i < runs; i++) for (const variant of variants) samples.get(variant.name)!.push(await once(variant));
  const of = (name: string) => summary(samples.get(name)!);
  const executable = of('executable');
  const nodeBundle = of('nodeBundle');
  return {
    runs,
    executable,
    nodeBundle,
    floor: of('floor'),
    ratio: executable.medianMs / nodeBundle.medianMs,
    extraCaCerts,
    withoutExtraCaCerts: extraCaCerts ? { executable: of('executableUnset'), floor: of('floorUnset') } : null,
  };
}
