/**
 * Cold start of `serve` on an existing database: from spawning the process to the first answered
 * HTTP request (GET /api/public/v1/me without a token; a 401 is an answer). Compares the single
 * executable with `node` running the same bundle, alternating runs. Run after `npm run build`:
 *
 *   node --import tsx test/smoke/startup.ts [--runs 20] [--deno]
 *
 * The database is created and migrated by the executable before the first run. File contents are
 * in the page cache after the first run: "cold" means a new process, not a cold disk.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, sleep } from '../helpers/ports.js';

const exe = resolve('dist/outreach-api');
const bundle = resolve('dist/outreach-api.cjs');

/** Milliseconds from spawn to the first answer of `command … serve --port P --db db`. */
async function coldStart(command: string[], db: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command[0]!, [...command.slice(1), 'serve', '--port', String(port), '--db', db], { stdio: 'ignore', detached: true });
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`${command.join(' ')} exited before answering`);
      if (performance.now() - started > 30_000) throw new Error(`${command.join(' ')} did not answer within 30 s`);
      try {
        await fetch(`http://127.0.0.1:${port}/api/public/v1/me`);
        return performance.now() - started;
      } catch {
        await sleep(2);
      }
    }
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    while (!exited) await sleep(5);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(argv: string[]): Promise<void> {
  const runsAt = argv.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 20;
  const work = mkdtempSync(join(tmpdir(), 'outreach-startup-'));
  const db = join(work, 'bench.db');
  const made = spawnSync(exe, ['--db', db, 'migrate'], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`cannot prepare the database: ${made.stderr}`);
  const variants: [string, string[]][] = [
    ['executable', [exe]],
    ['node bundle', [process.execPath, bundle]],
  ];
  if (argv.includes('--deno')) variants.push(['deno source', ['deno', 'run', '--allow-all', 'src/main.ts']]);
  const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (const [, command] of variants) await coldStart(command, db); // warm the page cache
  for (let i = 0; i < runs; i++) for (const [name, command] of variants) times.get(name)!.push(await coldStart(command, db));
  rmSync(work, { recursive: true, force: true });
  process.stdout.write(`executable ${(statSync(exe).size / 2 ** 20).toFixed(1)} MiB, bundle ${(statSync(bundle).size / 2 ** 20).toFixed(2)} MiB; ${runs} runs each\n`);
  for (const [name, xs] of times) {
    process.stdout.write(`${name.padEnd(12)} median ${median(xs).toFixed(0)} ms  min ${Math.min(...xs).toFixed(0)} ms  max ${Math.max(...xs).toFixed(0)} ms\n`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`startup: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
