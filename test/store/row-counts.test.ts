/**
 * The row counters of sql/sqlite/0003_row_counts.sql stay exact: after the first import (counters
 * rebuilt at the end), a re-import that replaces and moves records, a small import into larger
 * tables (counted by the triggers), a refused import, writes through the API (contact
 * discovery, a reply and its delivery, draft edit and regeneration, verification), status
 * updates and moves in SQL, and deletions with their cascades — and the migration's backfill
 * counts a store that already holds data.
 *
 * Each check compares, for every scope and every filter combination, the `total` the
 * repositories return (and the pipeline's counts) with a COUNT(*) written here, and the whole
 * `row_counts` table with counters computed here from the rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { openStore, type Store } from '../../src/db/connection.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { ImportError, importDocument } from '../../src/import/index.js';
import { listBacklinkChecks, listBacklinks } from '../../src/repos/backlinks.js';
import { listBlockedDomains } from '../../src/repos/blocked-domains.js';
import { listProspectContacts } from '../../src/repos/contacts.js';
import { listDiscoveryJobs, listDiscoveryQueries } from '../../src/repos/discovery-jobs.js';
import { listDrafts } from '../../src/repos/drafts.js';
import { listKeywords } from '../../src/repos/keywords.js';
import { listLeads, type LeadFilter } from '../../src/repos/leads.js';
import { getPipeline } from '../../src/repos/pipeline.js';
import { listProspects } from '../../src/repos/prospects.js';
import { COUNTED_TABLES } from '../../src/db/row-counters.js';
import { backfillStatements } from '../../src/db/sqlite/row-counters.js';
import { listThreadMessages, listThreads } from '../../src/repos/threads.js';
import {
  BACKLINK_STATUSES,
  DRAFT_STATUSES,
  LEAD_STAGES,
  LEAD_TIERS,
  LEAD_TYPES,
  LEAD_VIEWS,
  PROSPECT_STATUSES,
  THREAD_STATUSES,
} from '../../src/domain/enums.js';
import { SMALL } from '../helpers/fixture.js';
import { sqlScript } from '../helpers/sql.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { sqliteStore } from '../helpers/stores.js';

const clone = <T>(value: T): T => structuredClone(value);
const NOW = '2026-03-10T12:00:00.000Z';

const all = <T = Record<string, any>>(store: Store, sql: string, ...params: unknown[]) =>
  sqliteStore(store)
    .sqlite.prepare(sql)
    .all(...params) as T[];
const countOf = (store: Store, table: string, where: Record<string, unknown>, extra = '') => {
  const entries = Object.entries(where).filter(([, v]) => v !== undefined);
  const clause = [...entries.map(([c]) => `${c} = ?`), ...(extra ? [extra] : [])].join(' AND ') || '1';
  return (
    sqliteStore(store)
      .sqlite.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${clause}`)
      .get(...entries.map(([, v]) => v)) as {
      n: number;
    }
  ).n;
};
const schemaVersion = (store: Store) =>
  (sqliteStore(store).sqlite.prepare('PRAGMA schema_version').get() as { schema_version: number }).schema_version;
const countTriggers = (store: Store) =>
  all<{ name: string }>(
    store,
    "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_count\\_%' ESCAPE '\\' ORDER BY name",
  ).map((r) => r.name);

/**
 * The non-zero counters the rows of `store` call for, computed here from the key formats of
 * sql/sqlite/0003_row_counts.sql (not with its SQL), as `tbl|scope|key` → n.
 */
function expectedCounters(store: Store): Map<string, number> {
  const out = new Map<string, number>();
  const bump = (tbl: string, scope: string, key: string) =>
    out.set(`${tbl}|${scope}|${key}`, (out.get(`${tbl}|${scope}|${key}`) ?? 0) + 1);
  for (const tbl of ['backlinks', 'prospects'] as const) {
    for (const r of all(store, `SELECT project_id, site_id, status FROM ${tbl}`)) {
      bump(tbl, r.project_id, `project:${r.status}`);
      bump(tbl, r.site_id, `site:${r.status}`);
    }
  }
  for (const tbl of ['drafts', 'threads'] as const)
    for (const r of all(store, `SELECT site_id, status FROM ${tbl}`)) bump(tbl, r.site_id, `site:${r.status}`);
  for (const r of all(store, 'SELECT backlink_id FROM backlink_checks'))
    bump('backlink_checks', r.backlink_id, 'backlink');
  for (const r of all(store, 'SELECT prospect_id FROM contacts')) bump('contacts', r.prospect_id, 'prospect');
  for (const r of all(store, 'SELECT site_id FROM keywords')) bump('keywords', r.site_id, 'site');
  for (const r of all(store, 'SELECT project_id FROM blocked_domains'))
    bump('blocked_domains', r.project_id, 'project');
  for (const r of all(store, 'SELECT site_id FROM discovery_jobs')) bump('discovery_jobs', r.site_id, 'site');
  for (const r of all(store, 'SELECT job_id, started_at FROM discovery_queries'))
    bump('discovery_queries', r.job_id, `job:${r.started_at === null ? 0 : 1}`);
  for (const r of all(store, 'SELECT thread_id, sent_at FROM thread_messages'))
    bump('thread_messages', r.thread_id, `thread:${r.sent_at === null ? 0 : 1}`);
  for (const r of all(store, 'SELECT project_id, site_id, dismissed, tier, stage, lead_type, platform FROM leads')) {
    for (const [kind, scope] of [
      ['project', r.project_id],
      ['site', r.site_id],
    ] as const) {
      bump('leads', scope, `${kind}:${r.dismissed}:${r.tier}:${r.stage}:${r.lead_type}`);
      bump('leads', scope, `${kind}:${r.dismissed}:${r.tier}:${r.stage}:${r.lead_type}:platform=${r.platform}`);
    }
  }
  return out;
}

/** `row_counts` is exactly what the rows call for: no missing, extra, drifted or negative counter. */
function assertCountersMatchRows(store: Store): void {
  const actual = new Map(
    all<{ tbl: string; scope: string; key: string; n: number }>(
      store,
      'SELECT tbl, scope, key, n FROM row_counts WHERE n <> 0',
    ).map((r) => [`${r.tbl}|${r.scope}|${r.key}`, r.n]),
  );
  const sorted = (m: Map<string, number>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));
  assert.deepEqual(sorted(actual), sorted(expectedCounters(store)));
  assert.deepEqual(
    all(store, 'SELECT DISTINCT tbl FROM row_counts').filter(
      (r) => !(COUNTED_TABLES as readonly string[]).includes(r.tbl),
    ),
    [],
    'counters of a table that is not counted',
  );
}

type LeadRowLite = {
  project_id: string;
  site_id: string;
  dismissed: number;
  tier: string;
  stage: string;
  lead_type: string;
  platform: string;
};

/** The leads a filter admits, counted here from the rows: decisions.md §6 for the views. */
function leadCount(leads: readonly LeadRowLite[], f: LeadFilter): number {
  let n = 0;
  for (const r of leads) {
    if (f.siteId !== undefined ? r.site_id !== f.siteId : r.project_id !== f.projectId) continue;
    if (r.dismissed !== (f.view === 'archived' ? 1 : 0)) continue;
    if (f.view === 'quality' && r.tier !== 'hot' && r.tier !== 'warm') continue;
    if ((f.tier !== undefined && r.tier !== f.tier) || (f.stage !== undefined && r.stage !== f.stage)) continue;
    if ((f.leadType !== undefined && r.lead_type !== f.leadType) || (f.platform && r.platform !== f.platform)) continue;
    n++;
  }
  return n;
}

const maybe = <T>(values: readonly T[]) => [undefined, ...values];

/**
 * Every list total the repositories give, for every scope and filter, against COUNT(*); and the
 * pipeline of every site against GROUP BY.
 *
 * Leads: with `leadMatrix`, every combination of view, tier, stage, leadType and platform (the
 * choice of counter keys); without it, each view with each filter alone. A total is the sum of
 * the counters its filter's keys name, and the keys depend on the filter only: the matrix runs
 * once, after the bulk import of 40 leads in varied combinations, and every other state is checked
 * by the counters matching the rows exactly (`assertCountersMatchRows`, on every call) and the
 * single filters.
 */
async function assertTotalsExact(store: Store, { leadMatrix = false } = {}): Promise<void> {
  assertCountersMatchRows(store);
  const leads = all<LeadRowLite>(
    store,
    'SELECT project_id, site_id, dismissed, tier, stage, lead_type, platform FROM leads',
  );
  const db: Kysely<Database> = store.db;
  const projects = all<{ id: string }>(store, 'SELECT id FROM projects').map((r) => r.id);
  const platforms = [
    ...all<{ platform: string }>(store, 'SELECT DISTINCT platform FROM leads').map((r) => r.platform),
    'nowhere',
  ];
  for (const projectId of projects) {
    const sites = all<{ id: string }>(store, 'SELECT id FROM sites WHERE project_id = ?', projectId).map((r) => r.id);
    assert.equal(
      (await listBlockedDomains(db, projectId, 1, 0)).total,
      countOf(store, 'blocked_domains', { project_id: projectId }),
      `blocked domains of ${projectId}`,
    );
    for (const siteId of maybe(sites)) {
      const scope = siteId !== undefined ? { site_id: siteId } : { project_id: projectId };
      for (const status of maybe(BACKLINK_STATUSES)) {
        const { total } = await listBacklinks(db, { projectId, siteId, status }, 1, 0);
        assert.equal(
          total,
          countOf(store, 'backlinks', { ...scope, status }),
          `backlinks ${projectId} ${siteId} ${status}`,
        );
      }
      for (const status of maybe(PROSPECT_STATUSES)) {
        const { total } = await listProspects(db, { projectId, siteId, status }, 1, 0);
        assert.equal(
          total,
          countOf(store, 'prospects', { ...scope, status }),
          `prospects ${projectId} ${siteId} ${status}`,
        );
      }
      for (const view of LEAD_VIEWS) {
        for (const tier of maybe(LEAD_TIERS)) {
          for (const stage of maybe(LEAD_STAGES)) {
            for (const leadType of maybe(LEAD_TYPES)) {
              for (const platform of maybe(platforms)) {
                // With a platform, one value of stage and of leadType stands for all (same keys, one more segment).
                if (
                  platform !== undefined &&
                  ((stage ?? 'to_qualify') !== 'to_qualify' || (leadType ?? 'other') !== 'other')
                )
                  continue;
                const filters = [tier, stage, leadType, platform].filter((v) => v !== undefined).length;
                if (!leadMatrix && filters > 1) continue;
                const filter: LeadFilter = { projectId, siteId, view, tier, stage, leadType, platform };
                const { total } = await listLeads(db, filter, 1, 0);
                assert.equal(total, leadCount(leads, filter), `leads ${JSON.stringify(filter)}`);
              }
            }
          }
        }
      }
    }
    for (const siteId of sites) {
      for (const status of maybe(DRAFT_STATUSES)) {
        assert.equal(
          (await listDrafts(db, { siteId, status }, 1, 0)).total,
          countOf(store, 'drafts', { site_id: siteId, status }),
          `drafts ${siteId} ${status}`,
        );
      }
      assert.equal(
        (await listThreads(db, siteId, 1, 0)).total,
        countOf(store, 'threads', { site_id: siteId }),
        `threads ${siteId}`,
      );
      assert.equal(
        (await listKeywords(db, siteId, 1, 0)).total,
        countOf(store, 'keywords', { site_id: siteId }),
        `keywords ${siteId}`,
      );
      assert.equal(
        (await listDiscoveryJobs(db, siteId, 1, 0)).total,
        countOf(store, 'discovery_jobs', { site_id: siteId }),
        `jobs ${siteId}`,
      );
      const pipeline = await getPipeline(db, siteId);
      for (const [table, statuses] of [
        ['prospects', PROSPECT_STATUSES],
        ['drafts', DRAFT_STATUSES],
        ['threads', THREAD_STATUSES],
        ['backlinks', BACKLINK_STATUSES],
      ] as const) {
        const expected = Object.fromEntries(
          statuses.map((s) => [s, countOf(store, table, { site_id: siteId, status: s })]),
        );
        assert.deepEqual(pipeline[table], expected, `pipeline ${siteId} ${table}`);
      }
    }
  }
  for (const { id } of all<{ id: string }>(store, 'SELECT id FROM backlinks')) {
    assert.equal(
      (await listBacklinkChecks(db, id, 1, 0)).total,
      countOf(store, 'backlink_checks', { backlink_id: id }),
      `checks of ${id}`,
    );
  }
  for (const { id } of all<{ id: string }>(store, 'SELECT id FROM prospects')) {
    assert.equal(
      (await listProspectContacts(db, id, 1, 0)).total,
      countOf(store, 'contacts', { prospect_id: id }),
      `contacts of ${id}`,
    );
  }
  // Two-part lists: the whole list in one page is every row, each once, started/sent ones first.
  for (const { id } of all<{ id: string }>(store, 'SELECT id FROM threads')) {
    const { items, total } = await listThreadMessages(db, id, 100, 0);
    assert.equal(total, countOf(store, 'thread_messages', { thread_id: id }), `messages of ${id}`);
    assert.deepEqual(
      items.map((m) => m.id).sort(),
      all<{ id: string }>(store, 'SELECT id FROM thread_messages WHERE thread_id = ?', id)
        .map((r) => r.id)
        .sort(),
    );
    const firstUnsent = items.findIndex((m) => m.sentAt === null);
    assert.equal(
      firstUnsent === -1 ? items.length : firstUnsent,
      countOf(store, 'thread_messages', { thread_id: id }, 'sent_at IS NOT NULL'),
      `sent messages of ${id}`,
    );
  }
  for (const { id } of all<{ id: string }>(store, 'SELECT id FROM discovery_jobs')) {
    const { items, total } = await listDiscoveryQueries(db, id, 100, 0);
    assert.equal(total, countOf(store, 'discovery_queries', { job_id: id }), `queries of ${id}`);
    assert.equal(items.length, total);
    const firstPending = items.findIndex((q) => q.startedAt === null);
    assert.equal(
      firstPending === -1 ? items.length : firstPending,
      countOf(store, 'discovery_queries', { job_id: id }, 'started_at IS NOT NULL'),
      `started queries of ${id}`,
    );
  }
}

/** A backlink of the import format. */
const backlink = (id: string, siteId: string, status: string, checks = 0) => ({
  id,
  siteId,
  source: 'outreach',
  acquisitionOrigin: 'unknown',
  sourceUrl: `https://${id}.example.org/post`,
  targetUrl: 'https://blog.acme.test/',
  category: 'guest_post',
  status,
  observedAnchor: null,
  lastCheckedAt: null,
  createdAt: NOW,
  updatedAt: NOW,
  checks: Array.from({ length: checks }, (_, k) => ({
    id: `${id}_chk${k}`,
    status,
    httpStatus: 200,
    targetFound: true,
    hasError: k === 0,
    checkedAt: NOW,
  })),
});
const lead = (id: string, siteId: string, i: number) => ({
  id,
  siteId,
  platform: ['reddit', 'x', 'forum'][i % 3],
  kind: 'post',
  title: `Lead ${id}`,
  body: 'Looking for boots',
  authorHandle: `u_${id}`,
  score: i % 100,
  tier: LEAD_TIERS[i % 3],
  leadType: LEAD_TYPES[i % 4],
  stage: LEAD_STAGES[(i >> 1) % 4],
  dismissed: i % 5 === 0,
  redacted: false,
  postedAt: NOW,
  firstSeenAt: NOW,
});
const prospect = (id: string, siteId: string, status: string) => ({
  id,
  siteId,
  status,
  url: `https://${id}.example.org/`,
  domain: `${id}.example.org`,
  title: `Prospect ${id}`,
  createdAt: NOW,
  updatedAt: NOW,
});

describe('row counters stay exact', () => {
  let t: TestServer;
  let token: string;
  before(async () => {
    t = await startTestServer({
      fixture: 'small',
      config: { 'limits.requestsPerMinute': 0, 'outbox.pollIntervalMs': 3_600_000 },
    });
    token = await t.mintToken('acct_a');
  });
  after(() => t.close());

  it('has a trigger of each kind on every counted table', () => {
    assert.deepEqual(
      countTriggers(t.store),
      COUNTED_TABLES.flatMap((tbl) => ['delete', 'insert', 'update'].map((k) => `${tbl}_count_${k}`)).sort(),
    );
  });

  it('after the first import (counters rebuilt at the end of its transaction)', async () => {
    await assertTotalsExact(t.store);
  });

  it('after a re-import that replaces records, moves them between sites and projects and replaces their children', async () => {
    const doc = clone(SMALL);
    delete doc.tokens;
    const byId = (collection: string, id: string) => doc[collection]!.find((r) => r.id === id)!;
    Object.assign(byId('backlinks', 'bl_a1_1'), { status: 'lost', siteId: 'site_a2' });
    Object.assign(byId('backlinks', 'bl_a2_1'), { siteId: 'site_a3' }); // to project prj_a2
    byId('backlinks', 'bl_a1_2').checks = [1, 2, 3].map((k) => ({
      id: `chk_re_${k}`,
      status: 'error',
      httpStatus: 500,
      hasError: true,
      checkedAt: NOW,
    }));
    byId('backlinks', 'bl_a1_4').checks = [];
    Object.assign(byId('prospects', 'prs_a1_2'), { status: 'proposed' });
    Object.assign(byId('leads', 'ld_a1_1'), { tier: 'explore', dismissed: true, platform: 'hackernews' });
    Object.assign(byId('leads', 'ld_a1_5'), { stage: 'closed', leadType: 'competitor', siteId: 'site_a2' });
    Object.assign(byId('drafts', 'drf_a1_1'), { status: 'approved' });
    Object.assign(byId('threads', 'thr_a1_1'), { status: 'closed' });
    byId('threads', 'thr_a1_1').messages.push({
      id: 'tm_re_queued',
      direction: 'outbound',
      status: 'queued',
      body: 'Queued again',
      sentAt: null,
    });
    byId('discoveryJobs', 'job_a1_1').queries = [
      { id: 'dq_re_1', query: 'boots', status: 'completed', startedAt: NOW },
      { id: 'dq_re_2', query: 'tents', status: 'pending', startedAt: null },
    ];
    Object.assign(byId('contacts', 'ct_a1_3'), { prospectId: 'prs_a1_1' });
    Object.assign(byId('drafts', 'drf_a1_3'), { prospectId: 'prs_a1_1' }); // its contact's new prospect
    Object.assign(byId('keywords', 'kw_a1_2'), { siteId: 'site_a2' });
    Object.assign(byId('blockedDomains', 'bd_a1_2'), { projectId: 'prj_a2' });
    const version = schemaVersion(t.store);
    await importDocument(t.store, doc, { nowIso: NOW });
    assert.notEqual(
      schemaVersion(t.store),
      version,
      'a whole-fixture import is a bulk load: triggers dropped and recreated',
    );
    assert.equal(countTriggers(t.store).length, COUNTED_TABLES.length * 3);
    await assertTotalsExact(t.store);
  });

  it('after a small import into larger tables (counted row by row by the triggers)', async () => {
    const bulk = {
      backlinks: Array.from({ length: 40 }, (_, i) =>
        backlink(`bl_bulk_${i}`, i % 2 ? 'site_a1' : 'site_a2', BACKLINK_STATUSES[i % 7]!, 1 + (i % 3)),
      ),
      leads: Array.from({ length: 40 }, (_, i) => lead(`ld_bulk_${i}`, i % 2 ? 'site_a1' : 'site_a2', i)),
      prospects: Array.from({ length: 40 }, (_, i) =>
        prospect(`prs_bulk_${i}`, i % 2 ? 'site_a1' : 'site_a2', PROSPECT_STATUSES[i % 3]!),
      ),
    };
    await importDocument(t.store, bulk, { nowIso: NOW });
    await assertTotalsExact(t.store, { leadMatrix: true });

    const version = schemaVersion(t.store);
    await importDocument(
      t.store,
      {
        backlinks: [backlink('bl_bulk_0', 'site_a3', 'closed', 2), backlink('bl_small_new', 'site_a1', 'live', 1)],
        leads: [{ ...lead('ld_bulk_1', 'site_a2', 7), dismissed: false, tier: 'warm', platform: 'mastodon' }],
        prospects: [prospect('prs_bulk_2', 'site_a3', 'blocked')],
      },
      { nowIso: NOW },
    );
    assert.equal(schemaVersion(t.store), version, 'a small import keeps the triggers');
    await assertTotalsExact(t.store);
  });

  it('after a refused import: the triggers are back and nothing changed', async () => {
    const before = all(t.store, 'SELECT * FROM row_counts ORDER BY tbl, scope, key');
    const version = schemaVersion(t.store);
    const doc = {
      backlinks: [
        ...Array.from({ length: 60 }, (_, i) => backlink(`bl_refused_${i}`, 'site_a1', 'live', 1)),
        backlink('bl_bad', 'site_a1', 'nonsense'),
      ],
    };
    await assert.rejects(importDocument(t.store, doc, { nowIso: NOW }), ImportError);
    assert.equal(schemaVersion(t.store), version);
    assert.equal(countTriggers(t.store).length, COUNTED_TABLES.length * 3);
    assert.deepEqual(all(t.store, 'SELECT * FROM row_counts ORDER BY tbl, scope, key'), before);
    await assertTotalsExact(t.store);
  });

  it('after writes through the API: contact discovery, a reply and its delivery, draft edit and regeneration, verification', async () => {
    await sqlScript(
      t.store,
      `
      INSERT INTO prospects (id, site_id, project_id, status, url, domain, title, contact_paths, created_at, updated_at) VALUES
        ('prs_api_new', 'site_a1', 'prj_a1', 'proposed', 'https://fresh.example/', 'fresh.example', 'Fresh', '[{"email":"editor@fresh.example","label":"Editor"}]', '${NOW}', '${NOW}'),
        ('prs_api_queued', 'site_a1', 'prj_a1', 'proposed', 'https://blog.queued.test/', 'blog.queued.test', 'Later', '[{"url":"mailto:later@blog.queued.test"}]', '${NOW}', '${NOW}');`,
    );
    const created = await t.request('POST', '/projects/prj_a1/prospects/prs_api_new/contact-discovery', {
      token,
      body: { idempotencyKey: 'rc-discovery-1' },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.data.outcome, 'created');
    const queued = await t.request('POST', '/projects/prj_a1/prospects/prs_api_queued/contact-discovery', {
      token,
      body: { idempotencyKey: 'rc-discovery-2' },
    });
    assert.equal(queued.status, 202, JSON.stringify(queued.body));
    await assertTotalsExact(t.store);
    await t.server.workers.discovery.drain();
    assert.equal(countOf(t.store, 'contacts', { prospect_id: 'prs_api_queued' }), 1);

    const replied = await t.request('POST', '/projects/prj_a1/sites/site_a1/threads/thr_a1_2/replies', {
      token,
      body: { body: 'Thanks, here is the link you asked for.', idempotencyKey: 'rc-reply-1' },
    });
    assert.equal(replied.status, 202, JSON.stringify(replied.body));
    assert.equal(countOf(t.store, 'thread_messages', { thread_id: 'thr_a1_2' }), 2);
    await assertTotalsExact(t.store); // queued, or already delivered by the woken outbox worker
    await t.server.workers.outbox.drain();
    assert.equal(countOf(t.store, 'thread_messages', { thread_id: 'thr_a1_2' }, 'sent_at IS NULL'), 0, 'delivered');

    const edited = await t.request('PATCH', '/projects/prj_a1/sites/site_a1/drafts/drf_a1_2', {
      token,
      body: { subject: 'A better subject', body: 'A body long enough to be accepted by the rules.' },
    });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    const regenerated = await t.request('POST', '/projects/prj_a1/sites/site_a1/drafts/drf_a1_2/regenerate', {
      token,
      headers: { 'idempotency-key': 'rc-regenerate-1' },
      body: { instruction: 'Shorter, please' },
    });
    assert.equal(regenerated.status, 200, JSON.stringify(regenerated.body));
    const verified = await t.request('POST', '/projects/prj_a1/sites/site_a1/contacts/ct_a1_1/verify', {
      token,
      body: { idempotencyKey: 'rc-verify-1' },
    });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    await assertTotalsExact(t.store);
  });

  it('after status updates and moves in SQL', async () => {
    await sqlScript(
      t.store,
      `
      UPDATE backlinks SET status = 'closed' WHERE status = 'live';
      UPDATE backlinks SET site_id = 'site_a3', project_id = 'prj_a2' WHERE id = 'bl_a1_3';
      UPDATE backlinks SET updated_at = '${NOW}';
      UPDATE backlink_checks SET backlink_id = 'bl_a1_3' WHERE backlink_id = 'bl_bulk_1';
      UPDATE prospects SET status = 'rejected' WHERE id IN ('prs_bulk_3', 'prs_bulk_4');
      UPDATE prospects SET site_id = 'site_a2' WHERE id = 'prs_bulk_5';
      UPDATE contacts SET prospect_id = 'prs_a1_2' WHERE id = 'ct_a1_2';
      UPDATE drafts SET status = 'changes_requested' WHERE site_id = 'site_a1';
      UPDATE threads SET status = 'awaiting_reply', updated_at = '${NOW}' WHERE id = 'thr_a1_1';
      UPDATE thread_messages SET sent_at = NULL, status = 'failed' WHERE id = 'tm_a1_1';
      UPDATE thread_messages SET sent_at = '${NOW}', status = 'sent' WHERE id = 'tm_re_queued';
      UPDATE discovery_queries SET started_at = '${NOW}' WHERE id = 'dq_re_2';
      UPDATE discovery_queries SET started_at = NULL WHERE id = 'dq_re_1';
      UPDATE discovery_jobs SET site_id = 'site_a2' WHERE id = 'job_a1_2';
      UPDATE keywords SET site_id = 'site_a1' WHERE id = 'kw_a1_2';
      UPDATE blocked_domains SET project_id = 'prj_a1' WHERE id = 'bd_a1_2';
      UPDATE leads SET dismissed = 1 - dismissed WHERE id LIKE 'ld_bulk_1%';
      UPDATE leads SET tier = 'hot', stage = 'to_contact' WHERE id LIKE 'ld_bulk_2%';
      UPDATE leads SET lead_type = 'other', platform = 'reddit' WHERE id LIKE 'ld_bulk_3%';
      UPDATE leads SET site_id = 'site_a3', project_id = 'prj_a2' WHERE id = 'ld_bulk_4';
      UPDATE leads SET score = score + 1, title = 'retitled';`,
    );
    await assertTotalsExact(t.store);
  });

  it('after deletions, with their ON DELETE CASCADE', async () => {
    await sqlScript(
      t.store,
      `
      DELETE FROM backlinks WHERE id = 'bl_bulk_2';
      DELETE FROM backlink_checks WHERE id = 'chk_re_1';
      DELETE FROM leads WHERE id = 'ld_bulk_5';
      DELETE FROM thread_messages WHERE id = 'tm_a1_2';
      DELETE FROM discovery_jobs WHERE id = 'job_a1_1';
      DELETE FROM contacts WHERE id = 'ct_a1_1';`,
    ); // cascades to its drafts, threads and their messages
    await assertTotalsExact(t.store);
    await sqlScript(t.store, "DELETE FROM prospects WHERE id = 'prs_a1_1'"); // contacts, drafts, threads, messages
    await assertTotalsExact(t.store);
    await sqlScript(t.store, "DELETE FROM sites WHERE id = 'site_a2'"); // everything of the site
    await assertTotalsExact(t.store);
    await sqlScript(t.store, "DELETE FROM projects WHERE id = 'prj_a2'"); // its sites and everything below
    await assertTotalsExact(t.store);
    await sqlScript(t.store, "DELETE FROM accounts WHERE id = 'acct_b'"); // its projects and everything below
    await assertTotalsExact(t.store);
    assert.equal(countOf(t.store, 'backlinks', { project_id: 'prj_b1' }), 0);
  });
});

describe('the migration backfills the counters of a store that already holds data', () => {
  it("is the one definition of a recount: a bulk import runs the migration's own backfill statements", () => {
    const migration = loadMigrations().find((m) => m.version === 3)!.sql;
    const backfill = migration.slice(0, migration.indexOf('CREATE TRIGGER')).match(/INSERT INTO row_counts[^;]+;/g)!;
    const recount = Object.values(backfillStatements())
      .join('\n')
      .match(/INSERT INTO row_counts[^;]+;/g)!;
    assert.deepEqual(Object.keys(backfillStatements()).sort(), [...COUNTED_TABLES].sort());
    assert.deepEqual([...recount].sort(), [...backfill].sort());
  });

  it('counts every row present when it runs', async () => {
    // A store at version 2 with data: the tables of a fully imported store copied in, then upgraded.
    const source = await startTestServer({ fixture: 'small' });
    await importDocument(
      source.store,
      {
        backlinks: Array.from({ length: 30 }, (_, i) =>
          backlink(`bl_old_${i}`, 'site_a1', BACKLINK_STATUSES[i % 7]!, i % 3),
        ),
      },
      { nowIso: NOW },
    );
    const store = await openStore(':memory:');
    try {
      const migrations = loadMigrations();
      await migrate(
        store,
        migrations.filter((m) => m.version <= 2),
      );
      sqliteStore(store).sqlite.exec('PRAGMA foreign_keys = OFF');
      sqliteStore(store).sqlite.exec(`ATTACH DATABASE '${sqliteStore(source.store).path}' AS src`);
      const tables = all<{ name: string }>(
        store,
        "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'",
      );
      // The columns of the version-2 tables (later migrations add columns to the source's).
      for (const { name } of tables) {
        const columns = all<{ name: string }>(store, `PRAGMA main.table_info(${name})`)
          .map((c) => `"${c.name}"`)
          .join(', ');
        sqliteStore(store).sqlite.exec(`INSERT INTO main.${name} (${columns}) SELECT ${columns} FROM src.${name}`);
      }
      sqliteStore(store).sqlite.exec('DETACH DATABASE src');
      sqliteStore(store).sqlite.exec('PRAGMA foreign_keys = ON');
      assert.ok(countOf(store, 'backlinks', {}) > 30);
      assert.deepEqual(
        await migrate(store, migrations),
        migrations.filter((m) => m.version > 2).map((m) => m.version),
      );
      await assertTotalsExact(store);
    } finally {
      await store.close();
      await source.close();
    }
  });
});
