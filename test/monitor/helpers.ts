/**
 * Shared setup of the monitor tests: a real SQLite file with one account, project and site and
 * the backlinks a test names (through the importer), the monitor's configuration for loopback
 * (`monitor.allowPrivateNetworks` on, no per-host delay unless asked), a fake clock, and readers
 * of what a pass wrote.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument } from '../../src/import/index.js';
import { silentLogger } from '../../src/logger.js';
import { runMonitorPass, type PassOptions } from '../../src/workers/monitor.js';
import { account, project, site } from '../helpers/fixture.js';
import { sqlAll, sqlGet } from '../helpers/sql.js';
import { freshStore } from '../helpers/stores.js';

export const T0 = '2026-03-01T09:00:00.000Z';
export const TARGET = 'https://www.acme.test/guide/';

export interface BacklinkSpec {
  id: string;
  sourceUrl: string;
  targetUrl?: string;
  status?: string;
  observedAnchor?: string | null;
  lastCheckedAt?: string | null;
  checks?: Record<string, unknown>[];
  siteId?: string;
}

/** The import document of one account with two sites and `backlinks`. */
export function documentOf(backlinks: BacklinkSpec[]) {
  const stamp = { createdAt: T0, updatedAt: T0 };
  return {
    accounts: [
      account('acct_m', { email: 'm@acme.test', name: 'M', planExpiresAt: '2099-01-01T00:00:00.000Z', ...stamp }),
    ],
    projects: [project('prj_m', 'acct_m', { name: 'Monitor', ...stamp })],
    sites: [
      site('site_m', 'prj_m', { name: 'Acme', domain: 'acme.test', url: 'https://acme.test/', ...stamp }),
      site('site_n', 'prj_m', { name: 'Other', domain: 'other.test', url: 'https://other.test/', ...stamp }),
    ],
    backlinks: backlinks.map((b) => ({
      id: b.id,
      siteId: b.siteId ?? 'site_m',
      source: 'outreach',
      acquisitionOrigin: 'unknown',
      sourceUrl: b.sourceUrl,
      targetUrl: b.targetUrl ?? TARGET,
      category: 'resource_page',
      status: b.status ?? 'pending',
      observedAnchor: b.observedAnchor ?? null,
      lastCheckedAt: b.lastCheckedAt ?? null,
      ...stamp,
      checks: b.checks ?? [],
    })),
  };
}

export interface MonitorFixture {
  store: Store;
  clock: FakeClock;
  config: Config;
  dir: string;
  /** The store's location: a SQLite file, or a PostgreSQL URL (test/helpers/stores.ts). */
  dbPath: string;
  pass(options?: PassOptions, monitor?: Record<string, unknown>): ReturnType<typeof runMonitorPass>;
  backlink(id: string): Promise<{
    status: string;
    observed_anchor: string | null;
    last_checked_at: string | null;
    updated_at: string;
  }>;
  checks(id: string): Promise<CheckRow[]>;
  close(): Promise<void>;
}

export interface CheckRow {
  id: string;
  status: string;
  requested_source_url: string;
  final_source_url: string | null;
  http_status: number | null;
  target_found: number;
  observed_target_url: string | null;
  observed_anchor: string | null;
  observed_rel: string;
  has_error: number;
  checked_at: string;
}

/**
 * Monitor settings for loopback tests, over `config.monitor`'s defaults. The timeout is generous:
 * the machine running the tests may be busy, and a robots.txt fetch that times out fails every
 * page of its host. The timeout test sets its own.
 */
export const LOOPBACK = {
  'monitor.allowPrivateNetworks': true,
  'monitor.perHostDelayMs': 0,
  'monitor.timeoutMs': 10_000,
};

export async function monitorFixture(
  backlinks: BacklinkSpec[],
  monitor: Record<string, unknown> = {},
): Promise<MonitorFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-api-monitor-'));
  const fresh = await freshStore(dir, 'empty');
  const dbPath = fresh.location;
  const store = await openStore(dbPath);
  await migrate(store);
  const clock = new FakeClock(Date.parse('2026-03-10T12:00:00.000Z'));
  await importDocument(store, documentOf(backlinks), { nowIso: isoAt(clock.now()) });
  const configWith = (extra: Record<string, unknown>) =>
    loadConfig(undefined, {}, { db: dbPath, ...LOOPBACK, ...monitor, ...extra });
  const config = configWith({});
  return {
    store,
    clock,
    config,
    dir,
    dbPath,
    pass: (options = {}, extra = {}) =>
      runMonitorPass({ store, clock, config: configWith(extra), logger: silentLogger }, options),
    backlink: async (id) =>
      (await sqlGet(store, 'SELECT * FROM backlinks WHERE id = ?', id)) as Awaited<
        ReturnType<MonitorFixture['backlink']>
      >,
    checks: (id) =>
      sqlAll<CheckRow>(
        store,
        'SELECT * FROM backlink_checks WHERE backlink_id = ? ORDER BY checked_at DESC, id DESC',
        id,
      ),
    async close() {
      await store.close();
      await fresh.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Every counter of `row_counts` for backlinks and checks equals a COUNT(*) of the rows, and every
 * backlink's newest check agrees with the backlink (status, last_checked_at): nothing half-written.
 */
export async function assertConsistent(store: Store): Promise<void> {
  const counted = async (sql: string) =>
    Object.fromEntries(
      ((await sqlAll(store, sql)) as { k: string; n: number }[])
        .filter((r) => Number(r.n) !== 0)
        .map((r) => [r.k, Number(r.n)]),
    );
  assert.deepEqual(
    await counted("SELECT scope || '|' || key AS k, n FROM row_counts WHERE tbl = 'backlinks' ORDER BY k"),
    await counted(
      "SELECT k, count(*) AS n FROM (SELECT project_id || '|project:' || status AS k FROM backlinks UNION ALL SELECT site_id || '|site:' || status FROM backlinks) AS u GROUP BY k ORDER BY k",
    ),
    'backlink counters',
  );
  assert.deepEqual(
    await counted("SELECT scope || '|' || key AS k, n FROM row_counts WHERE tbl = 'backlink_checks' ORDER BY k"),
    await counted(
      "SELECT backlink_id || '|backlink' AS k, count(*) AS n FROM backlink_checks GROUP BY backlink_id ORDER BY k",
    ),
    'check counters',
  );
  const mismatched = await sqlAll(
    store,
    `SELECT b.id FROM backlinks b JOIN backlink_checks c ON c.id = (SELECT id FROM backlink_checks WHERE backlink_id = b.id ORDER BY checked_at DESC, id DESC LIMIT 1)
       WHERE c.checked_at > '2026-03-09' AND (c.status IS DISTINCT FROM b.status OR c.checked_at IS DISTINCT FROM b.last_checked_at)`,
  );
  assert.deepEqual(mismatched, [], 'backlinks whose newest check disagrees with them');
}
