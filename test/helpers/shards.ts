/**
 * The unit suite in a few processes instead of one per file. Each test file costs about 2 s of
 * CPU to start as its own process (Node, tsx's loader, then the same module graph: kysely, zod,
 * hono and the app), more than most files spend testing; a shard process loads that graph once
 * and runs its files one after another, each inside a suite named for its path (its top-level
 * hooks stay its own). `test/unit/shard-N.ts` are the shard processes `npm run test:unit` starts
 * side by side; a single file still runs alone with `node --import tsx --test FILE`.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serviceSkip } from './services.js';

const TEST_DIR = fileURLToPath(new URL('..', import.meta.url));

/**
 * Seconds a file's tests took in its shard (the mean of three runs of the shards on the 2-core
 * machine, nothing else running); files not listed count `DEFAULT_COST`. Only the balance between
 * shards depends on them.
 */
const COST: Record<string, number> = {
  // The multi-instance test (#20): 22.6 s alone, 42 to 56 s beside a second copy of itself; a
  // busy machine's single runs, not quiet means.
  'cluster/instances.test.ts': 22,
  // Issue #32's caches across processes: five serve processes in all; 55 s in one run on a busy machine.
  'cluster/caches.test.ts': 25,
  'browser/reference-page.test.ts': 14.1,
  // The settings area's (#23): estimated from single runs on a busy machine, not quiet means.
  'browser/settings.test.ts': 12,
  'web/sign-in.test.ts': 8,
  'web/api-access.test.ts': 3,
  'cli/password.test.ts': 3,
  'cli/shutdown.test.ts': 9.1,
  // #29's ready file, wait and orphans: single runs on a busy machine, not quiet means.
  'cli/ready.test.ts': 9,
  'cli/orphans.test.ts': 8,
  'cli/launcher.test.ts': 4,
  'inbox/sync.test.ts': 8.8,
  'inbox/cli.test.ts': 4.3,
  // Hostile mail (#28): single runs on a busy machine, not quiet means.
  'inbox/crash.test.ts': 4,
  'inbox/hostile.test.ts': 3,
  'store/row-counts.test.ts': 8.1,
  'writes/outbox-crash.test.ts': 3.9,
  'cluster/nginx.test.ts': 3.5,
  // #28: two installs on SQLite files and on PostgreSQL databases, four servers each; a single run.
  'limiter/installs.test.ts': 2.5,
  'fixture/reset.test.ts': 3.7,
  'store/query-plans.test.ts': 3.3,
  // Issue #28's: single runs on a busy machine (a statement of about a second; PostgreSQL held by locks).
  'store/search-readers.test.ts': 4,
  'http/search-share.test.ts': 4,
  'store/search-folded.test.ts': 2.5,
  'cli.test.ts': 3.1,
  'monitor/rules.test.ts': 2.6,
  'writes/replies.test.ts': 2.3,
  'monitor/cli.test.ts': 2.0,
  'http/lists.test.ts': 1.9,
  'http/access.test.ts': 1.8,
  'import.test.ts': 1.7,
  'fixture/faults.test.ts': 1.6,
  'http/payload-too-large.test.ts': 1.2,
  'monitor/api.test.ts': 1.1,
  'http/pipeline.test.ts': 1.1,
  'writes/drafts.test.ts': 1.1,
  'writes/contacts.test.ts': 1.0,
  'store/page-anchors.test.ts': 1.0,
  'cli/backup.test.ts': 0.9,
  'seed.test.ts': 0.9,
  'fixture/clock.test.ts': 0.8,
  'routes/leads.test.ts': 0.8,
  'monitor/politeness.test.ts': 0.8,
  'routes/prospects.test.ts': 0.7,
  'fixture/cli.test.ts': 0.6,
  'fixture/journal-mail.test.ts': 0.6,
};
const DEFAULT_COST = 0.5;

/**
 * Every `*.test.ts` under test/ but the benchmarks' and test/package/'s (those need the packed
 * tarballs: `npm run test:package`, in `npm run test:dist`), relative to test/, sorted.
 */
export function unitTestFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!['bench', 'package'].includes(relative(TEST_DIR, path))) walk(path);
      } else if (entry.name.endsWith('.test.ts')) found.push(relative(TEST_DIR, path));
    }
  };
  walk(TEST_DIR);
  return found.sort();
}

/**
 * The store-dependent files (decisions.md §16): every test that works through the repositories,
 * the routes, the writes, the workers (the outbox's, the monitor's, the inbox's), the settings
 * area, the import or the CLI on a store of the harness (test/helpers/stores.ts). The PostgreSQL shards run these, and only these, a second time on
 * PostgreSQL; the others test SQLite itself (test/store/: its file, pragmas, FTS5, query plans,
 * caches), the fixture control plane (SQLite only), or no store at all.
 */
const STORE_DEPENDENT = /^(routes|writes|monitor|http|inbox|web)\/|^(import|seed|cli)\.test\.ts$/;
/** Store-dependent in their directory, but of no store (pure code) or of a SQLite file only. */
const NOT_STORE_DEPENDENT = new Set([
  'http/request-gate.test.ts',
  'http/token-masking.test.ts',
  'monitor/links.test.ts',
  'writes/providers.test.ts',
  'writes/smtp-tls.test.ts',
  'writes/worker.test.ts',
  // A real process killed on a SQLite file; on PostgreSQL its leased reply would wait out workers.leaseMs.
  'writes/outbox-crash.test.ts',
  // They choose their store themselves (a damaged SQLite file; PostgreSQL out of reach, or migrated by
  // another instance; instances on one database; the outbox's lease on each store; PostgreSQL's pool
  // under searches).
  'http/storage-failure.test.ts',
  'http/postgres-failure.test.ts',
  'http/postgres-prepared.test.ts',
  'http/search-share.test.ts',
  'writes/instances.test.ts',
  'writes/outbox-lease.test.ts',
  'inbox/postgres.test.ts',
  'web/postgres.test.ts',
  // The fixture control plane (SQLite only) and SQLite's query plans.
  'inbox/fixture.test.ts',
  'inbox/query-plans.test.ts',
]);

/** Whether `file` (relative to test/) runs on PostgreSQL too (see `STORE_DEPENDENT`). */
export const isStoreDependent = (file: string): boolean => STORE_DEPENDENT.test(file) && !NOT_STORE_DEPENDENT.has(file);

/**
 * The files of shard `index` of `count`, of every file or of the store-dependent ones only:
 * costliest first, each to the shard with the least so far.
 */
export function shardFiles(index: number, count: number, only: (file: string) => boolean = () => true): string[] {
  const shards = Array.from({ length: count }, () => ({ cost: 0, files: [] as string[] }));
  const cost = (file: string) => COST[file] ?? DEFAULT_COST;
  for (const file of unitTestFiles()
    .filter(only)
    .sort((a, b) => cost(b) - cost(a) || (a < b ? -1 : 1))) {
    const lightest = shards.reduce((min, shard) => (shard.cost < min.cost ? shard : min));
    lightest.cost += cost(file);
    lightest.files.push(file);
  }
  return shards[index]!.files;
}

/**
 * Registers shard `index` of `count`: one suite per file, named for its path under test/. With
 * `store` 'postgres', the shard runs the store-dependent files (`isStoreDependent`) on PostgreSQL
 * (`OUTREACH_TEST_STORE`, test/helpers/stores.ts), each suite named `postgres: <path>`; without
 * a PostgreSQL server it skips them all, saying so in one line (and fails under `CI`).
 */
export async function registerShard(
  index: number,
  count: number,
  store: 'sqlite' | 'postgres' = 'sqlite',
): Promise<void> {
  if (store === 'sqlite') {
    for (const file of shardFiles(index, count))
      describe(file, async () => {
        await import(pathToFileURL(join(TEST_DIR, file)).href);
      });
    return;
  }
  process.env.OUTREACH_TEST_STORE = 'postgres';
  const skip = await serviceSkip('postgres');
  for (const file of shardFiles(index, count, isStoreDependent))
    describe(`postgres: ${file}`, { skip }, async () => {
      await import(pathToFileURL(join(TEST_DIR, file)).href);
    });
}
