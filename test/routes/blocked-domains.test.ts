/** GET /{group}/{id}/blocked-domains: fields, order, paging, isolation and scope. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/harness.js';

const T = (day: number, hour = 10) => `2026-03-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00.000Z`;

const DOC = {
  accounts: [
    { id: 'acct_a', email: 'a@acme.test', name: 'Acme', plan: 'pro', planExpiresAt: '2027-01-01T00:00:00Z' },
    { id: 'acct_b', email: 'b@bravo.test', name: 'Bravo', plan: 'free' },
  ],
  projects: [
    { id: 'prj_a1', accountId: 'acct_a', name: 'Acme one', createdAt: T(1), updatedAt: T(1) },
    { id: 'prj_a2', accountId: 'acct_a', name: 'Acme two', createdAt: T(1), updatedAt: T(1) },
    { id: 'prj_b1', accountId: 'acct_b', name: 'Bravo', createdAt: T(1), updatedAt: T(1) },
  ],
  blockedDomains: [
    { id: 'bd_1', projectId: 'prj_a1', domain: 'spam.example', reason: 'Link farm', createdAt: T(1) },
    { id: 'bd_2', projectId: 'prj_a1', domain: 'competitor.example', reason: null, createdAt: '2026-03-02T12:00:00+02:00' },
    // Ties bd_2 on createdAt: id descending puts bd_3 first.
    { id: 'bd_3', projectId: 'prj_a1', domain: 'casino.example', reason: 'Off topic', createdAt: T(2) },
    { id: 'bd_4', projectId: 'prj_a1', domain: 'pbn.example', createdAt: T(3) },
    { id: 'bd_a2', projectId: 'prj_a2', domain: 'other.example', createdAt: T(3) },
    { id: 'bd_b', projectId: 'prj_b1', domain: 'bravo-block.example', createdAt: T(3) },
  ],
};

const ORDER = ['bd_4', 'bd_3', 'bd_2', 'bd_1'];

describe('blocked domains', () => {
  let t: TestServer;
  let token: string;
  const ids = (body: any) => body.data.data.map((d: { id: string }) => d.id);
  const LIST = '/projects/prj_a1/blocked-domains';

  before(async () => {
    t = await startTestServer({ fixture: DOC, config: { 'limits.requestsPerMinute': 0 } });
    token = t.mintToken('acct_a', ['prospects:read']);
  });
  after(async () => {
    await t?.close();
  });

  it("lists the project's blocked domains newest first", async () => {
    const res = await t.get(LIST, token);
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body), ORDER);
    assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 4, hasMore: false });
    assert.deepEqual(res.body.data.data[3], { id: 'bd_1', domain: 'spam.example', reason: 'Link farm', createdAt: T(1) });
    assert.deepEqual(res.body.data.data[2], { id: 'bd_2', domain: 'competitor.example', reason: null, createdAt: T(2) });
    assert.equal(res.body.data.data[0].reason, null);
  });

  it('answers identically under /workspaces', async () => {
    const a = await t.get(`${LIST}?limit=2&page=2`, token);
    const b = await t.get('/workspaces/prj_a1/blocked-domains?limit=2&page=2', token);
    assert.equal(b.status, 200);
    assert.deepEqual(b.body, a.body);
  });

  it('pages with limit, reports hasMore and the true total past the end', async () => {
    let res = await t.get(`${LIST}?limit=1`, token);
    assert.deepEqual(ids(res.body), ['bd_4']);
    assert.deepEqual(res.body.data.pagination, { page: 1, limit: 1, total: 4, hasMore: true });
    res = await t.get(`${LIST}?limit=3&page=2`, token);
    assert.deepEqual(ids(res.body), ['bd_1']);
    assert.deepEqual(res.body.data.pagination, { page: 2, limit: 3, total: 4, hasMore: false });
    res = await t.get(`${LIST}?limit=2&page=2`, token);
    assert.equal(res.body.data.pagination.hasMore, false);
    res = await t.get(`${LIST}?page=3&limit=2`, token);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, { data: [], pagination: { page: 3, limit: 2, total: 4, hasMore: false } });
  });

  it('validates page and limit before any lookup', async () => {
    for (const [q, path] of [['limit=0', 'query.limit'], ['limit=101', 'query.limit'], ['page=0', 'query.page'], ['page=1e', 'query.page']]) {
      const res = await t.get(`${LIST}?${q}`, token);
      assert.equal(res.status, 422, q);
      assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), [path], q);
    }
    assert.equal((await t.get('/projects/prj_b1/blocked-domains?limit=0', token)).status, 422);
  });

  it('lists only the project asked for', async () => {
    const res = await t.get('/projects/prj_a2/blocked-domains', token);
    assert.deepEqual(ids(res.body), ['bd_a2']);
    const b = await t.get('/workspaces/prj_b1/blocked-domains', t.mintToken('acct_b', ['prospects:read']));
    assert.deepEqual(ids(b.body), ['bd_b']);
  });

  it("answers 404 for another account's or an unknown project", async () => {
    for (const path of ['/projects/prj_b1/blocked-domains', '/workspaces/prj_b1/blocked-domains', '/projects/prj_nope/blocked-domains']) {
      const res = await t.get(path, token);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, 'NOT_FOUND');
    }
  });

  it('requires prospects:read', async () => {
    const res = await t.get(LIST, t.mintToken('acct_a', ['projects:read', 'sites:read', 'outreach:read']));
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'SCOPE_REQUIRED');
  });
});
