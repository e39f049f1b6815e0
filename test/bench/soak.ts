/**
 * `npm run bench:soak -- --minutes 30`: the server under a steady mixed load for a long while,
 * with the backlink monitor and the inbox sync running in it (issue #33 item 4), to show whether
 * anything grows or slows with time.
 *
 * Set-up (a temporary directory, removed at the end):
 * - a database of one account (the inbox bench's 2,000 threads with a contact and an outbound
 *   message each, `inbox.ts`), plus `--backlinks` backlinks (default 1,000) whose pages are on
 *   `--hosts` loopback addresses (default 100) served by the monitor bench's site (`monitor.ts
 *   --site`), and the bench token;
 * - a throwaway Dovecot (test/helpers/dovecot.ts) whose mailbox gets `--mail` messages a minute
 *   (default 200, the inbox bench's mix: replies, bounces, automatic replies, strangers);
 * - the server (`--server source|bundle|exe`, default `source`: `bin/outreach-api.js`) with
 *   metrics on, the limiter off, the monitor on (every backlink due again after 72 s, no per-host
 *   delay, loopback allowed) and the inbox sync on (a pass every 15 s).
 *
 * Load: first a peak run of 3 s of each request of the mix (`peak`, load.ts), then the mix at half
 * its peak rate (or `--rate` requests/s), open loop, evenly spaced, over keep-alive connections:
 * 30 % `GET /me`, 30 % a backlink page, 20 % a thread page, 20 % `POST …/replies`.
 *
 * Every minute it prints a row: the server's RSS, heap used, open file descriptors and event-loop
 * delay p99 (the server's own `/metrics`: prom-client's `process_resident_memory_bytes`,
 * `nodejs_heap_size_used_bytes`, `process_open_fds`, `nodejs_eventloop_lag_p99_seconds`, the last
 * over the minute since the previous scrape), the RSS by kind (`/proc/PID/status`: anonymous,
 * file-backed, shared) and V8's committed heap and external memory beside the heap used, the
 * request p99 of that minute (from sending to the whole response), the requests and failures,
 * and what the workers did. At the end: the
 * slopes over the last 20 minutes (least squares over the minute rows; all of them in a shorter
 * run), request p99 of the last 10 minutes against the first 10 (halves in a shorter run), the
 * load average, and an SVG chart of the five series (`--svg`, default `.bench/soak.svg`); the
 * figures also go to `.bench/soak-latest.json`. Exit 1 when a request failed or the workers did
 * nothing.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { importDocument } from '../../src/import/index.js';
import { BUNDLE, EXE, build, buildReason } from './coldstart.js';
import { API, AUTH_HEADERS, type Endpoint, WRITE_HEADERS } from './endpoints.js';
import { BENCH_DIR, BENCH_TOKEN, ROOT } from './generate.js';
import { dataset, message } from './inbox.js';
import { peak } from './load.js';
import { memoryOf, startServer } from './processes.js';
import { startDovecot } from '../helpers/dovecot.js';
import { TARGET } from '../monitor/helpers.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};

const USER = 'bench@trailgear.example';
const PASSWORD = 'bench-imap-password';
const PASSWORD_ENV = 'OUTREACH_BENCH_INBOX_PASSWORD';
const PROJECT = `${API}/projects/prj_bench`;
const SITE = `${PROJECT}/sites/site_bench`;
/** The inbox dataset's threads (`inbox.ts`). */
const THREADS = 2000;

/** One minute's row. */
export interface SoakRow {
  minute: number;
  rssMiB: number;
  /**
   * The RSS by kind (`/proc/PID/status`: RssAnon, RssFile, RssShmem): private memory (malloc,
   * V8's heap, SQLite's page caches), mapped files (Node's and the addon's code, SQLite's WAL
   * index) and shared memory (tmpfs, shared anonymous mappings). NaN where /proc cannot be read.
   */
  rssAnonMiB: number;
  rssFileMiB: number;
  rssShmemMiB: number;
  heapUsedMiB: number;
  /** V8's heap as committed (`nodejs_heap_size_total_bytes`) and memory held by JS objects outside it (`nodejs_external_memory_bytes`). */
  heapTotalMiB: number;
  externalMiB: number;
  openFds: number;
  loopP99Ms: number;
  requestP99Ms: number;
  requests: number;
  failures: number;
  /** Backlink checks, inbox messages and outbox deliveries so far (the server's counters). */
  checks: number;
  inboxMessages: number;
  deliveries: number;
}

/** Least-squares slope of `ys` over `xs` (per unit of x); 0 for fewer than two points. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** The `q` quantile (0–1) of `values` (nearest rank); NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/** The SVG chart's series: a name with its unit, and one value per minute. */
export interface Series {
  name: string;
  values: readonly number[];
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * One SVG document: a panel per series, stacked, each a line over the minutes with its smallest
 * and largest value written beside it (y from 0, so a flat line reads flat).
 */
export function chartSvg(title: string, series: readonly Series[]): string {
  const width = 720;
  const panel = 110;
  const left = 60;
  const plotWidth = width - left - 20;
  const height = 40 + series.length * (panel + 20);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="22" font-size="14">${escapeXml(title)}</text>`,
  ];
  series.forEach((s, index) => {
    const top = 40 + index * (panel + 20);
    const max = Math.max(...s.values, 0) || 1;
    const step = s.values.length > 1 ? plotWidth / (s.values.length - 1) : 0;
    const xy = s.values.map((v, i) => [(left + i * step).toFixed(1), (top + panel - (v / max) * panel).toFixed(1)]);
    const points = xy.map(([x, y]) => `${x},${y}`).join(' ');
    const shown = (v: number) => (Number.isFinite(v) ? (Math.round(v * 10) / 10).toString() : '–');
    parts.push(
      `<text x="${left}" y="${top - 4}">${escapeXml(s.name)}: ${shown(Math.min(...s.values))} to ${shown(Math.max(...s.values))}</text>`,
      `<line x1="${left}" y1="${top + panel}" x2="${left + plotWidth}" y2="${top + panel}" stroke="#999"/>`,
      `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + panel}" stroke="#999"/>`,
      `<text x="${left - 6}" y="${top + 10}" text-anchor="end">${shown(max)}</text>`,
      `<text x="${left - 6}" y="${top + panel}" text-anchor="end">0</text>`,
      `<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="${points}"/>`,
      ...xy.map(([x, y]) => `<circle cx="${x}" cy="${y}" r="2.5" fill="#1f77b4"/>`),
    );
  });
  parts.push(
    `<text x="${left + plotWidth}" y="${height - 6}" text-anchor="end">minutes 1 to ${series[0]?.values.length ?? 0}</text>`,
    '</svg>',
    '',
  );
  return parts.join('\n');
}

/** What the soak's figures come to (see the module comment). */
export interface SoakSummary {
  /** Minutes the slopes are taken over. */
  slopeMinutes: number;
  rssMiBPer10Min: number;
  rssAnonMiBPer10Min: number;
  rssFileMiBPer10Min: number;
  heapMiBPer10Min: number;
  heapTotalMiBPer10Min: number;
  externalMiBPer10Min: number;
  fdsPer10Min: number;
  loopP99MsPer10Min: number;
  /** Minutes each of the two windows compared. */
  windowMinutes: number;
  requestP99FirstMs: number;
  requestP99LastMs: number;
  /** Last window's p99 over the first's, minus 1 (0.2: 20 % slower). */
  requestP99Change: number;
}

/** The slopes and the p99 windows of `rows`, with `latencies[i]` the request times of minute i. */
export function summarize(rows: readonly SoakRow[], latencies: readonly (readonly number[])[]): SoakSummary {
  const last = rows.slice(-20);
  const x = last.map((r) => r.minute);
  const per10 = (pick: (r: SoakRow) => number) => slope(x, last.map(pick)) * 10;
  const window = Math.max(1, Math.min(10, Math.floor(rows.length / 2)));
  const first = quantile(latencies.slice(0, window).flat(), 0.99);
  const end = quantile(latencies.slice(-window).flat(), 0.99);
  return {
    slopeMinutes: last.length,
    rssMiBPer10Min: per10((r) => r.rssMiB),
    rssAnonMiBPer10Min: per10((r) => r.rssAnonMiB),
    rssFileMiBPer10Min: per10((r) => r.rssFileMiB),
    heapMiBPer10Min: per10((r) => r.heapUsedMiB),
    heapTotalMiBPer10Min: per10((r) => r.heapTotalMiB),
    externalMiBPer10Min: per10((r) => r.externalMiB),
    fdsPer10Min: per10((r) => r.openFds),
    loopP99MsPer10Min: per10((r) => r.loopP99Ms),
    windowMinutes: window,
    requestP99FirstMs: first,
    requestP99LastMs: end,
    requestP99Change: end / first - 1,
  };
}

/** The import document: the inbox bench's account, site and threads, backlinks on `origins`, the bench token. */
function soakDocument(origins: readonly string[], backlinks: number) {
  const doc = dataset();
  const at = '2026-10-01T09:00:00.000Z';
  return {
    ...doc,
    tokens: [{ accountId: 'acct_bench', name: 'soak (every scope)', scopes: [...SCOPES], token: BENCH_TOKEN }],
    // The replies' sender: the outbox delivers through the default mail provider.
    emailSenders: [
      {
        id: 'snd_bench',
        siteId: 'site_bench',
        connectionId: 'conn_bench',
        status: 'active' as const,
        displayName: 'Bench',
        email: USER,
        replyToEmail: USER,
        createdAt: at,
        updatedAt: at,
      },
    ],
    backlinks: Array.from({ length: backlinks }, (_, i) => ({
      id: `bl_soak_${i}`,
      siteId: 'site_bench',
      source: 'outreach' as const,
      acquisitionOrigin: 'unknown' as const,
      sourceUrl: `${origins[i % origins.length]}/post/${i}`,
      targetUrl: TARGET,
      category: 'resource_page' as const,
      status: 'pending' as const,
      observedAnchor: null,
      lastCheckedAt: null,
      createdAt: at,
      updatedAt: at,
      checks: [],
    })),
  };
}

/** The mix, each with its weight in tenths. */
function mix(runId: string): { endpoint: Endpoint; weight: number }[] {
  const reply = (i: number) => ({
    url: `${SITE}/threads/thr_${i % THREADS}/replies`,
    body: JSON.stringify({ body: `Soak reply ${i}: here is the link.`, idempotencyKey: `soak-${runId}-${i}` }),
  });
  return [
    { endpoint: { name: 'GET /me', kind: 'me', method: 'GET', url: `${API}/me` }, weight: 3 },
    { endpoint: { name: 'backlinks', kind: 'list', method: 'GET', url: `${PROJECT}/backlinks?limit=25` }, weight: 3 },
    { endpoint: { name: 'threads', kind: 'list', method: 'GET', url: `${SITE}/threads?limit=25` }, weight: 2 },
    {
      endpoint: { name: 'POST reply', kind: 'write', method: 'POST', url: reply(0).url, request: reply },
      weight: 2,
    },
  ];
}

/**
 * `pid`'s resident memory by kind, MiB (`memoryOf`: RssAnon, RssFile, RssShmem); NaN each where
 * /proc cannot be read (not Linux).
 */
export function rssByKind(pid: number): { rssAnonMiB: number; rssFileMiB: number; rssShmemMiB: number } {
  const memory = memoryOf(pid);
  const mib = (bytes: number | undefined) => (bytes ?? Number.NaN) / 2 ** 20;
  return { rssAnonMiB: mib(memory?.rssAnon), rssFileMiB: mib(memory?.rssFile), rssShmemMiB: mib(memory?.rssShmem) };
}

/** The values of the series named in `text` (Prometheus text format), summed over their labels. */
function scrape(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

function get(agent: Agent, origin: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}${path}`, { agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const minutes = Number(arg('minutes', '30'));
  const backlinks = Number(arg('backlinks', '1000'));
  const hosts = Number(arg('hosts', '100'));
  const mailPerMinute = Number(arg('mail', '200'));
  const serverKind = arg('server', 'source');
  const svgPath = arg('svg', join(BENCH_DIR, 'soak.svg'));
  const loadStart = loadavg();
  const runId = Date.now().toString(36);
  const dir = mkdtempSync(join(tmpdir(), 'outreach-bench-soak-'));
  const step = (line: string) => process.stdout.write(`${line}\n`);

  const site = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test/bench/monitor.ts'), '--site', '--hosts', String(hosts)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const dovecot = await startDovecot({ [USER]: PASSWORD });
  let stopServer: (() => Promise<void>) | null = null;
  try {
    const origins = await new Promise<string[]>((resolve, reject) => {
      let out = '';
      site.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as string[]);
      });
      site.once('exit', (code) => reject(new Error(`the monitor's site exited with ${code}`)));
    });
    const db = join(dir, 'soak.db');
    const store = await openStore(db);
    await migrate(store);
    await importDocument(store, soakDocument(origins, backlinks));
    await store.close();
    let delivered = 0;
    const deliver = (count: number) => {
      for (let end = delivered + count; delivered < end; delivered++)
        dovecot.deliver(USER, message(delivered).raw, { receivedAt: Date.now() });
    };
    deliver(mailPerMinute);

    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        limits: { requestsPerMinute: 0 },
        metrics: { enabled: true },
        monitor: { enabled: true, allowPrivateNetworks: true, perHostDelayMs: 0, intervalHours: 0.02 },
        inbox: {
          enabled: true,
          intervalMs: 15_000,
          connections: {
            conn_bench: { host: dovecot.host, port: dovecot.port, secure: false, passwordEnv: PASSWORD_ENV },
          },
        },
      }),
    );
    if (serverKind !== 'source') {
      const reason = buildReason();
      if (reason) {
        step(`${reason}: npm run build …`);
        build();
      }
    }
    const command =
      serverKind === 'exe'
        ? [EXE]
        : serverKind === 'bundle'
          ? [process.execPath, BUNDLE]
          : [process.execPath, join(ROOT, 'bin/outreach-api.js')];
    const server = await startServer(command, {
      db,
      config,
      logFile: join(dir, 'server.log'),
      env: { [PASSWORD_ENV]: PASSWORD },
    });
    stopServer = server.stop;
    step(`server (${serverKind}) answering after ${server.readyMs.toFixed(0)} ms`);

    // The rate: half the mix's peak (its requests' peaks weighted), unless given.
    const list = mix(runId);
    let rate = Number(arg('rate', '0'));
    if (!rate) {
      let secondsPerRequest = 0;
      for (const { endpoint, weight } of list) {
        const run = await peak(server.origin, endpoint, { connections: 16, seconds: 3, pid: server.pid });
        step(`peak ${endpoint.name}: ${run.rps.toFixed(0)} req/s, p99 ${run.p99.toFixed(1)} ms`);
        secondsPerRequest += weight / 10 / run.rps;
      }
      rate = Math.max(1, Math.round(1 / secondsPerRequest / 2));
    }
    step(`soak: ${minutes} min at ${rate} req/s (half the mix's peak), ${mailPerMinute} messages a minute`);

    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const order = list.flatMap(({ endpoint, weight }) => Array.from({ length: weight }, () => endpoint));
    let sent = 0;
    let writes = 0;
    let minuteLatencies: number[] = [];
    let minuteFailures = 0;
    let firstFailure: string | null = null;
    const send = () => {
      const endpoint = order[sent++ % order.length]!;
      const write = endpoint.request?.(writes++);
      const started = performance.now();
      const req = request(
        `${server.origin}${write?.url ?? endpoint.url}`,
        { agent, method: endpoint.method, headers: write ? WRITE_HEADERS : AUTH_HEADERS },
        (res) => {
          const failed = (res.statusCode ?? 0) >= 300;
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            if (failed) body += chunk;
          });
          res.on('end', () => {
            minuteLatencies.push(performance.now() - started);
            if (!failed) return;
            minuteFailures++;
            firstFailure ??= `${endpoint.name}: ${res.statusCode} ${body.slice(0, 300)}`;
          });
        },
      );
      req.on('error', (error) => {
        minuteLatencies.push(performance.now() - started);
        minuteFailures++;
        firstFailure ??= `${endpoint.name}: ${error.message}`;
      });
      req.end(write?.body);
    };

    const rows: SoakRow[] = [];
    const latencies: number[][] = [];
    const metricsAgent = new Agent({ keepAlive: true });
    await get(metricsAgent, server.origin, '/metrics'); // resets the event-loop delay histogram
    step(
      'minute  RSS MiB  (anon    file  shmem)  heap MiB  (committed  external)  open fds  loop p99 ms  request p99 ms  requests  failures  checks  inbox msgs  deliveries',
    );
    const start = performance.now();
    for (let minute = 1; minute <= minutes; minute++) {
      const end = start + minute * 60_000;
      if (minute > 1) deliver(mailPerMinute);
      while (performance.now() < end) {
        const due = Math.floor(((performance.now() - start) / 1000) * rate);
        while (sent < due) send();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const text = await get(metricsAgent, server.origin, '/metrics');
      const row: SoakRow = {
        minute,
        rssMiB: scrape(text, 'process_resident_memory_bytes') / 2 ** 20,
        ...rssByKind(server.pid),
        heapUsedMiB: scrape(text, 'nodejs_heap_size_used_bytes') / 2 ** 20,
        heapTotalMiB: scrape(text, 'nodejs_heap_size_total_bytes') / 2 ** 20,
        externalMiB: scrape(text, 'nodejs_external_memory_bytes') / 2 ** 20,
        openFds: scrape(text, 'process_open_fds'),
        loopP99Ms: scrape(text, 'nodejs_eventloop_lag_p99_seconds') * 1000,
        requestP99Ms: quantile(minuteLatencies, 0.99),
        requests: minuteLatencies.length,
        failures: minuteFailures,
        checks: scrape(text, 'outreach_backlink_checks_total'),
        inboxMessages: scrape(text, 'outreach_inbox_messages_total'),
        deliveries: scrape(text, 'outreach_outbox_deliveries_total'),
      };
      rows.push(row);
      latencies.push(minuteLatencies);
      minuteLatencies = [];
      minuteFailures = 0;
      step(
        [
          String(minute).padStart(6),
          row.rssMiB.toFixed(1).padStart(7),
          ` ${row.rssAnonMiB.toFixed(1).padStart(6)}`,
          row.rssFileMiB.toFixed(1).padStart(6),
          `${row.rssShmemMiB.toFixed(1).padStart(5)} `,
          row.heapUsedMiB.toFixed(1).padStart(8),
          row.heapTotalMiB.toFixed(1).padStart(11),
          `${row.externalMiB.toFixed(1).padStart(9)} `,
          String(row.openFds).padStart(8),
          row.loopP99Ms.toFixed(1).padStart(11),
          row.requestP99Ms.toFixed(1).padStart(14),
          String(row.requests).padStart(8),
          String(row.failures).padStart(8),
          String(row.checks).padStart(6),
          String(row.inboxMessages).padStart(10),
          String(row.deliveries).padStart(10),
        ].join('  '),
      );
    }
    // Answers still on their way count in the last minute's failures only if they fail.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    agent.destroy();
    metricsAgent.destroy();

    const summary = summarize(rows, latencies);
    const loadEnd = loadavg();
    const pct = (v: number) => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(0)} %`;
    step(
      [
        `slopes over the last ${summary.slopeMinutes} min, per 10 min: RSS ${summary.rssMiBPer10Min.toFixed(2)} MiB (target <= 1; anon ${summary.rssAnonMiBPer10Min.toFixed(2)}, file ${summary.rssFileMiBPer10Min.toFixed(2)}), heap used ${summary.heapMiBPer10Min.toFixed(2)} MiB (committed ${summary.heapTotalMiBPer10Min.toFixed(2)}, external ${summary.externalMiBPer10Min.toFixed(2)}), open fds ${summary.fdsPer10Min.toFixed(2)}, loop p99 ${summary.loopP99MsPer10Min.toFixed(2)} ms`,
        `request p99, last ${summary.windowMinutes} min vs first ${summary.windowMinutes}: ${summary.requestP99LastMs.toFixed(1)} vs ${summary.requestP99FirstMs.toFixed(1)} ms (${pct(summary.requestP99Change)}; target within 20 %)`,
        `load average: ${loadStart.map((l) => l.toFixed(2)).join(' ')} at the start, ${loadEnd.map((l) => l.toFixed(2)).join(' ')} at the end`,
      ].join('\n'),
    );
    mkdirSync(dirname(svgPath), { recursive: true });
    writeFileSync(
      svgPath,
      chartSvg(`soak: ${minutes} min at ${rate} req/s`, [
        { name: 'RSS, MiB', values: rows.map((r) => r.rssMiB) },
        { name: 'heap used, MiB', values: rows.map((r) => r.heapUsedMiB) },
        { name: 'open file descriptors', values: rows.map((r) => r.openFds) },
        { name: 'event-loop delay p99, ms', values: rows.map((r) => r.loopP99Ms) },
        { name: 'request p99, ms', values: rows.map((r) => r.requestP99Ms) },
      ]),
    );
    mkdirSync(BENCH_DIR, { recursive: true });
    writeFileSync(
      join(BENCH_DIR, 'soak-latest.json'),
      JSON.stringify({ minutes, rate, server: serverKind, rows, summary, loadStart, loadEnd }, null, 2),
    );
    step(`chart: ${svgPath}; figures: ${join(BENCH_DIR, 'soak-latest.json')}`);
    const lastRow = rows.at(-1);
    if (rows.some((r) => r.failures > 0)) {
      process.stderr.write(`some requests failed; the first: ${firstFailure}\n`);
      process.exitCode = 1;
    }
    if (!lastRow || lastRow.checks === 0 || lastRow.inboxMessages === 0) {
      process.stderr.write('the monitor or the inbox sync did nothing\n');
      process.exitCode = 1;
    }
  } finally {
    await stopServer?.();
    site.stdin!.end();
    await dovecot.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
