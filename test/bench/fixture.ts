/**
 * `npm run bench:fixture` (issue #29): what a user of the packed package waits for, with Stoplight
 * Prism on the same OpenAPI document beside it, in one run. Prints figures; fails only when it
 * cannot measure. Needs `npm run build && npm run pack` (dist/npm/) and the npm registry (Prism is
 * installed into a temporary directory; the tarballs need no registry).
 *
 *   npm run bench:fixture                 # 5 runs of each start, 3 installs, 20 resets
 *   npm run bench:fixture -- --no-prism   # without Prism (no registry needed)
 *
 * Figures (each as min / median / max of its runs):
 * - packages an install adds, counted in node_modules/.package-lock.json;
 * - the install time into an empty project, with a warm npm cache (a first install fills it);
 * - `npx outreach-api --db :memory: serve --demo --fixture --port 0` from spawn to the first 200 of
 *   `/readyz` (the port read from `--ready-file`), and the same without npx (the launcher in
 *   node_modules/.bin) and with the platform executable started directly; Prism: `npx prism mock`
 *   on the served document until it answers a request;
 * - `startFixture()` until it resolves; 8 `startFixture()` at once until all have;
 * - `reset()` on the demo data, as the caller waits for it and as the server reports it (`ms`),
 *   with no write since the last reset and after the writes a typical test makes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Testing from '../../src/testing/index.js';
import { INSTALL_COMMAND } from '../package/project.js';

const argv = process.argv.slice(2);
const RUNS = Number(process.env.RUNS ?? 5);
const INSTALLS = Number(process.env.INSTALLS ?? 3);
const RESETS = Number(process.env.RESETS ?? 20);
const withPrism = !argv.includes('--no-prism');

const work = mkdtempSync(join(tmpdir(), 'outreach-bench-fixture-'));
const log = (line: string) => process.stdout.write(`${line}\n`);
const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor((sorted.length - 1) / 2)]!, max: sorted.at(-1)! };
};
const ms = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ms`);
const mmm = (values: number[]) => {
  const s = stats(values);
  return `${ms(s.min)} / ${ms(s.median)} / ${ms(s.max)}`;
};

/** Runs `command` in bash in `cwd`; answers its wall time, ms. @throws on a non-zero exit. */
function timed(command: string, cwd: string): number {
  const start = performance.now();
  const run = spawnSync('bash', ['-c', command], { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${command}: exit ${run.status}\n${run.stdout}${run.stderr}`);
  return performance.now() - start;
}

/** A fresh empty project directory. */
function emptyProject(name: string): string {
  const dir = join(work, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'bench-project', private: true }));
  return dir;
}

/** Packages an install put in node_modules (npm's own record of them). */
const packagesIn = (dir: string) =>
  Object.keys(
    (JSON.parse(readFileSync(join(dir, 'node_modules/.package-lock.json'), 'utf8')) as { packages: object }).packages,
  ).length;

/** `installs` timed installs of `command` into fresh projects after one that warms the cache. */
function installs(name: string, command: string): { packages: number; times: number[] } {
  timed(command, emptyProject(`${name}-warm`));
  const times: number[] = [];
  let dir = '';
  for (let i = 0; i < INSTALLS; i++) times.push(timed(command, (dir = emptyProject(`${name}-${i}`))));
  return { packages: packagesIn(dir), times };
}

/** Resolves when `file` exists (its directory watched, with a slow poll behind it). */
function fileAppears(file: string, timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const dir = join(file, '..');
    const done = (error?: Error) => {
      watcher.close();
      clearInterval(poll);
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    const check = () => existsSync(file) && done();
    const watcher = watch(dir, check);
    const poll = setInterval(check, 100);
    const timer = setTimeout(() => done(new Error(`${file} did not appear`)), timeoutMs);
    check();
  });
}

/** Spawns `command args` and answers the ms until `ready()` resolves; then stops it. */
async function startTime(command: string, args: string[], cwd: string, ready: () => Promise<void>): Promise<number> {
  const start = performance.now();
  const child = spawn(command, args, { cwd, stdio: 'ignore', detached: true });
  try {
    await ready();
    return performance.now() - start;
  } finally {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {}
    await new Promise((done) => (child.exitCode === null ? child.once('exit', done) : done(null)));
  }
}

async function untilAnswered(url: string, timeoutMs = 30_000): Promise<void> {
  for (const start = performance.now(); performance.now() - start < timeoutMs; ) {
    const answered = await fetch(url).then(
      (res) => res.status,
      () => 0,
    );
    if (answered === 200 || (answered > 0 && !url.endsWith('/readyz'))) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${url} did not answer`);
}

/** `serve --demo --fixture --port 0` through `prefix`, until its /readyz answers 200. */
async function serveTimes(cwd: string, prefix: string[]): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const readyFile = join(cwd, `ready-${i}.json`);
    rmSync(readyFile, { force: true });
    const [command, ...args] = prefix;
    times.push(
      await startTime(
        command!,
        [...args, '--db', ':memory:', 'serve', '--demo', '--fixture', '--port', '0', '--ready-file', readyFile],
        cwd,
        async () => {
          await fileAppears(readyFile);
          await untilAnswered(`${(JSON.parse(readFileSync(readyFile, 'utf8')) as { url: string }).url}/readyz`);
        },
      ),
    );
  }
  return times;
}

const table: [string, string, string][] = [];
const row = (figure: string, ours: string, prism = '–') => {
  table.push([figure, ours, prism]);
  log(`  ${figure}: ${ours}${prism === '–' ? '' : ` (Prism ${prism})`}`);
};

log(
  `bench:fixture on ${cpus().length} cores (${cpus()[0]?.model}), load average ${loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`,
);
const ours = installs('outreach', INSTALL_COMMAND().replace(' --save-dev', ''));
const project = join(work, `outreach-${INSTALLS - 1}`);
let prism: { packages: number; times: number[] } | undefined;
if (withPrism) prism = installs('prism', 'npm install --no-audit --no-fund --prefer-offline @stoplight/prism-cli');
row('packages an install adds', String(ours.packages), prism ? String(prism.packages) : '–');
row('install from the tarballs, warm npm cache', mmm(ours.times), prism ? mmm(prism.times) : '–');

const testing = (await import(
  pathToFileURL(createRequire(join(project, 'package.json')).resolve('outreach-api/testing')).href
)) as typeof Testing;

let prismStart = '–';
if (prism) {
  const fixture = await testing.startFixture();
  const document = join(work, 'openapi.json');
  writeFileSync(document, await (await fetch(`${fixture.url}/api/public/openapi.json`)).text());
  await fixture.stop();
  const prismDir = join(work, `prism-${INSTALLS - 1}`);
  const times: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 3); i++) {
    const port = 41000 + i;
    times.push(
      await startTime('npx', ['prism', 'mock', document, '-p', String(port)], prismDir, () =>
        untilAnswered(`http://127.0.0.1:${port}/api/public/v1/me`),
      ),
    );
  }
  prismStart = mmm(times);
}
row(
  '`npx outreach-api serve --demo --fixture --port 0` until `/readyz` answers',
  mmm(await serveTimes(project, ['npx', 'outreach-api'])),
  prismStart,
);
row(
  'the same without npx (`node_modules/.bin/outreach-api`)',
  mmm(await serveTimes(project, ['node_modules/.bin/outreach-api'])),
);
row(
  'the same, the platform executable started directly',
  mmm(await serveTimes(project, [join(project, 'node_modules/@outreach-api/linux-x64/bin/outreach-api')])),
);

const fixtureStarts: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const start = performance.now();
  const fixture = await testing.startFixture();
  fixtureStarts.push(performance.now() - start);
  await fixture.stop();
}
row('`startFixture()` until it resolves', mmm(fixtureStarts));

const together: number[] = [];
for (let i = 0; i < Math.min(RUNS, 3); i++) {
  const start = performance.now();
  const fixtures = await Promise.all(Array.from({ length: 8 }, () => testing.startFixture()));
  together.push(performance.now() - start);
  await Promise.all(fixtures.map((f) => f.stop()));
}
row('8 `startFixture()` at once, until all have resolved', mmm(together));

const fixture = await testing.startFixture({ seed: 1 });
const thread = { projectId: 'prj_demo_main', siteId: 'site_demo_blog', threadId: 'thr_demo_012' };
for (const withWrites of [false, true]) {
  const waited: number[] = [];
  const reported: number[] = [];
  for (let i = 0; i < RESETS; i++) {
    if (withWrites) {
      await fixture.client.POST('/projects/{projectId}/sites/{siteId}/threads/{threadId}/replies', {
        params: { path: thread },
        body: { body: 'Thanks, here is the link.', idempotencyKey: `bench-${i}` },
      });
      await fixture.client.PATCH('/projects/{projectId}/sites/{siteId}/drafts/{draftId}', {
        params: { path: { projectId: 'prj_demo_main', siteId: 'site_demo_blog', draftId: 'drf_demo_039' } },
        body: { subject: `Edited ${i}`, body: 'An edited body that is long enough' },
      });
    }
    const start = performance.now();
    reported.push((await fixture.reset()).ms);
    waited.push(performance.now() - start);
  }
  const what = withWrites ? 'after a reply and a draft edit' : 'with nothing written';
  row(`\`reset()\` on the demo data, ${what}: as the caller waits`, mmm(waited));
  row(`\`reset()\` on the demo data, ${what}: the server's \`ms\``, mmm(reported));
}
await fixture.stop();

log('\n| figure | outreach-api (min / median / max) | Prism |\n|---|---|---|');
for (const [figure, value, other] of table) log(`| ${figure} | ${value} | ${other} |`);
rmSync(work, { recursive: true, force: true });
