/**
 * GET /{group}/{id}/leads and /leads/{leadId}: fields, redaction, views, filters, search, order,
 * 404s inside the account.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LEAD_STAGES, LEAD_TIERS, LEAD_TYPES } from '../../src/domain/enums.js';
import { fromFixture, routeFixture, SMALL, T } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';

interface LeadDoc {
  id: string;
  siteId: string;
  platform: string;
  score: number;
  tier: string;
  leadType: string;
  stage: string;
  dismissed: boolean;
  redacted: boolean;
  postedAt: string | null;
  title: string | null;
  body: string | null;
  authorHandle: string | null;
  evidenceQuote: string | null;
  [key: string]: unknown;
}

const lead = (id: string, siteId: string, fields: Partial<LeadDoc>): LeadDoc => ({
  id,
  siteId,
  platform: 'reddit',
  sourceContainer: 'r/CampingGear',
  kind: 'post',
  title: `Title of ${id}`,
  body: `Body of ${id}`,
  authorHandle: `author_${id}`,
  permalink: `https://www.reddit.com/r/CampingGear/comments/${id}`,
  score: 50,
  tier: 'warm',
  leadType: 'other',
  sentiment: 'neutral',
  evidenceQuote: `Quote of ${id}`,
  reason: 'Mentions the product category',
  stage: 'to_qualify',
  feedback: null,
  dismissed: false,
  postedAt: T(1),
  firstSeenAt: T(1, 11),
  redacted: false,
  ...fields,
});

const LD_1 = lead('ld_1', 'site_a1', {
  score: 90,
  tier: 'hot',
  leadType: 'looking_for_solution',
  stage: 'to_qualify',
  title: 'Need tent recommendations',
  body: 'Going to the Alps in June, what should I buy?',
  authorHandle: 'TrailFan',
  evidenceQuote: 'any tent under 200 euros',
  sentiment: 'positive',
  feedback: 'up',
  postedAt: '2026-03-01T12:00:00+02:00',
});

const LEADS: LeadDoc[] = [
  LD_1,
  lead('ld_2', 'site_a1', {
    score: 90,
    tier: 'warm',
    leadType: 'describes_problem',
    stage: 'to_contact',
    postedAt: T(2),
    body: 'My old one broke #fail',
  }),
  lead('ld_3', 'site_a2', {
    score: 95,
    tier: 'explore',
    leadType: 'competitor',
    stage: 'in_conversation',
    platform: 'hackernews',
  }),
  lead('ld_4', 'site_a1', {
    score: 50,
    tier: 'hot',
    leadType: 'other',
    stage: 'to_qualify',
    redacted: true,
    title: 'Secret budget plan #1',
    body: 'confidential zq words',
    authorHandle: 'quietuser',
    evidenceQuote: 'hidden quote',
  }),
  lead('ld_5', 'site_a2', {
    score: 70,
    tier: 'warm',
    leadType: 'competitor',
    stage: 'closed',
    dismissed: true,
    platform: 'hackernews',
  }),
  lead('ld_6', 'site_a1', {
    score: 90,
    tier: 'hot',
    leadType: 'looking_for_solution',
    stage: 'in_conversation',
    postedAt: T(2),
  }),
  lead('ld_7', 'site_a2', {
    score: 10,
    tier: 'warm',
    leadType: 'other',
    stage: 'to_contact',
    postedAt: null,
    platform: 'hackernews',
  }),
  lead('ld_8', 'site_a2', {
    score: 10,
    tier: 'warm',
    leadType: 'describes_problem',
    stage: 'closed',
    postedAt: T(1),
    platform: 'x',
    evidenceQuote: 'a ZQ sighting',
  }),
];

const DOC = routeFixture({
  leads: [...LEADS, lead('ld_a3', 'site_a3', { tier: 'hot' }), lead('ld_b1', 'site_b1', { tier: 'hot' })],
});

/** Every prj_a1 lead in list order: score desc, then postedAt desc (null last), then id desc. */
const ALL_ORDER = ['ld_3', 'ld_6', 'ld_2', 'ld_1', 'ld_5', 'ld_4', 'ld_8', 'ld_7'];
const byId = new Map(LEADS.map((l) => [l.id, l]));
const where = (pred: (l: LeadDoc) => boolean) => ALL_ORDER.filter((id) => pred(byId.get(id)!));
const quality = (l: LeadDoc) => !l.dismissed && (l.tier === 'hot' || l.tier === 'warm');
const notDismissed = (l: LeadDoc) => !l.dismissed;

describe('leads', () => {
  let t: TestServer;
  let token: string;
  const ids = (body: any) => body.data.data.map((b: { id: string }) => b.id);
  const list = async (query: string) => {
    const res = await t.get(`/projects/prj_a1/leads?${query}`, token);
    assert.equal(res.status, 200, query);
    assert.equal(res.body.data.pagination.total, res.body.data.data.length, query);
    return ids(res.body);
  };

  before(async () => ({ t, token } = await startRouteServer(DOC, ['leads:read'])));
  after(() => t?.close());

  describe('GET /leads', () => {
    it('lists quality leads by default, highest score first, with every field', async () => {
      const res = await t.get('/projects/prj_a1/leads', token);
      assert.equal(res.status, 200);
      assert.deepEqual(ids(res.body), ['ld_6', 'ld_2', 'ld_1', 'ld_4', 'ld_8', 'ld_7']);
      assert.deepEqual(ids(res.body), where(quality));
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 6, hasMore: false });
      assert.deepEqual(res.body.data.data[2], {
        id: 'ld_1',
        siteId: 'site_a1',
        platform: 'reddit',
        sourceContainer: 'r/CampingGear',
        kind: 'post',
        title: 'Need tent recommendations',
        body: 'Going to the Alps in June, what should I buy?',
        authorHandle: 'TrailFan',
        permalink: 'https://www.reddit.com/r/CampingGear/comments/ld_1',
        score: 90,
        tier: 'hot',
        leadType: 'looking_for_solution',
        sentiment: 'positive',
        evidenceQuote: 'any tent under 200 euros',
        reason: 'Mentions the product category',
        stage: 'to_qualify',
        feedback: 'up',
        dismissed: false,
        postedAt: '2026-03-01T10:00:00.000Z',
        firstSeenAt: T(1, 11),
        redacted: false,
      });
    });

    it('hides the text of redacted leads', async () => {
      const res = await t.get('/projects/prj_a1/leads', token);
      const ld4 = res.body.data.data.find((l: { id: string }) => l.id === 'ld_4');
      assert.equal(ld4.redacted, true);
      assert.equal(ld4.title, null);
      assert.equal(ld4.body, null);
      assert.equal(ld4.evidenceQuote, null);
      assert.equal(ld4.authorHandle, 'quietuser');
      assert.equal(JSON.stringify(res.body).includes('Secret'), false);
      assert.equal(JSON.stringify(res.body).includes('confidential'), false);
      assert.equal(JSON.stringify(res.body).includes('hidden quote'), false);
    });

    it('orders by score, then postedAt (null last), then id', async () => {
      assert.deepEqual(await list('view=all'), ['ld_3', 'ld_6', 'ld_2', 'ld_1', 'ld_4', 'ld_8', 'ld_7']);
    });

    it('serves each view', async () => {
      assert.deepEqual(await list('view=quality'), where(quality));
      assert.deepEqual(await list('view=all'), where(notDismissed));
      assert.deepEqual(await list('view=archived'), ['ld_5']);
      for (const bad of ['best', 'ALL', '']) {
        const res = await t.get(`/projects/prj_a1/leads?view=${bad}`, token);
        assert.equal(res.status, 422, bad);
        assert.deepEqual(
          res.body.error.details.map((d: { path: string }) => d.path),
          ['query.view'],
        );
      }
    });

    it('filters by each stage, tier and lead type', async () => {
      for (const stage of LEAD_STAGES) {
        assert.deepEqual(
          await list(`stage=${stage}&view=all`),
          where((l) => notDismissed(l) && l.stage === stage),
          stage,
        );
        assert.deepEqual(
          await list(`stage=${stage}`),
          where((l) => quality(l) && l.stage === stage),
          stage,
        );
        assert.deepEqual(
          await list(`stage=${stage}&view=archived`),
          where((l) => l.dismissed && l.stage === stage),
          stage,
        );
      }
      for (const tier of LEAD_TIERS) {
        assert.deepEqual(
          await list(`tier=${tier}&view=all`),
          where((l) => notDismissed(l) && l.tier === tier),
          tier,
        );
        assert.deepEqual(
          await list(`tier=${tier}`),
          where((l) => quality(l) && l.tier === tier),
          tier,
        );
      }
      // The quality view admits hot and warm only, so explore within it is empty.
      assert.deepEqual(await list('tier=explore'), []);
      assert.deepEqual(await list('tier=explore&view=all'), ['ld_3']);
      for (const leadType of LEAD_TYPES) {
        assert.deepEqual(
          await list(`leadType=${leadType}&view=all`),
          where((l) => notDismissed(l) && l.leadType === leadType),
          leadType,
        );
        assert.deepEqual(
          await list(`leadType=${leadType}`),
          where((l) => quality(l) && l.leadType === leadType),
          leadType,
        );
      }
    });

    it('rejects values outside the lists with 422 and details', async () => {
      const cases: [string, string][] = [
        ['stage=done', 'query.stage'],
        ['tier=cold', 'query.tier'],
        ['leadType=spam', 'query.leadType'],
        [`platform=${'p'.repeat(101)}`, 'query.platform'],
        [`search=${'s'.repeat(201)}`, 'query.search'],
        ['limit=0', 'query.limit'],
        ['page=0', 'query.page'],
      ];
      for (const [query, path] of cases) {
        const res = await t.get(`/projects/prj_a1/leads?${query}`, token);
        assert.equal(res.status, 422, query);
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
        assert.deepEqual(
          res.body.error.details.map((d: { path: string }) => d.path),
          [path],
          query,
        );
      }
    });

    it('filters by platform (exact), site, and combinations', async () => {
      assert.deepEqual(await list('platform=hackernews&view=all'), ['ld_3', 'ld_7']);
      assert.deepEqual(await list('platform=hackernews&view=archived'), ['ld_5']);
      assert.deepEqual(await list('platform=x'), ['ld_8']);
      assert.deepEqual(await list('platform=mastodon'), []);
      assert.deepEqual(await list('platform='), where(quality));
      assert.deepEqual(await list('siteId=site_a2&view=all'), ['ld_3', 'ld_8', 'ld_7']);
      assert.deepEqual(await list('siteId=site_a1'), ['ld_6', 'ld_2', 'ld_1', 'ld_4']);
      assert.deepEqual(await list('siteId=site_a1&tier=hot&stage=to_qualify'), ['ld_1', 'ld_4']);
      assert.deepEqual(await list('siteId=site_a2&leadType=describes_problem&platform=x&stage=closed&tier=warm'), [
        'ld_8',
      ]);
    });

    it('answers 404 for a siteId outside the project', async () => {
      for (const siteId of ['site_a3', 'site_b1', 'nope']) {
        const res = await t.get(`/projects/prj_a1/leads?siteId=${siteId}`, token);
        assert.equal(res.status, 404, siteId);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });

    it('searches title, body, authorHandle and evidenceQuote case-insensitively', async () => {
      assert.deepEqual(await list('search=TENT'), ['ld_1']);
      assert.deepEqual(await list('search=alps%20in%20june'), ['ld_1']);
      assert.deepEqual(await list('search=trailfan'), ['ld_1']);
      assert.deepEqual(await list('search=under%20200'), ['ld_1']);
      assert.deepEqual(await list('search=title%20of&view=all'), ['ld_3', 'ld_6', 'ld_2', 'ld_8', 'ld_7']);
      assert.deepEqual(await list('search=no%20such%20words'), []);
      assert.deepEqual(await list('search='), where(quality));
    });

    it("never matches a redacted lead's hidden text, but matches its author", async () => {
      for (const view of ['quality', 'all']) {
        assert.deepEqual(await list(`search=secret&view=${view}`), []);
        assert.deepEqual(await list(`search=confidential&view=${view}`), []);
        assert.deepEqual(await list(`search=hidden%20quote&view=${view}`), []);
      }
      assert.deepEqual(await list('search=quietuser'), ['ld_4']);
      assert.deepEqual(await list('search=QUIET'), ['ld_4']);
    });

    it('searches terms of one and two characters, skipping redacted text too', async () => {
      // "zq" is in ld_4's hidden body and in ld_8's evidence quote.
      assert.deepEqual(await list('search=zq'), ['ld_8']);
      assert.deepEqual(await list('search=Zq&view=all'), ['ld_8']);
      // "#" is in ld_2's body and ld_4's hidden title.
      assert.deepEqual(await list('search=%23'), ['ld_2']);
      // "et" is in ld_4's author handle (shown) and in its hidden title (not searched).
      assert.deepEqual(await list('search=ET'), ['ld_4']);
    });
  });

  describe('GET /leads/{leadId}', () => {
    it('returns the lead under both forms', async () => {
      const a = await t.get('/projects/prj_a1/leads/ld_1', token);
      assert.equal(a.status, 200);
      assert.equal(a.body.data.title, 'Need tent recommendations');
      assert.equal(a.body.data.postedAt, '2026-03-01T10:00:00.000Z');
      const b = await t.get('/workspaces/prj_a1/leads/ld_1', token);
      assert.deepEqual(b.body, a.body);
      const listed = await t.get('/projects/prj_a1/leads?siteId=site_a1&tier=hot&stage=to_qualify', token);
      assert.deepEqual(listed.body.data.data[0], a.body.data);
    });

    it('returns a redacted lead without its text', async () => {
      const res = await t.get('/projects/prj_a1/leads/ld_4', token);
      assert.equal(res.status, 200);
      assert.deepEqual(
        [
          res.body.data.redacted,
          res.body.data.title,
          res.body.data.body,
          res.body.data.evidenceQuote,
          res.body.data.authorHandle,
        ],
        [true, null, null, null, 'quietuser'],
      );
    });

    it('returns a dismissed lead', async () => {
      const res = await t.get('/projects/prj_a1/leads/ld_5', token);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.dismissed, true);
      assert.equal(res.body.data.stage, 'closed');
    });

    it('answers 404 through the wrong project, for another account and for an unknown id', async () => {
      for (const path of [
        '/projects/prj_a2/leads/ld_1',
        '/projects/prj_a1/leads/ld_a3',
        '/projects/prj_a1/leads/ld_b1',
        '/projects/prj_b1/leads/ld_b1',
        '/projects/prj_a1/leads/ld_nope',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });
});

describe('leads of the small fixture', () => {
  let t: TestServer;
  let token: string;
  /** The fixture record as the API shows it: a redacted lead without its text. */
  const expected = (id: string) => {
    const record = SMALL.leads.find((l: { id: string }) => l.id === id);
    return record.redacted ? { ...record, title: null, body: null, evidenceQuote: null } : record;
  };

  before(async () => ({ t, token } = await startRouteServer('small', ['leads:read'])));
  after(() => t?.close());

  it('lists each view of prj_a1 as the fixture has it', async () => {
    const views: [string, string[]][] = [
      ['', ['ld_a1_1', 'ld_a1_3', 'ld_a1_2']],
      ['?view=all', ['ld_a1_1', 'ld_a1_3', 'ld_a1_2', 'ld_a1_5']],
      ['?view=archived', ['ld_a1_4']],
    ];
    for (const [query, ids] of views) {
      const res = await t.get(`/projects/prj_a1/leads${query}`, token);
      assert.equal(res.status, 200, query);
      assert.deepEqual(
        res.body.data.data.map((l: { id: string }) => l.id),
        ids,
        query,
      );
      for (const shown of res.body.data.data) assert.deepEqual(shown, fromFixture(expected(shown.id), shown), shown.id);
    }
  });

  it('shows the redacted lead without its text, and it is not found by it', async () => {
    const res = await t.get('/workspaces/prj_a1/leads/ld_a1_3', token);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, fromFixture(expected('ld_a1_3'), res.body.data));
    assert.equal(res.body.data.title, null);
    const search = await t.get('/projects/prj_a1/leads?search=budget%20for%20new&view=all', token);
    assert.deepEqual(search.body.data.data, []);
  });

  it("keeps acct_b's leads from acct_a", async () => {
    for (const path of [
      '/projects/prj_b1/leads',
      '/projects/prj_a1/leads/ld_b1_1',
      '/projects/prj_a1/leads?siteId=site_b1',
    ]) {
      assert.equal((await t.get(path, token)).status, 404, path);
    }
  });
});
