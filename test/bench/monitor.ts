/**
 * `npm run bench:monitor`: the backlink monitor's throughput and memory (issue #12).
 *
 * One pass (`runMonitorPass`, the code `serve` and `backlinks check` run) over 10,000 backlinks
 * spread over 1,000 hosts — 1,000 loopback addresses (127.1.x.y) served by one local HTTP server
 * in a child process — with `monitor.concurrency` 64, `monitor.perHostDelayMs` 0 and robots.txt
 * read once per host. Every page is ~20 KB of HTML with 100 links, the backlink's among them, so
 * every check ends `live`. Reports checks per second, the monitor process's peak RSS (sampled
 * every 20 ms during the pass) and its CPU time per check, and the load average of the machine
 * before and after (the machine may be shared: compare runs with that in mind).
 *
 * Options: `--backlinks N` (default 10000), `--hosts N` (default 1000), `--concurrency N`
 * (default 64), `--deadline S` (default 120: the pass is stopped then and the figures are of
 * what it did). Exit 1 when a check did not end `live` (the bench is then measuring errors).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeClock } from '../../src/domain/clock.js';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument } from '../../src/import/index.js';
import { silentLogger } from '../../src/logger.js';
import { runMonitorPass } from '../../src/workers/monitor.js';
import { documentOf, TARGET } from '../monitor/helpers.js';
import { startTestSite } from '../monitor/site.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};

/** The i-th host address (i from 0): 127.1.0.1, …, 127.1.0.250, 127.1.1.1, … */
const address = (i: number) => `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;

/** A page of ~20 KB: 100 paragraphs with a link each, the target's in the middle. */
function pageHtml(): string {
  const paragraphs = Array.from({ length: 100 }, (_, i) =>
    i === 50
      ? `<p>Our pick: <a href="${TARGET}?utm_source=bench" rel="ugc">the guide</a>.</p>`
      : `<p>Paragraph ${i} about outdoor gear, with <a href="/posts/${i}" class="related">a related post</a> and ${'some filler words '.repeat(8)}</p>`,
  );
  return `<!doctype html><html><head><meta charset="utf-8"><title>Bench page</title></head><body>${paragraphs.join('\n')}</body></html>`;
}

/** Child mode: the site on `hosts` addresses; prints its origins as JSON, runs until stdin ends. */
async function serveSite(hosts: number): Promise<void> {
  const body = Buffer.from(pageHtml());
  const robots = Buffer.from('User-agent: *\nDisallow: /private/\n');
  const site = await startTestSite(
    Array.from({ length: hosts }, (_, i) => address(i)),
    {
      keepLog: false,
      fallback: (req, res) => {
        const isRobots = req.url === '/robots.txt';
        res.writeHead(200, {
          'content-type': isRobots ? 'text/plain' : 'text/html; charset=utf-8',
          'content-length': (isRobots ? robots : body).length,
        });
        res.end(isRobots ? robots : body);
      },
    },
  );
  process.stdout.write(`${JSON.stringify(site.origins)}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

async function main(): Promise<void> {
  const backlinks = arg('backlinks', 10_000);
  const hosts = arg('hosts', 1000);
  const concurrency = arg('concurrency', 64);
  const deadlineMs = arg('deadline', 120) * 1000;
  const loadBefore = loadavg();

  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--site', '--hosts', String(hosts)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const origins = await new Promise<string[]>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as string[]);
    });
    child.once('exit', (code) => reject(new Error(`the site exited with ${code}`)));
  });

  const dir = mkdtempSync(join(tmpdir(), 'outreach-bench-monitor-'));
  try {
    const db = join(dir, 'bench.db');
    const store = await openStore(db);
    await migrate(store);
    const clock = new FakeClock();
    await importDocument(
      store,
      documentOf(
        Array.from({ length: backlinks }, (_, i) => ({
          id: `bl_${String(i).padStart(6, '0')}`,
          sourceUrl: `${origins[i % hosts]}/post/${i}`,
        })),
      ),
      { nowIso: new Date(clock.now()).toISOString() },
    );
    await store.close();
    // The pass runs in a process of its own, so its RSS and CPU are the monitor's alone (not the
    // import's that built the database, nor the site's).
    const pass = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--pass',
        db,
        '--concurrency',
        String(concurrency),
        '--deadline',
        String(deadlineMs / 1000),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    pass.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => pass.once('close', resolve));
    if (code !== 0) throw new Error(`the pass exited with ${code}: ${out}`);
    const measured = JSON.parse(out) as {
      checked: number;
      live: number;
      ms: number;
      baseRssMiB: number;
      peakRssMiB: number;
      cpuMsPerCheck: number;
      errors: [string, number][];
    };
    const result = {
      backlinks,
      hosts,
      concurrency,
      checked: measured.checked,
      live: measured.live,
      seconds: measured.ms / 1000,
      checksPerSecond: Math.round(measured.checked / (measured.ms / 1000)),
      peakRssMiB: measured.peakRssMiB,
      rssBeforePassMiB: measured.baseRssMiB,
      cpuMsPerCheck: measured.cpuMsPerCheck,
      loadAverageBefore: loadBefore.map((l) => Math.round(l * 100) / 100),
      loadAverageAfter: loadavg().map((l) => Math.round(l * 100) / 100),
    };
    process.stdout.write(
      [
        `backlink monitor: ${result.checked} of ${backlinks} backlinks over ${hosts} hosts, concurrency ${concurrency}, per-host delay 0`,
        `  checks per second   ${result.checksPerSecond}   (target >= 500)`,
        `  peak RSS            ${result.peakRssMiB} MiB   (target <= 200; ${result.rssBeforePassMiB} MiB before the pass: Node, tsx and the modules)`,
        `  CPU per check       ${result.cpuMsPerCheck} ms (monitor process, user + system)`,
        `  wall time           ${result.seconds.toFixed(2)} s`,
        `  load average        ${result.loadAverageBefore.join(' ')} before, ${result.loadAverageAfter.join(' ')} after`,
        ...measured.errors.map(([reason, n]) => `  errors: ${n} × ${reason}`),
        JSON.stringify(result),
        '',
      ].join('\n'),
    );
    if (measured.live !== backlinks) process.exitCode = 1;
  } finally {
    child.stdin!.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Pass mode: one pass over the database at `--pass PATH`; prints its measures as JSON. */
async function runPass(db: string): Promise<void> {
  const store = await openStore(db);
  const config = loadConfig(
    undefined,
    {},
    {
      db,
      'monitor.allowPrivateNetworks': true,
      'monitor.perHostDelayMs': 0,
      'monitor.concurrency': arg('concurrency', 64),
    },
  );
  const baseRss = process.memoryUsage().rss;
  let peakRss = baseRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const errors = new Map<string, number>();
  const cpu = process.cpuUsage();
  const summary = await runMonitorPass(
    { store, clock: new FakeClock(), config, logger: silentLogger },
    {
      signal: AbortSignal.timeout(arg('deadline', 120) * 1000),
      onCheck: ({ error }) => {
        const reason = error?.replace(/\d+(\.\d+)*(:\d+)?/g, 'N');
        if (reason) errors.set(reason, (errors.get(reason) ?? 0) + 1);
      },
    },
  );
  const used = process.cpuUsage(cpu);
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  await store.close();
  const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  process.stdout.write(
    JSON.stringify({
      checked: summary.checked,
      live: summary.live,
      ms: summary.ms,
      baseRssMiB: mib(baseRss),
      peakRssMiB: mib(peakRss),
      cpuMsPerCheck: Math.round(((used.user + used.system) / 1000 / Math.max(1, summary.checked)) * 1000) / 1000,
      errors: [...errors],
    }),
  );
}

const passDb = process.argv.indexOf('--pass');
if (process.argv.includes('--site')) await serveSite(arg('hosts', 1000));
else if (passDb > 0) await runPass(process.argv[passDb + 1]!);
else await main();
