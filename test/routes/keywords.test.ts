/**
 * GET /{group}/{id}/sites/{siteId}/keywords: fields, the createdAt tie broken by id, 404s inside
 * the account.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { T, routeFixture } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';

const DOC = routeFixture({
  keywords: [
    { id: 'kw_1', siteId: 'site_a1', keyword: 'camping tents', createdAt: T(1) },
    { id: 'kw_2', siteId: 'site_a1', keyword: 'ultralight stove', createdAt: '2026-03-02T12:00:00+02:00' },
    // Ties kw_2 on createdAt: id descending puts kw_3 first.
    { id: 'kw_3', siteId: 'site_a1', keyword: 'sleeping bags', createdAt: T(2) },
    { id: 'kw_a2', siteId: 'site_a2', keyword: 'shop', createdAt: T(3) },
    { id: 'kw_a3', siteId: 'site_a3', keyword: 'other', createdAt: T(3) },
    { id: 'kw_b', siteId: 'site_b1', keyword: 'bravo', createdAt: T(3) },
  ],
});

const ORDER = ['kw_3', 'kw_2', 'kw_1'];

describe('keywords', () => {
  let t: TestServer;
  let token: string;
  const ids = (body: any) => body.data.data.map((d: { id: string }) => d.id);
  const LIST = '/projects/prj_a1/sites/site_a1/keywords';

  before(async () => ({ t, token } = await startRouteServer(DOC, ['sites:read'])));
  after(() => t?.close());

  it("lists the site's keywords newest first", async () => {
    const res = await t.get(LIST, token);
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body), ORDER);
    assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 3, hasMore: false });
    assert.deepEqual(res.body.data.data, [
      { id: 'kw_3', siteId: 'site_a1', keyword: 'sleeping bags', createdAt: T(2) },
      { id: 'kw_2', siteId: 'site_a1', keyword: 'ultralight stove', createdAt: T(2) },
      { id: 'kw_1', siteId: 'site_a1', keyword: 'camping tents', createdAt: T(1) },
    ]);
  });

  it("answers 404 for another account's project, a site of another project and unknown ids", async () => {
    for (const path of [
      '/projects/prj_b1/sites/site_b1/keywords',
      '/workspaces/prj_b1/sites/site_b1/keywords',
      '/projects/prj_a1/sites/site_b1/keywords',
      '/projects/prj_a1/sites/site_a3/keywords',
      '/projects/prj_a2/sites/site_a1/keywords',
      '/projects/prj_a1/sites/site_nope/keywords',
    ]) {
      const res = await t.get(path, token);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, 'NOT_FOUND');
    }
  });
});
