/**
 * The query plans of the read endpoints: every GET operation, with every filter and every
 * combination of them, is driven through real HTTP; each SELECT it runs is captured
 * (`Store.traceQueries`) and its `EXPLAIN QUERY PLAN` checked:
 *   - no table is scanned: every read of a table is an index SEARCH (the FTS5 trigram tables of
 *     search are the one exception), so no request walks a whole table or index;
 *   - no temporary B-tree (for ORDER BY, GROUP BY or DISTINCT) and no automatic index: every
 *     list walks an index in its order;
 *   - counters are read by primary key, and list totals come from them wherever a counter set
 *     serves the filter (sql/sqlite/0003_row_counts.sql);
 *   - every index that serves a list is used by at least one request, so dropping one (or a
 *     planner change that stops using it) fails here.
 *
 * Without ANALYZE statistics the planner's choices do not depend on the number of rows, so the
 * small fixture gets the plans a large store gets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TracedQuery } from '../../src/db/connection.js';
import {
  BACKLINK_STATUSES,
  DRAFT_STATUSES,
  LEAD_STAGES,
  LEAD_TIERS,
  LEAD_TYPES,
  LEAD_VIEWS,
  PROSPECT_STATUSES,
} from '../../src/domain/enums.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { sqliteStore } from '../helpers/stores.js';

/** The indexes that serve a read endpoint (the others serve foreign keys, workers and writes). */
const LIST_INDEXES = [
  'projects_account_order',
  'sites_project_order',
  'keywords_site_order',
  'blocked_domains_project_order',
  'prospects_project_order',
  'prospects_project_status_order',
  'prospects_site_order',
  'prospects_site_status_order',
  'contacts_prospect_order',
  'drafts_site_order',
  'drafts_site_status_order',
  'threads_site_order',
  'threads_site_provider_order',
  'thread_messages_thread_order',
  'thread_messages_unsent_order',
  'email_connections_site_order',
  'email_senders_site_order',
  'discovery_jobs_site_order',
  'discovery_queries_job_order',
  'leads_project_order',
  'leads_site_order',
  'leads_project_stage',
  'leads_site_stage',
  'leads_project_tier',
  'leads_site_tier',
  'leads_project_type',
  'leads_site_type',
  'leads_project_platform',
  'leads_site_platform',
  'backlinks_project_order',
  'backlinks_project_status_order',
  'backlinks_site_order',
  'backlinks_site_status_order',
  'backlink_checks_backlink_order',
];

/** Every subset of `items` (the empty one first). */
const subsets = <T>(items: readonly T[]): T[][] =>
  items.reduce<T[][]>((acc, item) => acc.concat(acc.map((s) => [...s, item])), [[]]);

const query = (params: Record<string, string>) => {
  const qs = new URLSearchParams(params).toString();
  return qs ? `?${qs}` : '';
};

/** The GET requests: every operation, under both path forms, with every filter combination. */
function requests(): string[] {
  const out = ['/me', '/projects', '/workspaces', '/projects?page=2&limit=1'];
  for (const g of ['/projects/prj_a1', '/workspaces/prj_a1']) {
    out.push(g, `${g}/sites`, `${g}/sites/site_a1`, `${g}/sites/site_a1/keywords`, `${g}/blocked-domains`);
    for (const f of subsets([{ siteId: 'site_a1' }, { status: 'live' }]))
      out.push(`${g}/backlinks${query(Object.assign({}, ...f))}`);
    out.push(
      `${g}/backlinks?pageSize=2&page=2`,
      `${g}/backlinks/bl_a1_1`,
      `${g}/backlinks/bl_a1_1?page=2&limit=1`,
      `${g}/backlinks/bl_a1_3`,
    );
    for (const search of [undefined, 'boots', 'bo', '']) {
      for (const f of subsets([{ siteId: 'site_a1' }, { status: 'proposed' }])) {
        out.push(`${g}/prospects${query(Object.assign(search === undefined ? {} : { search }, ...f))}`);
      }
    }
    out.push(
      `${g}/prospects/prs_a1_1`,
      `${g}/prospects/prs_a1_1/contacts`,
      `${g}/prospects/prs_a1_1/contacts?page=2&limit=1`,
    );
    out.push(`${g}/leads/ld_a1_1`);
    for (const f of subsets([{ status: 'draft' }]))
      out.push(`${g}/sites/site_a1/drafts${query(Object.assign({}, ...f))}`);
    out.push(
      `${g}/sites/site_a1/drafts/drf_a1_1`,
      `${g}/sites/site_a1/threads`,
      `${g}/sites/site_a1/threads?page=2&limit=1`,
    );
    // thr_a1_1 has two sent messages and (added below) two unsent ones: pages cover each part and the seam.
    for (const p of ['', '?limit=1', '?page=2&limit=2', '?page=3&limit=1', '?page=4&limit=1', '?page=9'])
      out.push(`${g}/sites/site_a1/threads/thr_a1_1/messages${p}`);
    out.push(`${g}/sites/site_a1/threads/gmail-thread-a1-1/messages`);
    out.push(`${g}/sites/site_a1/discovery-jobs`, `${g}/sites/site_a1/discovery-jobs?page=2&limit=1`);
    for (const p of ['', '?limit=2', '?page=2&limit=2', '?page=5&limit=1', '?page=9'])
      out.push(`${g}/sites/site_a1/discovery-jobs/job_a1_1${p}`);
    out.push(
      `${g}/sites/site_a1/discovery-jobs/job_a1_2`,
      `${g}/sites/site_a1/email-accounts`,
      `${g}/sites/site_a1/pipeline`,
    );
  }
  // Leads: every combination of the filters, with each view and each kind of search (the
  // values do not change a plan; every value of each list is requested once besides).
  const leadFilters = [
    { siteId: 'site_a1' },
    { stage: 'to_qualify' },
    { tier: 'hot' },
    { leadType: 'looking_for_solution' },
    { platform: 'reddit' },
  ];
  for (const view of LEAD_VIEWS) {
    for (const search of [undefined, 'boots', 'bo']) {
      for (const f of subsets(leadFilters))
        out.push(
          `/projects/prj_a1/leads${query(Object.assign({ view }, search === undefined ? {} : { search }, ...f))}`,
        );
    }
  }
  for (const g of ['/projects/prj_a1', '/workspaces/prj_a1']) {
    out.push(`${g}/leads`, `${g}/leads?page=2&limit=1&platform=`);
    for (const stage of LEAD_STAGES) out.push(`${g}/leads?view=all&stage=${stage}`);
    for (const tier of LEAD_TIERS) out.push(`${g}/leads?view=all&tier=${tier}`);
    for (const leadType of LEAD_TYPES) out.push(`${g}/leads?view=all&leadType=${leadType}`);
    for (const status of BACKLINK_STATUSES) out.push(`${g}/backlinks?status=${status}`);
    for (const status of PROSPECT_STATUSES) out.push(`${g}/prospects?status=${status}&siteId=site_a1`);
    for (const status of DRAFT_STATUSES) out.push(`${g}/sites/site_a1/drafts?status=${status}`);
  }
  return out;
}

interface Captured extends TracedQuery {
  request: string;
}

interface PlanLine {
  id: number;
  parent: number;
  detail: string;
}

describe('query plans of the read endpoints', () => {
  let t: TestServer;
  const captured: Captured[] = [];
  const requested: string[] = [];
  /** Each distinct statement (SQL and parameters) once, with the first request that ran it and its plan. */
  const plans: { request: string; sql: string; plan: PlanLine[] }[] = [];

  before(async () => {
    t = await startTestServer({ fixture: 'small', config: { 'limits.requestsPerMinute': 0 } });
    // The read endpoints' statements only: a worker's pass during a request would be taken for the request's.
    await t.server.workers.stop();
    // Rows the fixture lacks, so that the second part of two-part lists runs too: unsent thread
    // messages (queued, failed) and discovery queries not started yet.
    sqliteStore(t.store).sqlite.exec(`
      INSERT INTO thread_messages (id, thread_id, direction, status, body, sent_at, created_at, updated_at) VALUES
        ('tm_plan_q', 'thr_a1_1', 'outbound', 'queued', 'Queued reply body', NULL, '2026-03-08T09:00:00.000Z', '2026-03-08T09:00:00.000Z'),
        ('tm_plan_f', 'thr_a1_1', 'outbound', 'failed', 'Failed reply body', NULL, '2026-03-08T08:00:00.000Z', '2026-03-08T08:00:00.000Z');
      INSERT INTO discovery_queries (id, job_id, query, status, started_at) VALUES
        ('dq_plan_1', 'job_a1_1', 'hiking blogs', 'pending', NULL),
        ('dq_plan_2', 'job_a1_1', 'camping blogs', 'pending', NULL);`);
    const token = await t.mintToken('acct_a');
    let current = '';
    const stop = t.store.traceQueries((q) => captured.push({ ...q, request: current }));
    try {
      for (const path of requests()) {
        current = path;
        requested.push(path);
        const res = await t.get(path, token);
        assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
      }
    } finally {
      stop();
    }
    const seen = new Set<string>();
    for (const q of captured) {
      if (!/^\s*select\b/i.test(q.sql)) continue;
      const key = `${q.sql}\u0000${JSON.stringify(q.parameters)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const plan = sqliteStore(t.store)
        .sqlite.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
        .all(...q.parameters) as PlanLine[];
      plans.push({ request: q.request, sql: q.sql, plan });
    }
  });
  after(() => t.close());

  const show = (p: (typeof plans)[number]) => `${p.request}\n  ${p.sql}\n  ${p.plan.map((l) => l.detail).join('\n  ')}`;

  it('drives every GET operation of the OpenAPI document', () => {
    const paths = t.server.app.openapi.paths as Record<string, Record<string, unknown>>;
    const templates = Object.entries(paths)
      .filter(([, ops]) => 'get' in ops)
      .map(([path]) => path);
    assert.ok(templates.length > 30, 'the document lists the read operations');
    for (const template of templates) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?|$)`);
      assert.ok(
        requested.some((r) => pattern.test(r)),
        `no request for GET ${template}`,
      );
    }
    assert.ok(plans.length > 100, `${plans.length} distinct statements captured`);
  });

  it('scans no table: every read of a table is an index search (FTS5 tables and page subqueries aside)', () => {
    // A list that joins its page's rows walks the page (a co-routine over an index walk) in order.
    const subqueries = (plan: PlanLine[]) =>
      new Set(plan.flatMap((l) => /^(?:CO-ROUTINE|MATERIALIZE) (\S+)/.exec(l.detail)?.[1] ?? []));
    const isScan = (line: PlanLine, plan: PlanLine[]) => {
      const scanned = /^SCAN (\S+)/.exec(line.detail)?.[1];
      // `SCAN CONSTANT ROW`: a SELECT without FROM (the data cache's change stamp).
      return (
        scanned !== undefined &&
        line.detail !== 'SCAN CONSTANT ROW' &&
        !/ VIRTUAL TABLE /.test(line.detail) &&
        !subqueries(plan).has(scanned)
      );
    };
    const offending = plans.filter((p) => p.plan.some((l) => isScan(l, p.plan)));
    assert.deepEqual(offending.map(show), []);
  });

  it('builds no temporary B-tree and no automatic index: every list walks an index in its order', () => {
    const offending = plans.filter((p) => p.plan.some((l) => /TEMP B-TREE|AUTOMATIC/.test(l.detail)));
    assert.deepEqual(offending.map(show), []);
  });

  it('reads counters by primary key', () => {
    const counterReads = plans.filter((p) => /\brow_counts\b/.test(p.sql));
    assert.ok(counterReads.length > 0);
    const offending = counterReads.filter(
      (p) => !p.plan.some((l) => /^SEARCH row_counts USING PRIMARY KEY \(tbl=\? AND scope=\?/.test(l.detail)),
    );
    assert.deepEqual(offending.map(show), []);
  });

  it('counts rows only where no counter serves the filter: a search, and the (few) projects and sites of a scope', () => {
    const counts = plans.filter((p) => /\bcount\(/i.test(p.sql));
    const allowed = (sql: string) =>
      /from "(projects|sites)"/.test(sql) || (/from "(prospects|leads)"/.test(sql) && /\bMATCH\b|\binstr\(/.test(sql));
    assert.deepEqual(counts.filter((p) => !allowed(p.sql)).map(show), []);
  });

  it('uses every index that serves a list', () => {
    const used = new Set(
      plans.flatMap((p) =>
        p.plan.flatMap((l) => [...l.detail.matchAll(/USING (?:COVERING )?INDEX (\w+)/g)].map((m) => m[1]!)),
      ),
    );
    const existing = new Set(
      (
        sqliteStore(t.store).sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all() as {
          name: string;
        }[]
      ).map((r) => r.name),
    );
    assert.deepEqual(
      LIST_INDEXES.filter((name) => !existing.has(name)),
      [],
      'indexes missing from the schema',
    );
    assert.deepEqual(
      LIST_INDEXES.filter((name) => !used.has(name)),
      [],
      'indexes no request used',
    );
  });
});
