/**
 * GET /{group}/{id}/backlinks and /backlinks/{backlinkId}: fields, filters, the pageSize alias,
 * checks and hasCheckError, 404s inside the account.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKLINK_STATUSES } from '../../src/domain/enums.js';
import { fromFixture, routeFixture, SMALL, T } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';

const backlink = (
  id: string,
  siteId: string,
  status: string,
  createdAt: string,
  extra: Record<string, unknown> = {},
) => ({
  id,
  siteId,
  source: 'outreach',
  acquisitionOrigin: 'unknown',
  sourceUrl: `https://blog.example.org/${id}`,
  targetUrl: 'https://acme.test/',
  category: 'guest_post',
  status,
  observedAnchor: `anchor ${id}`,
  lastCheckedAt: null,
  createdAt,
  updatedAt: createdAt,
  checks: [],
  ...extra,
});

const check = (id: string, checkedAt: string, hasError: boolean) => ({
  id,
  status: hasError ? 'error' : 'live',
  requestedSourceUrl: 'https://blog.example.org/bl_1',
  finalSourceUrl: 'https://blog.example.org/bl_1/',
  httpStatus: hasError ? 500 : 200,
  targetFound: !hasError,
  observedTargetUrl: hasError ? null : 'https://acme.test/',
  observedAnchor: hasError ? null : 'acme tents',
  observedRel: hasError ? [] : ['nofollow', 'ugc'],
  hasError,
  checkedAt,
});

const DOC = routeFixture({
  backlinks: [
    backlink('bl_1', 'site_a1', 'live', T(1), {
      lastCheckedAt: '2026-03-06T12:00:00+02:00',
      // Newest first: chk_3 and chk_2 tie on checkedAt, so id decides; chk_3 has no error.
      checks: [check('chk_1', T(5), false), check('chk_2', T(6), true), check('chk_3', T(6), false)],
    }),
    backlink('bl_2', 'site_a1', 'lost', T(2), { checks: [check('chk_4', T(7), true)] }),
    backlink('bl_3', 'site_a2', 'live', T(3)),
    backlink('bl_4', 'site_a2', 'pending', T(3)),
    // An offset date-time is returned in UTC.
    backlink('bl_5', 'site_a1', 'error', '2026-03-04T12:00:00+02:00', { category: null, observedAnchor: null }),
    backlink('bl_a3', 'site_a3', 'live', T(8)),
    backlink('bl_b1', 'site_b1', 'live', T(8)),
  ],
});

/** prj_a1's backlinks, newest createdAt first, ties by id descending. */
const ORDER = ['bl_5', 'bl_4', 'bl_3', 'bl_2', 'bl_1'];
const STATUS_OF: Record<string, string> = { bl_1: 'live', bl_2: 'lost', bl_3: 'live', bl_4: 'pending', bl_5: 'error' };
const SITE_OF: Record<string, string> = {
  bl_1: 'site_a1',
  bl_2: 'site_a1',
  bl_3: 'site_a2',
  bl_4: 'site_a2',
  bl_5: 'site_a1',
};

describe('backlinks', () => {
  let t: TestServer;
  let token: string;
  const ids = (body: any) => body.data.data.map((b: { id: string }) => b.id);

  before(async () => ({ t, token } = await startRouteServer(DOC, ['backlinks:read'])));
  after(() => t?.close());

  describe('GET /backlinks', () => {
    it('lists the project backlinks with every field', async () => {
      const res = await t.get('/projects/prj_a1/backlinks', token);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 5, hasMore: false });
      assert.deepEqual(ids(res.body), ORDER);
      assert.deepEqual(res.body.data.data[0], {
        id: 'bl_5',
        siteId: 'site_a1',
        source: 'outreach',
        acquisitionOrigin: 'unknown',
        sourceUrl: 'https://blog.example.org/bl_5',
        targetUrl: 'https://acme.test/',
        category: null,
        status: 'error',
        observedAnchor: null,
        lastCheckedAt: null,
        createdAt: '2026-03-04T10:00:00.000Z',
        updatedAt: '2026-03-04T10:00:00.000Z',
      });
      const bl1 = res.body.data.data.find((b: { id: string }) => b.id === 'bl_1');
      assert.equal(bl1.lastCheckedAt, '2026-03-06T10:00:00.000Z');
      assert.equal(bl1.category, 'guest_post');
      assert.equal(bl1.observedAnchor, 'anchor bl_1');
      assert.equal('checks' in bl1, false, 'list items carry no checks');
    });

    it('filters by each status value', async () => {
      for (const status of BACKLINK_STATUSES) {
        const res = await t.get(`/projects/prj_a1/backlinks?status=${status}`, token);
        assert.equal(res.status, 200, status);
        const expected = ORDER.filter((id) => STATUS_OF[id] === status);
        assert.deepEqual(ids(res.body), expected, status);
        assert.equal(res.body.data.pagination.total, expected.length, status);
      }
    });

    it('rejects an unknown status with 422 and details', async () => {
      for (const bad of ['gone', 'LIVE', '']) {
        const res = await t.get(`/projects/prj_a1/backlinks?status=${bad}`, token);
        assert.equal(res.status, 422, bad);
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
        assert.deepEqual(
          res.body.error.details.map((d: { path: string }) => d.path),
          ['query.status'],
        );
      }
    });

    it('filters by site, alone and with status', async () => {
      for (const siteId of ['site_a1', 'site_a2']) {
        const res = await t.get(`/projects/prj_a1/backlinks?siteId=${siteId}`, token);
        assert.equal(res.status, 200);
        assert.deepEqual(
          ids(res.body),
          ORDER.filter((id) => SITE_OF[id] === siteId),
        );
      }
      const res = await t.get('/workspaces/prj_a1/backlinks?siteId=site_a2&status=live', token);
      assert.deepEqual(ids(res.body), ['bl_3']);
      assert.equal(res.body.data.pagination.total, 1);
    });

    it('answers 404 for a siteId outside the project', async () => {
      for (const siteId of ['site_a3', 'site_b1', 'site_nope']) {
        const res = await t.get(`/projects/prj_a1/backlinks?siteId=${siteId}`, token);
        assert.equal(res.status, 404, siteId);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });

    it('accepts pageSize as an alias of limit; limit wins when both are given', async () => {
      let res = await t.get('/projects/prj_a1/backlinks?pageSize=2', token);
      assert.deepEqual(ids(res.body), ['bl_5', 'bl_4']);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 2, total: 5, hasMore: true });
      res = await t.get('/projects/prj_a1/backlinks?pageSize=2&page=3', token);
      assert.deepEqual(ids(res.body), ['bl_1']);
      res = await t.get('/projects/prj_a1/backlinks?limit=3&pageSize=1', token);
      assert.equal(res.body.data.pagination.limit, 3);
      assert.equal(res.body.data.data.length, 3);
      res = await t.get('/projects/prj_a1/backlinks?pageSize=1&limit=4', token);
      assert.equal(res.body.data.pagination.limit, 4);
    });

    it('validates page, limit and pageSize with the same rules', async () => {
      const cases: [string, string][] = [
        ['limit=0', 'query.limit'],
        ['limit=101', 'query.limit'],
        ['limit=2.5', 'query.limit'],
        ['limit=abc', 'query.limit'],
        ['limit=', 'query.limit'],
        ['pageSize=0', 'query.pageSize'],
        ['pageSize=101', 'query.pageSize'],
        ['pageSize=x', 'query.pageSize'],
        ['page=0', 'query.page'],
        ['page=1.5', 'query.page'],
      ];
      for (const [query, path] of cases) {
        const res = await t.get(`/projects/prj_a1/backlinks?${query}`, token);
        assert.equal(res.status, 422, query);
        assert.deepEqual(
          res.body.error.details.map((d: { path: string }) => d.path),
          [path],
          query,
        );
      }
      const res = await t.get('/projects/prj_a1/backlinks?pageSize=100', token);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.pagination.limit, 100);
    });

    it('validates the query before looking anything up', async () => {
      const res = await t.get('/projects/prj_nope/backlinks?status=gone', token);
      assert.equal(res.status, 422);
    });
  });

  describe('GET /backlinks/{backlinkId}', () => {
    it('returns the backlink, hasCheckError and its checks newest first', async () => {
      const res = await t.get('/projects/prj_a1/backlinks/bl_1', token);
      assert.equal(res.status, 200);
      const { checks, pagination, hasCheckError, ...fields } = res.body.data;
      assert.deepEqual(fields, {
        id: 'bl_1',
        siteId: 'site_a1',
        source: 'outreach',
        acquisitionOrigin: 'unknown',
        sourceUrl: 'https://blog.example.org/bl_1',
        targetUrl: 'https://acme.test/',
        category: 'guest_post',
        status: 'live',
        observedAnchor: 'anchor bl_1',
        lastCheckedAt: '2026-03-06T10:00:00.000Z',
        createdAt: T(1),
        updatedAt: T(1),
      });
      // The newest check (chk_3, winning the checkedAt tie on id) has no error, though chk_2 has.
      assert.equal(hasCheckError, false);
      assert.deepEqual(
        checks.map((c: { id: string }) => c.id),
        ['chk_3', 'chk_2', 'chk_1'],
      );
      assert.deepEqual(checks[0], {
        id: 'chk_3',
        status: 'live',
        requestedSourceUrl: 'https://blog.example.org/bl_1',
        finalSourceUrl: 'https://blog.example.org/bl_1/',
        httpStatus: 200,
        targetFound: true,
        observedTargetUrl: 'https://acme.test/',
        observedAnchor: 'acme tents',
        observedRel: ['nofollow', 'ugc'],
        hasError: false,
        checkedAt: T(6),
      });
      assert.deepEqual(checks[1], {
        id: 'chk_2',
        status: 'error',
        requestedSourceUrl: 'https://blog.example.org/bl_1',
        finalSourceUrl: 'https://blog.example.org/bl_1/',
        httpStatus: 500,
        targetFound: false,
        observedTargetUrl: null,
        observedAnchor: null,
        observedRel: [],
        hasError: true,
        checkedAt: T(6),
      });
      assert.deepEqual(pagination, { page: 1, limit: 25, total: 3, hasMore: false });
    });

    it('hasCheckError follows the newest check, false without checks', async () => {
      let res = await t.get('/projects/prj_a1/backlinks/bl_2', token);
      assert.equal(res.body.data.hasCheckError, true);
      res = await t.get('/projects/prj_a1/backlinks/bl_3', token);
      assert.equal(res.body.data.hasCheckError, false);
      assert.deepEqual(res.body.data.checks, []);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 0, hasMore: false });
    });

    it('pages the checks; hasCheckError does not depend on the page', async () => {
      let res = await t.get('/projects/prj_a1/backlinks/bl_1?limit=1&page=2', token);
      assert.deepEqual(
        res.body.data.checks.map((c: { id: string }) => c.id),
        ['chk_2'],
      );
      assert.deepEqual(res.body.data.pagination, { page: 2, limit: 1, total: 3, hasMore: true });
      assert.equal(res.body.data.hasCheckError, false);
      res = await t.get('/projects/prj_a1/backlinks/bl_1?limit=2&page=2', token);
      assert.deepEqual(
        res.body.data.checks.map((c: { id: string }) => c.id),
        ['chk_1'],
      );
      assert.equal(res.body.data.pagination.hasMore, false);
      res = await t.get('/projects/prj_a1/backlinks/bl_1?page=5', token);
      assert.deepEqual(res.body.data.checks, []);
      assert.deepEqual(res.body.data.pagination, { page: 5, limit: 25, total: 3, hasMore: false });
      assert.equal(res.body.data.id, 'bl_1');
    });

    it('answers 404 through the wrong project, for another account and for an unknown id', async () => {
      for (const path of [
        '/projects/prj_a2/backlinks/bl_1',
        '/projects/prj_a1/backlinks/bl_a3',
        '/projects/prj_a1/backlinks/bl_b1',
        '/workspaces/prj_b1/backlinks/bl_b1',
        '/projects/prj_a1/backlinks/bl_nope',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });
});

describe('backlinks of the small fixture', () => {
  let t: TestServer;
  let token: string;
  const record = (id: string) => SMALL.backlinks.find((b: { id: string }) => b.id === id);

  before(async () => ({ t, token } = await startRouteServer('small', ['backlinks:read'])));
  after(() => t?.close());

  it('lists every backlink of prj_a1 as the fixture has it, newest first', async () => {
    const res = await t.get('/projects/prj_a1/backlinks', token);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.data.map((b: { id: string }) => b.id),
      ['bl_a1_3', 'bl_a2_1', 'bl_a1_1', 'bl_a1_2', 'bl_a1_4'],
    );
    for (const shown of res.body.data.data) {
      const { checks: _checks, siteId, ...fields } = record(shown.id);
      assert.deepEqual(shown, fromFixture({ siteId, ...fields }, shown), shown.id);
    }
    assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 5, hasMore: false });
  });

  it('shows a backlink with its checks as the fixture has them', async () => {
    const res = await t.get('/workspaces/prj_a1/backlinks/bl_a1_2', token);
    assert.equal(res.status, 200);
    const { checks, pagination, hasCheckError, ...fields } = res.body.data;
    const { checks: expectedChecks, ...expectedFields } = record('bl_a1_2');
    assert.deepEqual(fields, fromFixture(expectedFields, fields));
    // chk_a1_4 (2026-03-09) is the newest check and has an error.
    assert.equal(hasCheckError, true);
    assert.deepEqual(
      checks.map((c: { id: string }) => c.id),
      ['chk_a1_4', 'chk_a1_3'],
    );
    for (const shown of checks) {
      assert.deepEqual(
        shown,
        fromFixture(
          expectedChecks.find((c: { id: string }) => c.id === shown.id),
          shown,
        ),
        shown.id,
      );
    }
    assert.deepEqual(pagination, { page: 1, limit: 25, total: 2, hasMore: false });
    const bl1 = await t.get('/projects/prj_a1/backlinks/bl_a1_1', token);
    assert.equal(bl1.body.data.hasCheckError, false);
    assert.deepEqual(
      bl1.body.data.checks.map((c: { id: string }) => c.id),
      ['chk_a1_2', 'chk_a1_1'],
    );
  });

  it("keeps acct_b's backlinks from acct_a", async () => {
    for (const path of [
      '/projects/prj_b1/backlinks',
      '/projects/prj_a1/backlinks/bl_b1_1',
      '/projects/prj_a1/backlinks?siteId=site_b1',
    ]) {
      assert.equal((await t.get(path, token)).status, 404, path);
    }
  });
});
