/**
 * GET /{group}/{id}/sites/{siteId}/discovery-jobs and /discovery-jobs/{jobId}: fields, order
 * (jobs newest first; queries oldest startedAt first, not started last), paging across the two
 * parts, 404s inside the account.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { T, routeFixture } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';

const job = (id: string, siteId: string, createdAt: string, extra: Record<string, unknown> = {}) => ({
  id,
  siteId,
  type: 'prospect_discovery',
  status: 'completed',
  createdAt,
  updatedAt: createdAt,
  ...extra,
});
const query = (id: string, startedAt: string | null, extra: Record<string, unknown> = {}) => ({
  id,
  query: `query ${id}`,
  status: startedAt ? 'completed' : 'pending',
  startedAt,
  ...extra,
});

const DOC = routeFixture({
  discoveryJobs: [
    job('job_1', 'site_a1', T(1), {
      currentAttempt: 1,
      maxAttempts: 3,
      scheduledAt: T(1),
      completedAt: '2026-03-01T13:00:00+02:00',
      updatedAt: T(2),
      queries: [
        // Out of order on purpose. Started: q_b and q_d tie (T2) → id; then q_a (T3). Not started: q_c, q_e by id.
        query('q_e', null),
        query('q_a', T(3), {
          opportunityType: 'guest_post',
          rawResultCount: 40,
          uniqueCandidateCount: 25,
          qualifiedCount: 7,
          completedAt: T(3, 11),
        }),
        query('q_d', T(2), { status: 'failed', errorCode: 'SEARCH_TIMEOUT', hasError: true }),
        query('q_c', null),
        query('q_b', T(2)),
      ],
    }),
    job('job_2', 'site_a1', T(2), { status: 'running', currentAttempt: 2 }),
    // Ties job_2 on createdAt: id descending puts job_3 first.
    job('job_3', 'site_a1', T(2), {
      type: 'contact_discovery',
      status: 'queued',
      subjectType: 'prospect',
      subjectId: 'prs_1',
      scheduledAt: T(4),
    }),
    job('job_4', 'site_a1', T(3), { status: 'canceled', canceledAt: T(3, 12) }),
    job('job_a2', 'site_a2', T(5)),
    job('job_a3', 'site_a3', T(5)),
    job('job_b', 'site_b1', T(5), { queries: [query('q_bb', T(5))] }),
  ],
});

const JOB_ORDER = ['job_4', 'job_3', 'job_2', 'job_1'];
const QUERY_ORDER = ['q_b', 'q_d', 'q_a', 'q_c', 'q_e'];

const JOB_1 = {
  id: 'job_1',
  type: 'prospect_discovery',
  status: 'completed',
  subjectType: null,
  subjectId: null,
  currentAttempt: 1,
  maxAttempts: 3,
  scheduledAt: T(1),
  canceledAt: null,
  completedAt: T(1, 11),
  createdAt: T(1),
  updatedAt: T(2),
};

describe('discovery jobs', () => {
  let t: TestServer;
  let token: string;
  const ids = (items: { id: string }[]) => items.map((d) => d.id);
  const LIST = '/projects/prj_a1/sites/site_a1/discovery-jobs';
  const DETAIL = `${LIST}/job_1`;

  before(async () => ({ t, token } = await startRouteServer(DOC, ['prospects:read'])));
  after(() => t?.close());

  describe('GET /sites/{siteId}/discovery-jobs', () => {
    it("lists the site's jobs newest first with every field", async () => {
      const res = await t.get(LIST, token);
      assert.equal(res.status, 200);
      assert.deepEqual(ids(res.body.data.data), JOB_ORDER);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 4, hasMore: false });
      assert.deepEqual(res.body.data.data[3], JOB_1);
      assert.deepEqual(res.body.data.data[1], {
        id: 'job_3',
        type: 'contact_discovery',
        status: 'queued',
        subjectType: 'prospect',
        subjectId: 'prs_1',
        currentAttempt: 0,
        maxAttempts: 3,
        scheduledAt: T(4),
        canceledAt: null,
        completedAt: null,
        createdAt: T(2),
        updatedAt: T(2),
      });
      assert.equal(res.body.data.data[0].canceledAt, T(3, 12));
      assert.equal('queries' in res.body.data.data[3], false, 'list items carry no queries');
    });

    it("answers 404 for another account's project, a site of another project and unknown ids", async () => {
      for (const path of [
        '/projects/prj_b1/sites/site_b1/discovery-jobs',
        '/workspaces/prj_b1/sites/site_b1/discovery-jobs',
        '/projects/prj_a1/sites/site_b1/discovery-jobs',
        '/projects/prj_a1/sites/site_a3/discovery-jobs',
        '/projects/prj_a1/sites/site_nope/discovery-jobs',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });

  describe('GET /sites/{siteId}/discovery-jobs/{jobId}', () => {
    it('returns the job, queryCount and its queries oldest startedAt first, not started last', async () => {
      const res = await t.get(DETAIL, token);
      assert.equal(res.status, 200);
      const { job: j, queryCount, queries, pagination, ...rest } = res.body.data;
      assert.deepEqual(rest, {});
      assert.deepEqual(j, JOB_1);
      assert.equal(queryCount, 5);
      assert.deepEqual(ids(queries), QUERY_ORDER);
      assert.deepEqual(pagination, { page: 1, limit: 25, total: 5, hasMore: false });
      assert.deepEqual(queries[2], {
        id: 'q_a',
        query: 'query q_a',
        status: 'completed',
        opportunityType: 'guest_post',
        rawResultCount: 40,
        uniqueCandidateCount: 25,
        qualifiedCount: 7,
        startedAt: T(3),
        completedAt: T(3, 11),
        errorCode: null,
        hasError: false,
      });
      assert.deepEqual(queries[1], {
        id: 'q_d',
        query: 'query q_d',
        status: 'failed',
        opportunityType: null,
        rawResultCount: 0,
        uniqueCandidateCount: 0,
        qualifiedCount: 0,
        startedAt: T(2),
        completedAt: null,
        errorCode: 'SEARCH_TIMEOUT',
        hasError: true,
      });
      assert.equal(queries[3].startedAt, null);
      assert.equal(queries[3].status, 'pending');
    });

    it('pages the queries across started and not started; queryCount counts them all', async () => {
      const pages: string[][] = [];
      for (let p = 1; p <= 3; p++) {
        const res = await t.get(`${DETAIL}?limit=2&page=${p}`, token);
        pages.push(ids(res.body.data.queries));
        assert.equal(res.body.data.queryCount, 5);
        assert.deepEqual(res.body.data.pagination, { page: p, limit: 2, total: 5, hasMore: p < 3 });
      }
      assert.deepEqual(pages, [['q_b', 'q_d'], ['q_a', 'q_c'], ['q_e']]);
      for (const limit of [1, 3, 4]) {
        const all: string[] = [];
        for (let p = 1; (p - 1) * limit < 5; p++)
          all.push(...ids((await t.get(`${DETAIL}?limit=${limit}&page=${p}`, token)).body.data.queries));
        assert.deepEqual(all, QUERY_ORDER, `limit ${limit}`);
      }
      let res = await t.get(`${DETAIL}?limit=1`, token);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 1, total: 5, hasMore: true });
      res = await t.get(`${DETAIL}?limit=5&page=2`, token);
      assert.deepEqual(res.body.data.queries, []);
      assert.deepEqual(res.body.data.pagination, { page: 2, limit: 5, total: 5, hasMore: false });
      assert.deepEqual(res.body.data.job, JOB_1);
      res = await t.get(`${LIST}/job_2`, token);
      assert.equal(res.body.data.queryCount, 0);
      assert.deepEqual(res.body.data.queries, []);
    });

    it('answers 404 for a job through the wrong site, project or account', async () => {
      for (const path of [
        '/projects/prj_a1/sites/site_a1/discovery-jobs/job_a2',
        '/projects/prj_a1/sites/site_a2/discovery-jobs/job_1',
        '/projects/prj_a1/sites/site_a1/discovery-jobs/job_a3',
        '/projects/prj_a1/sites/site_a3/discovery-jobs/job_a3',
        '/projects/prj_a1/sites/site_a1/discovery-jobs/job_b',
        '/projects/prj_b1/sites/site_b1/discovery-jobs/job_b',
        '/workspaces/prj_b1/sites/site_b1/discovery-jobs/job_b',
        '/projects/prj_a1/sites/site_a1/discovery-jobs/job_nope',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });
});
