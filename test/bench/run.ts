/**
 * `npm run bench`: the whole benchmark, end to end (see test/bench/README.md).
 *
 * 1. The dataset (generate.ts): cached under .bench/cache, generated when missing.
 * 2. A working copy of it, so the write runs never touch the cache.
 * 3. Each endpoint once through the app in-process (endpoints.ts): its response body (for the
 *    static floor) and its SQL (for the direct floor).
 * 4. The server (`dist/outreach-api serve`, rate limit off; `--server source` for
 *    `node bin/outreach-api.js`, whose tsx loader adds ~60 MB of RSS) and the three floor servers
 *    (static, framework, direct), each a child process; per endpoint: a peak run and a run at half
 *    the peak rate against the server, a peak run against each floor.
 * 5. One more server with the limiter on, for its cost per request; the limiter
 *    micro-benchmark; cold starts of the executable, of `node` on its bundle and of the floor
 *    (coldstart.ts); the settings area (settings.ts: the API access page, the scrypt cost, GET /me
 *    with sessions).
 * 6. A table on stdout, and .bench/results-<time>.json and .bench/results-latest.json.
 *
 * With `--store postgres` (decisions.md §16): the same dataset loaded into a PostgreSQL database
 * of the bench's own (postgres.ts: cached, a working copy per run), the server started with
 * `--db postgres://…`, the direct floor running the same captured SQL through `pg`, PostgreSQL's
 * backends' CPU counted with the target's; the store-independent parts (the limiter
 * micro-benchmark, the settings area) are left to the SQLite run. With `--nginx` (the default on
 * PostgreSQL; balanced.ts): peak runs through deploy/nginx.conf in front of 1 and, on PostgreSQL,
 * 2 instances.
 *
 * Options: --store sqlite|postgres (default sqlite), --nginx / --no-nginx, --scale F (dataset size factor, default 1), --seconds N (peak runs, default 6),
 * --paced-seconds N (default 5), --connections N (default 16), --only SUBSTRING (endpoints),
 * --server exe|bundle|source|deno (default exe; deno: `deno run src/main.ts`, served by Deno.serve), --coldstart-runs N (default 5),
 * --quiet-budget S (total wait for a quiet machine, default 180), --force-generate, --no-coldstart, --strict (exit 1 when a target is missed).
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { BUNDLE, EXE, build, buildReason, coldStart, type ColdStart, type StartTimes } from './coldstart.js';
import {
  AUTH_HEADERS,
  LIST_DIRECT_RATIO,
  LIST_KINDS,
  ME_FRAMEWORK_RATIO,
  P99_TARGET_MS,
  capture,
  directRoute,
  endpoints,
  fixtures,
  staticRoute,
  type Captured,
  type Endpoint,
} from './endpoints.js';
import type { FloorSpec } from './floors.js';
import { BENCH_DIR, FULL_SIZES, ROOT, ensureDataset, scaled, type Dataset } from './generate.js';
import { balancedRuns, type BalancedRun } from './balanced.js';
import { paced, peak, setHelperProcesses, waitForQuiet, type RunResult } from './load.js';
import { WORK_DATABASE, ensurePostgresDataset, processesMatching, type PostgresDataset } from './postgres.js';
import { memoryOf, startFloor, startServer } from './processes.js';
import { SCRYPT_RANGE_MS, SETTINGS_PAGE_P99_MS, type SettingsBench } from './settings.js';

/** test/bench/limiter.ts's figures of the Redis store (src/limiter/redis.ts). */
interface RedisLimiterFigures {
  usPerCheckSequential: number;
  usPerCheck16InFlight: number;
  bytesPerFullToken: number;
}

const WALL_LIMIT_S = 15 * 60;
const RSS_LIMIT = 150 * 2 ** 20;
/** Issue #33: spawn → first answer of the executable. */
const COLD_START_LIMIT_MS = 150;
const COLD_START_RATIO = 1.3;
const LIMITER_NS_LIMIT = 1000;
/** The limit of the one run with the limiter on: high enough that no request of the run is refused. */
const LIMITER_RUN_RPM = 1_000_000;
/** CPU (cores) used outside the target and the client above which a run is marked as disturbed. */
const BUSY_CORES = 0.35;

/** Connections of the PostgreSQL direct floor's pool: the server's `db.poolSize` default. */
const POSTGRES_POOL = 10;

interface Options {
  store: 'sqlite' | 'postgres';
  /** Peak runs through nginx in front of 1 (and on PostgreSQL 2) instances. */
  nginx: boolean;
  scale: number;
  seconds: number;
  pacedSeconds: number;
  connections: number;
  only?: string;
  server: 'source' | 'bundle' | 'exe' | 'deno';
  coldstartRuns: number;
  forceGenerate: boolean;
  coldstart: boolean;
  /** Total seconds the runs may wait for other processes to go quiet. */
  quietBudgetS: number;
  /** Exit 1 when a target is missed (default: report only). */
  strict: boolean;
}

function parseArgs(argv: string[]): Options {
  const value = (name: string) => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const server = value('--server') ?? 'exe';
  if (!['source', 'bundle', 'exe', 'deno'].includes(server))
    throw new Error('--server must be source, bundle, exe or deno');
  const store = value('--store') ?? 'sqlite';
  if (store !== 'sqlite' && store !== 'postgres') throw new Error('--store must be sqlite or postgres');
  return {
    store,
    nginx: argv.includes('--nginx') || (store === 'postgres' && !argv.includes('--no-nginx')),
    scale: Number(value('--scale') ?? 1),
    seconds: Number(value('--seconds') ?? 6),
    pacedSeconds: Number(value('--paced-seconds') ?? 5),
    connections: Number(value('--connections') ?? 16),
    only: value('--only'),
    server: server as Options['server'],
    coldstartRuns: Number(value('--coldstart-runs') ?? 5),
    forceGenerate: argv.includes('--force-generate'),
    coldstart: !argv.includes('--no-coldstart'),
    quietBudgetS: Number(value('--quiet-budget') ?? 180),
    strict: argv.includes('--strict'),
  };
}

const out = (line = '') => process.stdout.write(`${line}\n`);
const step = (line: string) => out(`bench: ${line}`);
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

interface EndpointResult {
  name: string;
  kind: Endpoint['kind'];
  method: string;
  url: string;
  bytes: number;
  total: number | null;
  server: RunResult;
  half: RunResult & { dueP99: number; rate: number };
  staticFloor: RunResult;
  frameworkFloor: RunResult;
  directFloor: RunResult | null;
  staticRatio: number;
  frameworkRatio: number;
  directRatio: number | null;
  sql: Captured['statements'];
  /** The server's memory right after this endpoint's runs (VmHWM so far, VmRSS). */
  serverMemoryAfter: { peakRss: number; rss: number } | null;
  targets: { name: string; met: boolean; value: number; limit: number }[];
}

async function main(): Promise<void> {
  const wallStart = performance.now();
  const loadAverageStart = loadAverage();
  const opts = parseArgs(process.argv.slice(2));
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const work = join(BENCH_DIR, 'work');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const serverLog = join(work, 'server.log');

  // 1. Dataset.
  const sizes = opts.scale === 1 ? FULL_SIZES : scaled(opts.scale);
  step(
    `dataset ${Object.entries(sizes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  const dataset: Dataset = await ensureDataset(sizes, { force: opts.forceGenerate, log: (l) => step(l) });
  if (!dataset.generated) step(`cached: ${dataset.key}`);

  // The executable (the server under test, and the cold start), built before any load.
  let buildSeconds: number | null = null;
  if (opts.coldstart || opts.server === 'exe' || opts.server === 'bundle') {
    const reason = buildReason();
    if (reason) {
      step(`${reason}: npm run build …`);
      buildSeconds = build();
      step(`built in ${buildSeconds.toFixed(1)} s`);
    }
  }

  // 2. Working copy and configuration (rate limit off).
  let db = join(work, 'bench.db');
  let postgres: PostgresDataset | null = null;
  /** PostgreSQL's backends of the working copy: their CPU is the target's too. */
  let backends: (() => number[]) | null = null;
  if (opts.store === 'postgres') {
    postgres = await ensurePostgresDataset(dataset, { force: opts.forceGenerate, log: (l) => step(l) });
    db = postgres.url;
    step(`working copy ${WORK_DATABASE} in ${postgres.copySeconds.toFixed(1)} s (${mib(postgres.bytes)})`);
    backends = () => processesMatching(` ${WORK_DATABASE} `);
    setHelperProcesses(backends);
  } else {
    const copyStart = performance.now();
    copyFileSync(dataset.path, db);
    step(`working copy in ${((performance.now() - copyStart) / 1000).toFixed(1)} s`);
  }
  const configPath = join(work, 'config.json');
  writeFileSync(configPath, JSON.stringify({ limits: { requestsPerMinute: 0 } }, null, 2));
  const config = loadConfig(configPath, {}, { db });

  // 3. Capture bodies and SQL in-process.
  const raw = new Database(postgres ? dataset.path : db, { readonly: true });
  const fx = fixtures(raw);
  raw.close();
  let list = endpoints(fx, stamp);
  if (opts.only) list = list.filter((e) => e.name.includes(opts.only!));
  const captured = await capture(db, config, list);
  for (const c of captured)
    step(
      `captured ${c.endpoint.name}: ${c.status}, ${c.bytes} B, ${c.statements.length} statement(s)${c.total !== null ? `, total ${c.total}` : ''}`,
    );

  const writeSpec = (name: string, spec: FloorSpec) => {
    const path = join(work, `${name}.json`);
    writeFileSync(path, JSON.stringify(spec));
    return path;
  };
  const staticFloor = await startFloor(
    writeSpec('static-floor', { mode: 'static', routes: captured.map(staticRoute) }),
    join(work, 'floors.log'),
  );
  const frameworkFloor = await startFloor(
    writeSpec('framework-floor', { mode: 'framework', routes: captured.map(staticRoute) }),
    join(work, 'floors.log'),
  );
  const directRoutes = captured.map(directRoute);
  const directFloor = await startFloor(
    writeSpec('direct-floor', {
      mode: 'direct',
      db,
      ...(postgres ? { poolSize: POSTGRES_POOL } : {}),
      routes: directRoutes.filter((r) => r !== null),
    }),
    join(work, 'floors.log'),
  );

  // 4. The server under test.
  const commands: Record<Options['server'], string[]> = {
    source: [process.execPath, join(ROOT, 'bin/outreach-api.js')],
    bundle: [process.execPath, BUNDLE],
    exe: [EXE],
    // The deno devDependency's binary itself (no wrapper process), so the pid measured is the server's.
    deno: [join(ROOT, 'node_modules/deno/deno'), 'run', '--allow-all', join(ROOT, 'src/main.ts')],
  };
  const command = commands[opts.server];
  const server = await startServer(command, { db, config: configPath, logFile: serverLog });
  step(`server (${opts.server}) answering after ${server.readyMs.toFixed(0)} ms; floors up`);

  // On a shared machine, each measurement first waits (within a total budget) for other
  // processes to go quiet; what could not be waited out is reported per run.
  let quietBudgetMs = opts.quietBudgetS * 1000;
  const quietWaits: { before: string; waitedMs: number; quiet: boolean; load: number | null }[] = [];
  const quiet = async (before: string) => {
    const q = await waitForQuiet(Math.min(quietBudgetMs, 30_000));
    quietBudgetMs = Math.max(0, quietBudgetMs - q.waitedMs);
    if (q.waitedMs > 500 || !q.quiet) {
      quietWaits.push({ before, ...q });
      step(
        `  waited ${(q.waitedMs / 1000).toFixed(1)} s for the machine to go quiet before ${before}${q.quiet ? '' : ` (still ${q.load?.toFixed(2)} cores busy)`}`,
      );
    }
  };
  const warm = async (origin: string, e: Endpoint, pid: number, label: string) => {
    await quiet(label);
    return peak(origin, e, { connections: opts.connections, seconds: 1, pid });
  };
  const results: EndpointResult[] = [];
  for (const c of captured) {
    const e = c.endpoint;
    await warm(server.origin, e, server.pid, `${e.name} (server)`);
    const s = await peak(server.origin, e, { connections: opts.connections, seconds: opts.seconds, pid: server.pid });
    const rate = Math.max(1, Math.round(s.rps / 2));
    await quiet(`${e.name} (server, half rate)`);
    const half = { ...(await paced(server.origin, e, { rate, seconds: opts.pacedSeconds, pid: server.pid })), rate };
    const memory = memoryOf(server.pid);
    await warm(staticFloor.origin, e, staticFloor.pid, `${e.name} (static floor)`);
    const sf = await peak(staticFloor.origin, e, {
      connections: opts.connections,
      seconds: opts.seconds,
      pid: staticFloor.pid,
    });
    await warm(frameworkFloor.origin, e, frameworkFloor.pid, `${e.name} (framework floor)`);
    const ff = await peak(frameworkFloor.origin, e, {
      connections: opts.connections,
      seconds: opts.seconds,
      pid: frameworkFloor.pid,
    });
    let df: RunResult | null = null;
    if (directRoutes[captured.indexOf(c)]) {
      await warm(directFloor.origin, e, directFloor.pid, `${e.name} (direct floor)`);
      df = await peak(directFloor.origin, e, {
        connections: opts.connections,
        seconds: opts.seconds,
        pid: directFloor.pid,
      });
    }
    const r: EndpointResult = {
      name: e.name,
      kind: e.kind,
      method: e.method,
      url: e.url,
      bytes: c.bytes,
      total: c.total,
      server: s,
      half,
      staticFloor: sf,
      frameworkFloor: ff,
      directFloor: df,
      staticRatio: s.rps / sf.rps,
      frameworkRatio: s.rps / ff.rps,
      directRatio: df ? s.rps / df.rps : null,
      sql: c.statements,
      serverMemoryAfter: memory,
      targets: [],
    };
    if (e.kind === 'me')
      r.targets.push({
        name: 'req/s vs framework floor',
        met: r.frameworkRatio >= ME_FRAMEWORK_RATIO,
        value: r.frameworkRatio,
        limit: ME_FRAMEWORK_RATIO,
      });
    if (LIST_KINDS.includes(e.kind) && r.directRatio !== null) {
      r.targets.push({
        name: 'req/s vs direct floor',
        met: r.directRatio >= LIST_DIRECT_RATIO,
        value: r.directRatio,
        limit: LIST_DIRECT_RATIO,
      });
    }
    const p99Limit = P99_TARGET_MS[e.kind];
    if (p99Limit !== undefined)
      r.targets.push({ name: 'p99 at half peak (ms)', met: half.p99 <= p99Limit, value: half.p99, limit: p99Limit });
    if (s.failures + half.failures > 0)
      r.targets.push({ name: 'non-2xx or errors', met: false, value: s.failures + half.failures, limit: 0 });
    results.push(r);
    step(
      `${e.name}: ${s.rps.toFixed(0)} req/s (cpu ${s.targetCpu?.toFixed(2)}), p99 ${s.p99.toFixed(2)} ms, p99@${rate}/s ${half.p99.toFixed(2)} ms; ` +
        `static ${sf.rps.toFixed(0)}, framework ${ff.rps.toFixed(0)}${df ? `, direct ${df.rps.toFixed(0)}` : ''}`,
    );
  }
  const serverMemory = memoryOf(server.pid);
  await staticFloor.stop();
  await frameworkFloor.stop();
  await directFloor.stop();

  // 4b. Through nginx, in front of 1 and (PostgreSQL) 2 instances: GET /me, a list, a search, a write.
  let balanced: BalancedRun[] | null = null;
  if (opts.nginx) {
    const kinds = new Set(['GET /me', 'backlinks limit=25', 'prospects search', 'PATCH draft']);
    balanced = await balancedRuns({
      command,
      db,
      config: configPath,
      logFile: serverLog,
      first: server,
      instances: postgres ? [1, 2] : [1],
      endpoints: captured.map((c) => c.endpoint).filter((e) => kinds.has(e.name)),
      connections: opts.connections,
      seconds: opts.seconds,
      helpers: backends,
      nginxLog: join(work, 'nginx-error.log'),
      quiet,
      log: step,
    });
  }

  // 5a. The limiter's cost in the server: GET /me on a second server whose limiter counts every
  // request, alternating short runs with the first (limiter off), so that both see the same
  // conditions; medians of 3 runs each.
  let limiterHttp: {
    rps: number;
    rpsOff: number;
    usPerRequest: number;
    headers: boolean;
    runs: { on: number[]; off: number[] };
  } | null = null;
  const me = captured.find((c) => c.endpoint.kind === 'me');
  if (me) {
    const limited = await startServer(command, {
      db,
      config: configPath,
      logFile: serverLog,
      env: { OUTREACH_API_LIMITS_REQUESTS_PER_MINUTE: String(LIMITER_RUN_RPM) },
    });
    const headers = await fetch(`${limited.origin}${me.endpoint.url}`, { headers: AUTH_HEADERS }).then(
      (res) => res.headers.has('x-ratelimit-remaining'),
      () => false,
    );
    await warm(limited.origin, me.endpoint, limited.pid, 'GET /me (limiter on)');
    const runs = { on: [] as number[], off: [] as number[] };
    for (let i = 0; i < 3; i++) {
      for (const [key, target] of [
        ['off', server],
        ['on', limited],
      ] as const) {
        await quiet(`GET /me (limiter ${key})`);
        runs[key].push(
          (await peak(target.origin, me.endpoint, { connections: opts.connections, seconds: 3, pid: target.pid })).rps,
        );
      }
    }
    const mid = (xs: number[]) => [...xs].sort((x, y) => x - y)[1]!;
    limiterHttp = {
      rps: mid(runs.on),
      rpsOff: mid(runs.off),
      usPerRequest: 1e6 / mid(runs.on) - 1e6 / mid(runs.off),
      headers,
      runs,
    };
    await limited.stop();
    step(
      `limiter on: GET /me ${limiterHttp.rps.toFixed(0)} req/s (off: ${limiterHttp.rpsOff.toFixed(0)}), ${limiterHttp.usPerRequest.toFixed(2)} µs per request`,
    );
  }
  await server.stop();
  const checkpoints = checkpointSummary(serverLog);

  // 5b. The limiter micro-benchmark, in its own process (store-independent: the SQLite run's).
  const limiter = postgres ? null : await limiterMicro(quiet);
  if (limiter) step(`limiter: worst ${limiter.worstNsPerCheck.toFixed(0)} ns per check`);

  // 5c. Cold start.
  let cold: ColdStart | null = null;
  if (opts.coldstart) {
    await quiet('the cold starts');
    cold = await coldStart(db, configPath, opts.coldstartRuns, serverLog);
    step(
      `cold start: executable ${cold.executable.medianMs.toFixed(0)} ms, node bundle ${cold.nodeBundle.medianMs.toFixed(0)} ms, floor ${cold.floor.medianMs.toFixed(0)} ms`,
    );
  }

  // 5d. The settings area (issue #23), on a small database and server of its own (settings.ts;
  // store-independent: the SQLite run's).
  const settings = postgres ? null : await settingsBench(opts, quiet, () => quietBudgetMs);

  // 6. Report.
  const wallSeconds = (performance.now() - wallStart) / 1000;
  const global: { name: string; met: boolean; value: string; limit: string }[] = [];
  if (serverMemory)
    global.push({
      name: 'peak RSS of the server during load',
      met: serverMemory.peakRss <= RSS_LIMIT,
      value: mib(serverMemory.peakRss),
      limit: mib(RSS_LIMIT),
    });
  if (cold) {
    global.push({
      name: 'cold start, executable (median)',
      met: cold.executable.medianMs <= COLD_START_LIMIT_MS,
      value: `${cold.executable.medianMs.toFixed(0)} ms`,
      limit: `${COLD_START_LIMIT_MS} ms`,
    });
    if (cold.withoutExtraCaCerts)
      global.push({
        name: 'cold start, executable (median), NODE_EXTRA_CA_CERTS unset',
        met: cold.withoutExtraCaCerts.executable.medianMs <= COLD_START_LIMIT_MS,
        value: `${cold.withoutExtraCaCerts.executable.medianMs.toFixed(0)} ms`,
        limit: `${COLD_START_LIMIT_MS} ms`,
      });
    global.push({
      name: 'cold start, executable / node bundle',
      met: cold.ratio <= COLD_START_RATIO,
      value: `${cold.ratio.toFixed(2)}x`,
      limit: `${COLD_START_RATIO}x`,
    });
  }
  if (limiter) {
    global.push({
      name: 'limiter cost per check (worst case)',
      met: limiter.worstNsPerCheck < LIMITER_NS_LIMIT,
      value: `${limiter.worstNsPerCheck.toFixed(0)} ns`,
      limit: `${LIMITER_NS_LIMIT} ns`,
    });
    const bounded = limiter.memory.every((m) => m.keysAfterWindow <= 1 && m.heldAfterWindow < 1024 * 1024);
    global.push({
      name: 'limiter memory bounded by tokens',
      met: bounded,
      value: `${limiter.memory.map((m) => `${m.tokens} tokens ${mib(m.bytesPerToken * m.tokens)}`).join(', ')}; freed after the window: ${bounded ? 'yes' : 'no'}`,
      limit: 'O(tokens), freed',
    });
  }
  if (settings) {
    global.push({
      name: 'settings: API access page (10 tokens), p99 at half peak',
      met: settings.page.half.p99 <= SETTINGS_PAGE_P99_MS,
      value: `${settings.page.half.p99.toFixed(2)} ms at ${settings.page.half.rate}/s (peak ${settings.page.peak.rps.toFixed(0)}/s)`,
      limit: `${SETTINGS_PAGE_P99_MS} ms`,
    });
    global.push({
      name: "settings: a sign-in's scrypt (median)",
      met: settings.scrypt.medianMs >= SCRYPT_RANGE_MS[0] && settings.scrypt.medianMs <= SCRYPT_RANGE_MS[1],
      value: `${settings.scrypt.medianMs.toFixed(0)} ms (a whole sign-in: ${settings.scrypt.signInMedianMs.toFixed(0)} ms)`,
      limit: `${SCRYPT_RANGE_MS[0]}–${SCRYPT_RANGE_MS[1]} ms`,
    });
    global.push({
      name: `settings: GET /me with ${settings.me.sessions} sessions against none`,
      met: settings.me.rpsWith >= 0.9 * settings.me.rpsWithout,
      value: `${(1e6 / settings.me.rpsWith).toFixed(1)} µs against ${(1e6 / settings.me.rpsWithout).toFixed(1)} µs a request`,
      limit: 'not slower (within 10 %)',
    });
  }
  global.push({
    name: 'npm run bench wall time',
    met: wallSeconds < WALL_LIMIT_S,
    value: `${(wallSeconds / 60).toFixed(1)} min`,
    limit: `${WALL_LIMIT_S / 60} min`,
  });

  const report = {
    startedAt: new Date(Date.now() - wallSeconds * 1000).toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memory: totalmem(), node: process.version },
    options: opts,
    store: opts.store,
    dataset: {
      key: dataset.key,
      sizes,
      bytes: dataset.bytes,
      generatedThisRun: dataset.generated ?? null,
      generatedEarlier: dataset.earlier ?? null,
    },
    postgres: postgres && { database: WORK_DATABASE, ...postgres, url: undefined },
    buildSeconds,
    serverCommand: command.map((p) => p.replace(`${ROOT}/`, '')),
    serverReadyMs: server.readyMs,
    serverMemory,
    checkpoints,
    loadAverage: { start: loadAverageStart, end: loadAverage() },
    endpoints: results,
    balanced,
    limiter: { micro: limiter, http: limiterHttp },
    coldStart: cold,
    settings,
    quietWaits,
    targets: global,
    wallSeconds,
  };
  writeFileSync(join(BENCH_DIR, `results-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
  // The latest of each store apart, so that a PostgreSQL run never stands for SQLite's latest.
  const latest = postgres ? 'results-postgres-latest.json' : 'results-latest.json';
  writeFileSync(join(BENCH_DIR, latest), `${JSON.stringify(report, null, 2)}\n`);
  printReport(report);
  out(`results: .bench/results-${stamp}.json (and .bench/${latest})`);
  if (opts.strict && (results.some((r) => r.targets.some((t) => !t.met)) || global.some((t) => !t.met)))
    process.exitCode = 1;
}

/** test/bench/limiter.ts's figures. */
interface LimiterMicro {
  worstNsPerCheck: number;
  cases: Record<string, { nsPerCheck: number }>;
  memory: { tokens: number; bytesPerToken: number; heldAfterWindow: number; keysAfterWindow: number }[];
  redis: RedisLimiterFigures | null;
}

/** The limiter micro-benchmark (limiter.ts), in its own process once the machine is quiet. */
async function limiterMicro(quiet: (before: string) => Promise<void>): Promise<LimiterMicro> {
  await quiet('the limiter micro-benchmark');
  const micro = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(ROOT, 'test/bench/limiter.ts')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (micro.status !== 0) throw new Error(`limiter benchmark failed: ${micro.stderr}`);
  return JSON.parse(micro.stdout) as LimiterMicro;
}

/** The settings area's benchmark (settings.ts), in its own process, within what is left of the quiet budget. */
async function settingsBench(
  opts: Options,
  quiet: (before: string) => Promise<void>,
  quietBudgetMs: () => number,
): Promise<SettingsBench> {
  await quiet('the settings area');
  const settingsRun = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'test/bench/settings.ts'),
      '--server',
      opts.server === 'exe' ? 'exe' : 'bundle',
      '--quiet-budget',
      String(Math.round(quietBudgetMs() / 1000)),
      '--json',
    ],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (settingsRun.status !== 0) throw new Error('the settings area benchmark failed (its messages are above)');
  return JSON.parse(settingsRun.stdout) as SettingsBench;
}

/** The machine's load average over 1, 5 and 15 minutes (other engineers share it). */
function loadAverage(): number[] {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
}

/** The server's summary of its background WAL checkpoints (its last such log line), or null. */
function checkpointSummary(logFile: string): { count: number; totalMs: number; maxMs: number } | null {
  const lines = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('wal checkpoints in the background'));
  if (lines.length === 0) return null;
  const last = JSON.parse(lines[lines.length - 1]!) as { count: number; totalMs: number; maxMs: number };
  return { count: last.count, totalMs: last.totalMs, maxMs: last.maxMs };
}

function table(header: string[], rows: string[][], right: boolean[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ');
  out(line(header));
  out(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const r of rows) out(line(r));
}

function printReport(report: {
  machine: { cpus: number; cpuModel?: string; node: string };
  dataset: {
    key: string;
    bytes: number;
    generatedThisRun: { seconds: number } | null;
    generatedEarlier: { seconds: number } | null;
  };
  serverCommand: string[];
  serverMemory: { peakRss: number; rss: number } | null;
  store: Options['store'];
  postgres: { database: string; loaded: { seconds: number } | null; copySeconds: number; bytes: number } | null;
  endpoints: EndpointResult[];
  balanced: BalancedRun[] | null;
  limiter: {
    micro: { cases: Record<string, { nsPerCheck: number }>; redis: RedisLimiterFigures | null } | null;
    http: { rps: number; rpsOff: number; usPerRequest: number; headers: boolean } | null;
  };
  coldStart: ColdStart | null;
  quietWaits: { waitedMs: number; quiet: boolean }[];
  targets: { name: string; met: boolean; value: string; limit: string }[];
  buildSeconds: number | null;
  wallSeconds: number;
  checkpoints: { count: number; totalMs: number; maxMs: number } | null;
  loadAverage: { start: number[]; end: number[] };
}): void {
  const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '-');
  /** Marks a figure from a run during which another process used more than a third of a core. */
  const busy = (r: RunResult) => ((r.otherCpu ?? 0) > BUSY_CORES ? '*' : '');
  const rps = (x: number) => x.toFixed(0);
  out();
  out(
    `outreach-api bench — ${report.machine.cpus} CPUs (${report.machine.cpuModel}), Node ${report.machine.node}; server: ${report.serverCommand.join(' ')}`,
  );
  const gen = report.dataset.generatedThisRun;
  out(
    `dataset ${report.dataset.key}: ${mib(report.dataset.bytes)}; ` +
      (gen
        ? `generated this run in ${gen.seconds.toFixed(1)} s`
        : `from cache${report.dataset.generatedEarlier ? ` (generated in ${report.dataset.generatedEarlier.seconds.toFixed(1)} s)` : ''}`),
  );
  const pg = report.postgres;
  if (pg)
    out(
      `store: PostgreSQL, database ${pg.database} (${mib(pg.bytes)}), ${pg.loaded ? `loaded this run in ${pg.loaded.seconds.toFixed(1)} s` : 'loaded earlier'}, ` +
        `copied in ${pg.copySeconds.toFixed(1)} s; the target's CPU below includes its PostgreSQL backends' (server+backends)`,
    );
  out();
  table(
    [
      'endpoint',
      'req/s',
      'p50 ms',
      'p99 ms',
      'p99@half ms',
      'static floor req/s',
      'ratio',
      'framework floor req/s',
      'ratio',
      'direct floor req/s',
      'ratio',
      'target met?',
    ],
    report.endpoints.map((r) => [
      r.name,
      rps(r.server.rps) + busy(r.server),
      ms(r.server.p50),
      ms(r.server.p99),
      `${ms(r.half.p99)}${busy(r.half)} @${r.half.rate}/s`,
      rps(r.staticFloor.rps) + busy(r.staticFloor),
      r.staticRatio.toFixed(2),
      rps(r.frameworkFloor.rps) + busy(r.frameworkFloor),
      r.frameworkRatio.toFixed(2),
      r.directFloor ? rps(r.directFloor.rps) + busy(r.directFloor) : '-',
      r.directRatio !== null ? r.directRatio.toFixed(2) : '-',
      r.targets.length === 0
        ? '(none set)'
        : r.targets.every((t) => t.met)
          ? 'yes'
          : `NO: ${r.targets
              .filter((t) => !t.met)
              .map((t) => `${t.name} ${t.value.toFixed(2)} vs ${t.limit}`)
              .join('; ')}`,
    ]),
    [false, true, true, true, true, true, true, true, true, true, true, false],
  );
  out();
  out(
    'per endpoint: response bytes, list total; CPU in cores during the peak runs: target / load client / rest of the machine',
  );
  const cpu = (r: RunResult | null) =>
    r
      ? `${r.targetCpu?.toFixed(2) ?? '-'}${r.helperCpu !== null ? `+${r.helperCpu.toFixed(2)}` : ''} / ${r.clientCpu.toFixed(2)} / ${r.otherCpu?.toFixed(2) ?? '-'}`
      : '-';
  table(
    [
      'endpoint',
      'bytes',
      'total',
      'server cpu',
      'static floor cpu',
      'framework floor cpu',
      'direct floor cpu',
      'paced client cpu',
      'requests',
      'failures',
      'server RSS after',
    ],
    report.endpoints.map((r) => [
      r.name,
      String(r.bytes),
      r.total === null ? '-' : String(r.total),
      cpu(r.server),
      cpu(r.staticFloor),
      cpu(r.frameworkFloor),
      cpu(r.directFloor),
      r.half.clientCpu.toFixed(2),
      String(r.server.requests),
      String(r.server.failures + r.half.failures),
      r.serverMemoryAfter ? mib(r.serverMemoryAfter.rss) : '-',
    ]),
    [false, true, true, true, true, true, true, true, true, true, true],
  );
  // CPU time per response: on a shared machine a process that gets less than its core answers
  // fewer requests, but each still costs about the same CPU, so these ratios hold where req/s do not.
  const usPerRequest = (r: RunResult | null) =>
    r && r.targetCpu !== null && r.rps > 0 ? ((r.targetCpu + (r.helperCpu ?? 0)) / r.rps) * 1e6 : null;
  const us = (x: number | null) => (x === null ? '-' : x.toFixed(1));
  const share = (floor: number | null, server: number | null) =>
    floor === null || server === null ? '-' : (floor / server).toFixed(2);
  out();
  out(
    'CPU per response in the peak runs, µs (target cores ÷ req/s), and floor ÷ server: the req/s ratio the server would reach with a core to itself',
  );
  table(
    ['endpoint', 'server µs', 'static µs', 'ratio', 'framework µs', 'ratio', 'direct µs', 'ratio'],
    report.endpoints.map((r) => {
      const [sv, st, fw, di] = [r.server, r.staticFloor, r.frameworkFloor, r.directFloor].map(usPerRequest);
      return [r.name, us(sv!), us(st!), share(st!, sv!), us(fw!), share(fw!, sv!), us(di!), share(di!, sv!)];
    }),
    [false, true, true, true, true, true, true, true],
  );
  const disturbed = report.endpoints
    .flatMap((r) => [r.server, r.half, r.staticFloor, r.frameworkFloor, r.directFloor])
    .concat((report.balanced ?? []).map((b) => b.run))
    .filter((x) => x && (x.otherCpu ?? 0) > BUSY_CORES);
  if (report.quietWaits.length) {
    const waited = report.quietWaits.reduce((n, w) => n + w.waitedMs, 0) / 1000;
    const notQuiet = report.quietWaits.filter((w) => !w.quiet).length;
    out(
      `waited ${waited.toFixed(0)} s in all for other processes to go quiet${notQuiet ? `; ${notQuiet} run(s) started while the machine was still busy` : ''}`,
    );
  }
  if (disturbed.length) {
    out(
      `WARNING: ${disturbed.length} run(s), marked *, saw more than ${BUSY_CORES} of a core used outside the target and the client: ` +
        'another process was busy, so those figures are pessimistic (rerun on a quiet machine)',
    );
  }
  out();
  out(
    `load average (1, 5, 15 min) at the start ${report.loadAverage.start.join(', ')}, at the end ${report.loadAverage.end.join(', ')}`,
  );
  if (report.checkpoints) {
    const c = report.checkpoints;
    out(
      `WAL checkpoints in the server's background thread: ${c.count}, ${c.totalMs} ms in all, the longest ${c.maxMs} ms (none inside a request)`,
    );
  }
  if (report.serverMemory)
    out(`server peak RSS (VmHWM) ${mib(report.serverMemory.peakRss)}, RSS at the end ${mib(report.serverMemory.rss)}`);
  if (report.coldStart) {
    const c = report.coldStart;
    const range = (t: StartTimes) =>
      `${t.medianMs.toFixed(0)} ms (min ${t.minMs.toFixed(0)}, max ${t.maxMs.toFixed(0)})`;
    out(
      `cold start to first 200 on GET /me (median of ${c.runs}): executable ${range(c.executable)}, ` +
        `node bundle ${range(c.nodeBundle)}, ratio ${c.ratio.toFixed(2)}; the floor (node, a bare node:http server) ` +
        `${range(c.floor)}: the executable's own part ${(c.executable.medianMs - c.floor.medianMs).toFixed(0)} ms`,
    );
    const unset = c.withoutExtraCaCerts;
    if (unset)
      out(
        `  NODE_EXTRA_CA_CERTS is set (${c.extraCaCerts}); with it unset: executable ${range(unset.executable)}, ` +
          `floor ${range(unset.floor)}: Node's reading of it adds ${(c.floor.medianMs - unset.floor.medianMs).toFixed(0)} ms to every start`,
      );
  }
  const micro = report.limiter.micro;
  if (micro) {
    out(
      `limiter per check: ${Object.entries(micro.cases)
        .map(([k, v]) => `${k} ${v.nsPerCheck.toFixed(0)} ns`)
        .join(', ')}`,
    );
    const redis = micro.redis;
    out(
      redis
        ? `limiter on Redis (limits.store: redis): ${redis.usPerCheckSequential.toFixed(1)} µs per check one after another, ` +
            `${redis.usPerCheck16InFlight.toFixed(1)} µs with 16 in flight; ${redis.bytesPerFullToken} bytes in Redis per token with a full window`
        : 'limiter on Redis: not measured (no Redis at OUTREACH_TEST_REDIS_URL)',
    );
  } else
    out('limiter micro-benchmark and settings area: not run on PostgreSQL (store-independent; see the SQLite run)');
  const http = report.limiter.http;
  if (http) {
    out(
      `limiter in the server: GET /me ${rps(http.rps)} req/s with it, ${rps(http.rpsOff)} without: ${http.usPerRequest.toFixed(2)} µs per request ` +
        `(check and five headers)${http.headers ? '' : ' — WARNING: no X-RateLimit headers seen'}`,
    );
  }
  if (report.balanced) {
    out();
    out(
      'through deploy/nginx.conf (limiter off, as every run above): peak runs; cpu: the instances, nginx and PostgreSQL backends together / load client / rest',
    );
    const counts = [...new Set(report.balanced.map((b) => b.instances))];
    const names = [...new Set(report.balanced.map((b) => b.endpoint))];
    const direct = (name: string) => report.endpoints.find((r) => r.name === name)?.server;
    table(
      ['endpoint', 'direct req/s', ...counts.flatMap((n) => [`${n} behind nginx req/s`, 'p99 ms', 'cpu'])],
      names.map((name) => [
        name,
        direct(name) ? rps(direct(name)!.rps) : '-',
        ...counts.flatMap((n) => {
          const b = report.balanced!.find((x) => x.endpoint === name && x.instances === n)?.run;
          if (!b) return ['-', '-', '-'];
          const all = (b.targetCpu ?? 0) + (b.helperCpu ?? 0);
          return [
            `${rps(b.rps)}${busy(b)}${b.failures ? ` (${b.failures} failed)` : ''}`,
            ms(b.p99),
            `${all.toFixed(2)} / ${b.clientCpu.toFixed(2)} / ${b.otherCpu?.toFixed(2) ?? '-'}`,
          ];
        }),
      ]),
      [false, true, ...counts.flatMap(() => [true, true, true])],
    );
  }
  if (report.buildSeconds !== null) out(`npm run build: ${report.buildSeconds.toFixed(1)} s`);
  out();
  table(
    ['target', 'value', 'limit', 'met?'],
    report.targets.map((t) => [t.name, t.value, t.limit, t.met ? 'yes' : 'NO']),
    [false, false, false, false],
  );
  out();
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
  // Exits now (stopping every child still running, see processes.ts) rather than waiting on them.
  process.exit(1);
});
