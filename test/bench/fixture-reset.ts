/**
 * The fixture's reset time (decisions.md §14, docs/fixture.md), measured through
 * HTTP: a server with `fixture.enabled` on a copy of a dataset; each round makes the writes a
 * typical test makes (edit and regenerate a draft, reply to a thread, discover and verify a
 * contact, as far as the dataset allows), then `POST /__admin/reset`, and records its `{ ms }`.
 * Also the time of the first snapshot (at start-up) and of a snapshot after those writes.
 *
 *   node --import tsx test/bench/fixture-reset.ts                 # the demo data, in memory
 *   node --import tsx test/bench/fixture-reset.ts --scale 0.1     # the bench dataset at 1/10 (100,000 backlinks)
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { silentLogger } from '../../src/logger.js';
import { startServer } from '../../src/server.js';
import { BENCH_TOKEN, ensureDataset, scaled } from './generate.js';
import { sqliteStore } from '../helpers/stores.js';

const ROUNDS = Number(process.env.ROUNDS ?? 20);
const argv = process.argv.slice(2);
const scaleAt = argv.indexOf('--scale');
const dir = mkdtempSync(join(tmpdir(), 'outreach-fixture-bench-'));

let dbPath = ':memory:';
let token: string;
let label: string;
if (scaleAt >= 0) {
  const dataset = await ensureDataset(scaled(Number(argv[scaleAt + 1])), {
    log: (l) => process.stdout.write(`${l}\n`),
  });
  dbPath = join(dir, 'bench.db');
  copyFileSync(dataset.path, dbPath);
  token = BENCH_TOKEN;
  label = `bench dataset ${dataset.key}`;
} else {
  token = (await import('../../src/seed/demo.js')).DEMO_TOKEN;
  label = 'demo data (in memory)';
}
const store = await openStore(dbPath);
await migrate(store);
if (scaleAt < 0) await (await import('../../src/seed/demo.js')).seedDemo(store);
const backlinks = (sqliteStore(store).sqlite.prepare('SELECT count(*) AS n FROM backlinks').get() as { n: number }).n;

const config = loadConfig(
  undefined,
  {},
  { db: dbPath, 'server.port': 0, 'fixture.enabled': true, 'limits.requestsPerMinute': 0 },
);
const started = performance.now();
const server = await startServer({ config, store, logger: silentLogger });
const startMs = performance.now() - started;

const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${server.origin}${path.startsWith('/__admin') ? '' : '/api/public/v1'}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      // The admin API refuses a state-changing call without a JSON Content-Type, body or not.
      ...(body === undefined && !path.startsWith('/__admin') ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { data: any } };
};

// Ids for the writes: the main project's biggest site, whose account the token belongs to.
const first = (rows: unknown[]) => rows[0] as { id: string } | undefined;
const site =
  scaleAt >= 0
    ? { id: 'site_bench_blog', project_id: 'prj_bench_main' }
    : { id: 'site_demo_blog', project_id: 'prj_demo_main' };
const S = `/projects/${site.project_id}/sites/${site.id}`;
const draft = first(sqliteStore(store).sqlite.prepare('SELECT id FROM drafts WHERE site_id = ? LIMIT 1').all(site.id));
const thread = first(
  sqliteStore(store).sqlite.prepare('SELECT id FROM threads WHERE site_id = ? LIMIT 1').all(site.id),
);
const prospect = first(
  sqliteStore(store)
    .sqlite.prepare('SELECT id FROM prospects WHERE site_id = ? AND contact_paths IS NOT NULL LIMIT 1')
    .all(site.id),
);
const contact = first(
  sqliteStore(store).sqlite.prepare('SELECT id FROM contacts WHERE site_id = ? LIMIT 1').all(site.id),
);

const writes: [string, () => Promise<{ status: number }>][] = [
  [
    'edit draft',
    () =>
      api('PATCH', `${S}/drafts/${draft?.id}`, {
        subject: 'Benchmark subject',
        body: 'A benchmark body long enough to pass.',
      }),
  ],
  [
    'regenerate draft',
    () =>
      api(
        'POST',
        `${S}/drafts/${draft?.id}/regenerate`,
        { instruction: 'short' },
        { 'idempotency-key': 'bench-regenerate' },
      ),
  ],
  [
    'reply',
    () =>
      api('POST', `${S}/threads/${thread?.id}/replies`, {
        body: 'A benchmark reply.',
        idempotencyKey: 'bench-reply-0001',
      }),
  ],
  [
    'discover contact',
    () =>
      api('POST', `/projects/${site.project_id}/prospects/${prospect?.id}/contact-discovery`, {
        idempotencyKey: 'bench-discover',
      }),
  ],
  ['verify contact', () => api('POST', `${S}/contacts/${contact?.id}/verify`, { idempotencyKey: 'bench-verify-01' })],
];

const resets: number[] = [];
/** CPU time of the process during each reset request (user + system), ms: unlike wall time, not inflated by a busy machine. */
const cpu: number[] = [];
const served = new Set<string>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, write] of writes) if ((await write()).status < 300) served.add(name);
  await server.workers.outbox.drain();
  const before = process.cpuUsage();
  resets.push((await api('POST', '/__admin/reset')).body.data.ms);
  const used = process.cpuUsage(before);
  cpu.push((used.user + used.system) / 1000);
}
for (const [, write] of writes) await write();
const snapshotMs = (await api('POST', '/__admin/snapshot')).body.data.ms;
await server.close();
await store.close();
rmSync(dir, { recursive: true, force: true });

resets.sort((a, b) => a - b);
cpu.sort((a, b) => a - b);
const q = (p: number, values = resets) =>
  values[Math.min(values.length - 1, Math.floor(p * values.length))]!.toFixed(2);
process.stdout.write(`${label}: ${backlinks} backlinks\n`);
process.stdout.write(`  start-up with the first snapshot: ${startMs.toFixed(0)} ms\n`);
process.stdout.write(`  writes per round: ${[...served].join(', ')}\n`);
process.stdout.write(
  `  reset (${ROUNDS} rounds), its { ms }: min ${q(0)} ms, median ${q(0.5)} ms, p90 ${q(0.9)} ms, max ${resets.at(-1)!.toFixed(2)} ms\n`,
);
process.stdout.write(
  `  CPU time of the whole reset request: median ${q(0.5, cpu)} ms, max ${cpu.at(-1)!.toFixed(2)} ms\n`,
);
process.stdout.write(`  snapshot after one round of writes: ${snapshotMs.toFixed(2)} ms\n`);
