/**
 * `npm run bench:pair -- --b OTHER_EXECUTABLE [--a EXECUTABLE] [--only SUBSTRING] …`: two builds of
 * the server, side by side, for a change too small for two whole benches to tell apart.
 *
 * On a machine whose speed drifts (a shared host: the same executable's CPU per response moved by
 * 15–20 % between whole benches, and by a factor of two within minutes, docs/performance.md), one
 * run per build compares two moments more than two builds. So both servers run at once, each on
 * its own copy of the bench's dataset (test/bench/generate.ts, the limiter off as in the bench),
 * and every endpoint gets short peak runs against one and then the other, the order swapped every
 * round: a slow minute falls on both. Per run it prints the server's CPU per response (µs, its
 * user + system time over the responses) and req/s; per endpoint the median of each build's runs
 * and their ratio (b ÷ a, below 1: b is cheaper).
 *
 * Options: --a PATH (default dist/outreach-api), --b PATH (required; e.g. a copy of an earlier
 * build's `dist/outreach-api`), --only SUBSTRING (endpoints, as `npm run bench`), --rounds N
 * (default 8), --seconds N (each run, default 2), --connections N (default 16), --env-a K=V and
 * --env-b K=V (repeatable: configuration for one side, e.g. OUTREACH_API_METRICS_ENABLED=true).
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EXE } from './coldstart.js';
import { endpoints, fixtures, type Endpoint } from './endpoints.js';
import { BENCH_DIR, FULL_SIZES, ensureDataset } from './generate.js';
import { peak } from './load.js';
import { startServer, type Child } from './processes.js';

/** One side of the pair: its executable, its server and its runs' figures per endpoint. */
interface Side {
  name: 'a' | 'b';
  executable: string;
  env: NodeJS.ProcessEnv;
  server?: Child & { readyMs: number };
  /** Per endpoint name: each run's CPU per response, µs, and req/s. */
  runs: Map<string, { us: number; rps: number }[]>;
}

/** `K=V` strings as an environment; throws on one without `=`. */
function envOf(pairs: string[] | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const pair of pairs ?? []) {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--env-a/--env-b take K=V, not ${pair}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      a: { type: 'string', default: EXE },
      b: { type: 'string' },
      only: { type: 'string' },
      rounds: { type: 'string', default: '8' },
      seconds: { type: 'string', default: '2' },
      connections: { type: 'string', default: '16' },
      'env-a': { type: 'string', multiple: true },
      'env-b': { type: 'string', multiple: true },
    },
  });
  if (!values.b)
    throw new Error('--b PATH is required: the executable to compare with --a (default dist/outreach-api)');
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const sides: Side[] = [
    { name: 'a', executable: resolve(values.a), env: envOf(values['env-a']), runs: new Map() },
    { name: 'b', executable: resolve(values.b), env: envOf(values['env-b']), runs: new Map() },
  ];

  const dataset = await ensureDataset(FULL_SIZES, { log: (line) => console.log(`pair: ${line}`) });
  const work = join(BENCH_DIR, 'pair');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const config = join(work, 'config.json');
  writeFileSync(config, JSON.stringify({ limits: { requestsPerMinute: 0 } }));
  const raw = new Database(dataset.path, { readonly: true });
  const fx = fixtures(raw);
  raw.close();
  let list: Endpoint[] = endpoints(fx, `pair-${Date.now()}`);
  if (values.only) list = list.filter((e) => e.name.includes(values.only!));
  if (list.length === 0) throw new Error(`no endpoint's name contains ${values.only}`);

  try {
    for (const side of sides) {
      const db = join(work, `${side.name}.db`);
      copyFileSync(dataset.path, db);
      side.server = await startServer([side.executable], {
        db,
        config,
        logFile: join(work, `${side.name}.log`),
        env: side.env,
      });
      console.log(`pair: ${side.name} = ${side.executable}, answering after ${side.server.readyMs.toFixed(0)} ms`);
    }
    for (const endpoint of list) {
      // A first short run each, not counted: caches, the search reader and V8's code warm up.
      for (const side of sides) await peak(side.server!.origin, endpoint, { connections, seconds: 1 });
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
          const run = await peak(side.server!.origin, endpoint, { connections, seconds, pid: side.server!.pid });
          if (run.targetCpu === null || run.requests === 0)
            throw new Error(`${side.name}: no CPU or no answer measured`);
          const us = (run.targetCpu * run.seconds * 1e6) / run.requests;
          const runs = side.runs.get(endpoint.name) ?? [];
          runs.push({ us, rps: run.rps });
          side.runs.set(endpoint.name, runs);
          console.log(
            `pair: ${endpoint.name} ${side.name}: ${us.toFixed(1)} µs, ${run.rps.toFixed(0)} req/s${run.failures ? `, ${run.failures} failed` : ''}`,
          );
        }
      }
    }
  } finally {
    for (const side of sides) await side.server?.stop();
  }

  console.log(`\nendpoint | a µs (median of ${rounds}) | b µs | b ÷ a | a req/s | b req/s`);
  for (const endpoint of list) {
    const [a, b] = sides.map((side) => side.runs.get(endpoint.name)!);
    const [aUs, bUs] = [median(a!.map((r) => r.us)), median(b!.map((r) => r.us))];
    console.log(
      `${endpoint.name} | ${aUs.toFixed(1)} | ${bUs.toFixed(1)} | ${(bUs / aUs).toFixed(2)} | ${median(a!.map((r) => r.rps)).toFixed(0)} | ${median(b!.map((r) => r.rps)).toFixed(0)}`,
    );
  }
  rmSync(work, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(`pair: ${(error as Error).message}`);
  process.exit(1);
});
