/**
 * GET /{group}/{id}/prospects, /prospects/{prospectId} and /prospects/{prospectId}/contacts:
 * fields, filters, search, a prospect without contacts, 404s inside the account.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PROSPECT_STATUSES } from '../../src/domain/enums.js';
import { fromFixture, routeFixture, SMALL, T } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';

const prospect = (
  id: string,
  siteId: string,
  status: string,
  createdAt: string,
  extra: Record<string, unknown> = {},
) => ({
  id,
  siteId,
  status,
  url: `https://${id}.example/page`,
  domain: `${id}.example`,
  title: `Prospect ${id}`,
  description: null,
  createdAt,
  updatedAt: createdAt,
  ...extra,
});

const contact = (id: string, prospectId: string, createdAt: string, extra: Record<string, unknown> = {}) => ({
  id,
  prospectId,
  email: `${id}@example.org`,
  status: 'active',
  verificationStatus: 'unverified',
  createdAt,
  updatedAt: createdAt,
  ...extra,
});

const PR_1 = {
  id: 'pr_1',
  siteId: 'site_a1',
  sourceJobId: 'job_1',
  source: 'discovery',
  status: 'proposed',
  url: 'https://trailblog.example/best-boots',
  normalizedUrl: 'trailblog.example/best-boots',
  canonicalUrl: 'https://trailblog.example/best-boots/',
  domain: 'trailblog.example',
  title: 'Best Hiking Boots of 2026',
  description: 'A long review of boots for the trail',
  contentExcerpt: 'We walked 400 km in twelve pairs.',
  pageType: 'article',
  opportunityType: 'resource_page',
  suggestedPlacement: 'In the gear list',
  contactPaths: [{ url: 'https://trailblog.example/contact', label: 'Contact page' }],
  relevanceScore: 0.92,
  qualityScore: 0.8,
  riskScore: 0.1,
  matchReasons: ['keyword: hiking boots', 'outdoor niche'],
  riskFlags: ['many outbound links'],
  domainAuthority: 41,
  estimatedMonthlyTraffic: 12000,
  rankingPosition: 4,
  rankingKeyword: 'best hiking boots',
  crawlStatus: 'crawled',
  lastCrawledAt: '2026-03-01T12:30:00+02:00',
  createdAt: T(1),
  updatedAt: '2026-03-02T08:00:00Z',
};

const DOC = routeFixture({
  discoveryJobs: [
    {
      id: 'job_1',
      siteId: 'site_a1',
      type: 'prospect_discovery',
      status: 'completed',
      createdAt: T(1),
      updatedAt: T(1),
      queries: [],
    },
  ],
  prospects: [
    PR_1,
    prospect('pr_2', 'site_a1', 'rejected', T(2), {
      title: 'Camping Gear Guide',
      domain: 'Outdoors.Example',
      url: 'https://outdoors.example/camping',
    }),
    prospect('pr_3', 'site_a2', 'blocked', T(3), {
      title: null,
      description: 'Carries an XY marker and "quoted" words',
      domain: 'shop.example',
      url: 'https://shop.example/',
    }),
    prospect('pr_4', 'site_a2', 'proposed', T(3), {
      title: 'Ünïcode Tents',
      domain: 'tents.example',
      url: 'https://tents.example/',
    }),
    prospect('pr_a3', 'site_a3', 'proposed', T(4), { title: 'Best Hiking Boots elsewhere' }),
    prospect('pr_b1', 'site_b1', 'proposed', T(4), { title: 'Best Hiking Boots at Bravo' }),
  ],
  contacts: [
    contact('ct_1', 'pr_1', T(1), {
      email: 'ana@trailblog.example',
      fullName: 'Ana Trail',
      role: 'Editor',
      roleCategory: 'editorial',
      company: 'Trail Blog',
      source: 'crawl',
      sourceProvider: 'website',
      sourceUrl: 'https://trailblog.example/contact',
      sourceReference: 'contact page',
      status: 'active',
      verificationStatus: 'valid',
      lastVerifiedAt: '2026-03-02T11:00:00+01:00',
      suppressionReason: null,
    }),
    contact('ct_2', 'pr_1', T(2)),
    contact('ct_3', 'pr_1', T(2), { status: 'suppressed', suppressionReason: 'unsubscribed' }),
    contact('ct_4', 'pr_2', T(2)),
    contact('ct_a3', 'pr_a3', T(2)),
    contact('ct_b1', 'pr_b1', T(2)),
  ],
});

/** prj_a1's prospects, newest createdAt first, ties by id descending. */
const ORDER = ['pr_4', 'pr_3', 'pr_2', 'pr_1'];
const STATUS_OF: Record<string, string> = { pr_1: 'proposed', pr_2: 'rejected', pr_3: 'blocked', pr_4: 'proposed' };

describe('prospects', () => {
  let t: TestServer;
  let token: string;
  const ids = (body: any) => body.data.data.map((b: { id: string }) => b.id);
  const search = async (term: string, extra = '') => {
    const res = await t.get(`/projects/prj_a1/prospects?search=${encodeURIComponent(term)}${extra}`, token);
    assert.equal(res.status, 200, term);
    assert.equal(res.body.data.pagination.total, res.body.data.data.length, term);
    return ids(res.body);
  };

  before(async () => ({ t, token } = await startRouteServer(DOC, ['prospects:read', 'contacts:read'])));
  after(() => t?.close());

  describe('GET /prospects', () => {
    it('lists the project prospects, newest first, with every field', async () => {
      const res = await t.get('/projects/prj_a1/prospects', token);
      assert.equal(res.status, 200);
      assert.deepEqual(ids(res.body), ORDER);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 4, hasMore: false });
      const pr1 = res.body.data.data[3];
      assert.deepEqual(pr1, {
        ...PR_1,
        lastCrawledAt: '2026-03-01T10:30:00.000Z',
        updatedAt: '2026-03-02T08:00:00.000Z',
      });
      const pr3 = res.body.data.data[1];
      assert.equal(pr3.title, null);
      assert.deepEqual([pr3.contactPaths, pr3.matchReasons, pr3.riskFlags], [[], [], []]);
      assert.equal(pr3.relevanceScore, null);
    });

    it('filters by each status value and rejects others', async () => {
      for (const status of PROSPECT_STATUSES) {
        const res = await t.get(`/projects/prj_a1/prospects?status=${status}`, token);
        assert.deepEqual(
          ids(res.body),
          ORDER.filter((id) => STATUS_OF[id] === status),
          status,
        );
      }
      for (const bad of ['accepted', 'Proposed', '']) {
        const res = await t.get(`/projects/prj_a1/prospects?status=${bad}`, token);
        assert.equal(res.status, 422, bad);
        assert.deepEqual(
          res.body.error.details.map((d: { path: string }) => d.path),
          ['query.status'],
        );
      }
    });

    it('filters by site; a site outside the project is 404', async () => {
      let res = await t.get('/projects/prj_a1/prospects?siteId=site_a2', token);
      assert.deepEqual(ids(res.body), ['pr_4', 'pr_3']);
      res = await t.get('/projects/prj_a1/prospects?siteId=site_a2&status=proposed', token);
      assert.deepEqual(ids(res.body), ['pr_4']);
      for (const siteId of ['site_a3', 'site_b1', 'nope']) {
        res = await t.get(`/projects/prj_a1/prospects?siteId=${siteId}`, token);
        assert.equal(res.status, 404, siteId);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });

    it('searches title, domain, url and description case-insensitively', async () => {
      assert.deepEqual(await search('hiking'), ['pr_1']);
      assert.deepEqual(await search('HIKING BOOTS'), ['pr_1']);
      assert.deepEqual(await search('outdoors.EXAMPLE'), ['pr_2']);
      assert.deepEqual(await search('example/best-b'), ['pr_1']);
      assert.deepEqual(await search('long review'), ['pr_1']);
      assert.deepEqual(await search('"quoted"'), ['pr_3']);
      assert.deepEqual(await search('ünïcode'), ['pr_4']);
      assert.deepEqual(await search('tents'), ['pr_4']);
      assert.deepEqual(await search('nothing like this'), []);
    });

    it('searches terms of one and two characters too', async () => {
      assert.deepEqual(await search('xy'), ['pr_3']);
      assert.deepEqual(await search('XY'), ['pr_3']);
      assert.deepEqual(await search('Q'), ['pr_3']);
      assert.deepEqual(await search('"'), ['pr_3']);
      assert.deepEqual(await search('zz'), []);
    });

    it('folds case for every script at every length (title "Ünïcode Tents")', async () => {
      // SQLite's lower() folds ASCII only; 1–2 character terms must fold Ü/ü as 3+ do.
      for (const term of ['ü', 'Ü', 'üN', 'ÜN', 'ünï', 'ÜNÏ', 'ÜNÏCODE'])
        assert.deepEqual(await search(term), ['pr_4'], term);
      assert.deepEqual(await search('ï'), ['pr_4']);
      assert.deepEqual(await search('Ï'), ['pr_4']);
    });

    it('treats FTS syntax in the term as text', async () => {
      for (const term of [
        'boots AND camping',
        'boo*',
        'NEAR(a b)',
        'title:best',
        '"',
        '""',
        "'; DROP TABLE prospects; --",
        '(',
        '^bes',
      ]) {
        const res = await t.get(`/projects/prj_a1/prospects?search=${encodeURIComponent(term)}`, token);
        assert.equal(res.status, 200, term);
      }
      assert.deepEqual(await search('boo*'), []);
      assert.deepEqual(await search('title:best'), []);
    });

    it('combines search with site and status filters and pages the matches', async () => {
      assert.deepEqual(await search('example', '&status=proposed'), ['pr_4', 'pr_1']);
      assert.deepEqual(await search('example', '&siteId=site_a1'), ['pr_2', 'pr_1']);
      const res = await t.get('/projects/prj_a1/prospects?search=example&limit=3&page=2', token);
      assert.deepEqual(ids(res.body), ['pr_1']);
      assert.deepEqual(res.body.data.pagination, { page: 2, limit: 3, total: 4, hasMore: false });
    });

    it('treats an empty search as no filter and rejects one over 200 characters', async () => {
      let res = await t.get('/projects/prj_a1/prospects?search=', token);
      assert.deepEqual(ids(res.body), ORDER);
      res = await t.get(`/projects/prj_a1/prospects?search=${'a'.repeat(200)}`, token);
      assert.equal(res.status, 200);
      assert.deepEqual(ids(res.body), []);
      res = await t.get(`/projects/prj_a1/prospects?search=${'a'.repeat(201)}`, token);
      assert.equal(res.status, 422);
      assert.deepEqual(
        res.body.error.details.map((d: { path: string }) => d.path),
        ['query.search'],
      );
    });
  });

  describe('GET /prospects/{prospectId}', () => {
    it('returns the prospect under both forms', async () => {
      const a = await t.get('/projects/prj_a1/prospects/pr_1', token);
      assert.equal(a.status, 200);
      assert.deepEqual(a.body.data, {
        ...PR_1,
        lastCrawledAt: '2026-03-01T10:30:00.000Z',
        updatedAt: '2026-03-02T08:00:00.000Z',
      });
      const b = await t.get('/workspaces/prj_a1/prospects/pr_1', token);
      assert.deepEqual(b.body, a.body);
    });

    it('answers 404 through the wrong project, for another account and for an unknown id', async () => {
      for (const path of [
        '/projects/prj_a2/prospects/pr_1',
        '/projects/prj_a1/prospects/pr_a3',
        '/projects/prj_a1/prospects/pr_b1',
        '/projects/prj_b1/prospects/pr_b1',
        '/projects/prj_a1/prospects/pr_nope',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });

  describe('GET /prospects/{prospectId}/contacts', () => {
    it('lists the contacts of the prospect, newest first, with every field', async () => {
      const res = await t.get('/projects/prj_a1/prospects/pr_1/contacts', token);
      assert.equal(res.status, 200);
      assert.deepEqual(ids(res.body), ['ct_3', 'ct_2', 'ct_1']);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 3, hasMore: false });
      assert.deepEqual(res.body.data.data[2], {
        id: 'ct_1',
        email: 'ana@trailblog.example',
        fullName: 'Ana Trail',
        role: 'Editor',
        roleCategory: 'editorial',
        company: 'Trail Blog',
        source: 'crawl',
        sourceProvider: 'website',
        sourceUrl: 'https://trailblog.example/contact',
        sourceReference: 'contact page',
        status: 'active',
        verificationStatus: 'valid',
        lastVerifiedAt: '2026-03-02T10:00:00.000Z',
        suppressionReason: null,
        createdAt: T(1),
        updatedAt: T(1),
      });
      assert.equal(res.body.data.data[0].suppressionReason, 'unsubscribed');
      assert.equal(res.body.data.data[1].fullName, null);
    });

    it('pages the contacts', async () => {
      let res = await t.get('/projects/prj_a1/prospects/pr_1/contacts?limit=1&page=2', token);
      assert.deepEqual(ids(res.body), ['ct_2']);
      assert.deepEqual(res.body.data.pagination, { page: 2, limit: 1, total: 3, hasMore: true });
      res = await t.get('/projects/prj_a1/prospects/pr_1/contacts?page=2', token);
      assert.deepEqual(res.body.data, { data: [], pagination: { page: 2, limit: 25, total: 3, hasMore: false } });
      res = await t.get('/projects/prj_a1/prospects/pr_4/contacts', token);
      assert.deepEqual(res.body.data, { data: [], pagination: { page: 1, limit: 25, total: 0, hasMore: false } });
      res = await t.get('/projects/prj_a1/prospects/pr_1/contacts?limit=101', token);
      assert.equal(res.status, 422);
      assert.equal(res.body.error.details[0].path, 'query.limit');
    });

    it('answers 404 through the wrong project, for another account and for an unknown prospect', async () => {
      for (const path of [
        '/projects/prj_a2/prospects/pr_1/contacts',
        '/projects/prj_a1/prospects/pr_a3/contacts',
        '/projects/prj_a1/prospects/pr_b1/contacts',
        '/workspaces/prj_b1/prospects/pr_b1/contacts',
        '/projects/prj_a1/prospects/pr_nope/contacts',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });
});

describe('prospects and contacts of the small fixture', () => {
  let t: TestServer;
  let token: string;
  const find = (collection: string, id: string) => SMALL[collection]!.find((r: { id: string }) => r.id === id);

  before(async () => ({ t, token } = await startRouteServer('small', ['prospects:read', 'contacts:read'])));
  after(() => t?.close());

  it('lists and shows the prospects of prj_a1 as the fixture has them', async () => {
    const res = await t.get('/projects/prj_a1/prospects', token);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.data.map((p: { id: string }) => p.id),
      ['prs_a1_3', 'prs_a1_2', 'prs_a1_1'],
    );
    for (const shown of res.body.data.data)
      assert.deepEqual(shown, fromFixture(find('prospects', shown.id), shown), shown.id);
    const detail = await t.get('/workspaces/prj_a1/prospects/prs_a1_1', token);
    assert.deepEqual(detail.body.data, fromFixture(find('prospects', 'prs_a1_1'), detail.body.data));
    const hit = await t.get('/projects/prj_a1/prospects?search=HIKING%20boots', token);
    assert.deepEqual(
      hit.body.data.data.map((p: { id: string }) => p.id),
      ['prs_a1_1'],
    );
  });

  it('lists the contacts of a prospect as the fixture has them', async () => {
    const res = await t.get('/projects/prj_a1/prospects/prs_a1_1/contacts', token);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.data.map((c: { id: string }) => c.id),
      ['ct_a1_2', 'ct_a1_1'],
    );
    for (const shown of res.body.data.data) {
      const { prospectId: _prospectId, ...fields } = find('contacts', shown.id);
      assert.deepEqual(shown, fromFixture(fields, shown), shown.id);
    }
  });

  it("keeps acct_b's prospects and contacts from acct_a", async () => {
    for (const path of [
      '/projects/prj_b1/prospects',
      '/projects/prj_a1/prospects/prs_b1_1',
      '/projects/prj_a1/prospects/prs_b1_1/contacts',
    ]) {
      assert.equal((await t.get(path, token)).status, 404, path);
    }
  });
});
