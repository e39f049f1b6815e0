/**
 * GET /{group}/{id}/blocked-domains: fields and the createdAt tie broken by id.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { T, routeFixture } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';

const DOC = routeFixture({
  blockedDomains: [
    { id: 'bd_1', projectId: 'prj_a1', domain: 'spam.example', reason: 'Link farm', createdAt: T(1) },
    {
      id: 'bd_2',
      projectId: 'prj_a1',
      domain: 'competitor.example',
      reason: null,
      createdAt: '2026-03-02T12:00:00+02:00',
    },
    // Ties bd_2 on createdAt: id descending puts bd_3 first.
    { id: 'bd_3', projectId: 'prj_a1', domain: 'casino.example', reason: 'Off topic', createdAt: T(2) },
    { id: 'bd_4', projectId: 'prj_a1', domain: 'pbn.example', createdAt: T(3) },
    { id: 'bd_a2', projectId: 'prj_a2', domain: 'other.example', createdAt: T(3) },
    { id: 'bd_b', projectId: 'prj_b1', domain: 'bravo-block.example', createdAt: T(3) },
  ],
});

const ORDER = ['bd_4', 'bd_3', 'bd_2', 'bd_1'];

describe('blocked domains', () => {
  let t: TestServer;
  let token: string;
  const ids = (body: any) => body.data.data.map((d: { id: string }) => d.id);
  const LIST = '/projects/prj_a1/blocked-domains';

  before(async () => ({ t, token } = await startRouteServer(DOC, ['prospects:read'])));
  after(() => t?.close());

  it("lists the project's blocked domains newest first", async () => {
    const res = await t.get(LIST, token);
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body), ORDER);
    assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 4, hasMore: false });
    assert.deepEqual(res.body.data.data[3], {
      id: 'bd_1',
      domain: 'spam.example',
      reason: 'Link farm',
      createdAt: T(1),
    });
    assert.deepEqual(res.body.data.data[2], {
      id: 'bd_2',
      domain: 'competitor.example',
      reason: null,
      createdAt: T(2),
    });
    assert.equal(res.body.data.data[0].reason, null);
  });
});
