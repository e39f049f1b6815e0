/**
 * GET /{group}/{id}/sites/{siteId}/pipeline: counts by status of the site's prospects, drafts,
 * threads and backlinks (every status present, 0 when none), 404s inside the account.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKLINK_STATUSES, DRAFT_STATUSES, PROSPECT_STATUSES, THREAD_STATUSES } from '../../src/domain/enums.js';
import { backlink, contact, draft, prospect, routeFixture, thread } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';
import { sqlRun } from '../helpers/sql.js';

const DOC = routeFixture({
  prospects: [
    prospect('prs_1', 'site_a1', { status: 'proposed' }),
    prospect('prs_2', 'site_a1', { status: 'proposed' }),
    prospect('prs_3', 'site_a1', { status: 'blocked' }),
    prospect('prs_a3', 'site_a3', { status: 'rejected' }),
    prospect('prs_b', 'site_b1', { status: 'rejected' }),
  ],
  contacts: [
    contact('con_1', 'prs_1'),
    contact('con_2', 'prs_2'),
    contact('con_a3', 'prs_a3'),
    contact('con_b', 'prs_b'),
  ],
  drafts: [
    draft('drf_1', 'site_a1', 'prs_1', 'con_1', { status: 'draft' }),
    draft('drf_2', 'site_a1', 'prs_1', 'con_1', { status: 'approved' }),
    draft('drf_3', 'site_a1', 'prs_2', 'con_2', { status: 'approved' }),
    draft('drf_a3', 'site_a3', 'prs_a3', 'con_a3', { status: 'awaiting_approval' }),
    draft('drf_b', 'site_b1', 'prs_b', 'con_b', { status: 'changes_requested' }),
  ],
  threads: [
    thread('thr_1', 'site_a1', 'prs_1', 'con_1', { status: 'open' }),
    thread('thr_2', 'site_a1', 'prs_2', 'con_2', { status: 'replied' }),
    thread('thr_3', 'site_a1', 'prs_2', 'con_2', { status: 'replied' }),
    thread('thr_4', 'site_a1', 'prs_1', 'con_1', { status: 'closed' }),
    thread('thr_a3', 'site_a3', 'prs_a3', 'con_a3', { status: 'awaiting_reply' }),
  ],
  backlinks: [
    backlink('bl_1', 'site_a1', { status: 'live' }),
    backlink('bl_2', 'site_a1', { status: 'live' }),
    backlink('bl_3', 'site_a1', { status: 'lost' }),
    backlink('bl_4', 'site_a1', { status: 'pending' }),
    backlink('bl_a2', 'site_a2', { status: 'error' }),
    backlink('bl_b', 'site_b1', { status: 'closed' }),
  ],
});

const zeros = (values: readonly string[]) => Object.fromEntries(values.map((v) => [v, 0]));
const EMPTY = {
  prospects: zeros(PROSPECT_STATUSES),
  drafts: zeros(DRAFT_STATUSES),
  threads: zeros(THREAD_STATUSES),
  backlinks: zeros(BACKLINK_STATUSES),
};

describe('pipeline', () => {
  let t: TestServer;
  let token: string;
  const PATH = '/projects/prj_a1/sites/site_a1/pipeline';

  before(async () => ({ t, token } = await startRouteServer(DOC, ['prospects:read'])));
  after(() => t?.close());

  it("counts the site's records by status, every status present", async () => {
    const res = await t.get(PATH, token);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      siteId: 'site_a1',
      prospects: { proposed: 2, rejected: 0, blocked: 1 },
      drafts: { draft: 1, awaiting_approval: 0, changes_requested: 0, approved: 2 },
      threads: { open: 1, awaiting_reply: 0, replied: 2, closed: 1 },
      backlinks: { pending: 1, live: 2, changed: 0, lost: 1, blocked: 0, error: 0, closed: 0 },
    });
  });

  it('counts only the site asked for; zeros for an empty site', async () => {
    let res = await t.get('/projects/prj_a1/sites/site_a2/pipeline', token);
    assert.deepEqual(res.body.data, { siteId: 'site_a2', ...EMPTY, backlinks: { ...EMPTY.backlinks, error: 1 } });
    res = await t.get('/projects/prj_a2/sites/site_a3/pipeline', token);
    assert.deepEqual(res.body.data, {
      siteId: 'site_a3',
      prospects: { ...EMPTY.prospects, rejected: 1 },
      drafts: { ...EMPTY.drafts, awaiting_approval: 1 },
      threads: { ...EMPTY.threads, awaiting_reply: 1 },
      backlinks: EMPTY.backlinks,
    });
    res = await t.get('/projects/prj_b1/sites/site_b1/pipeline', await t.mintToken('acct_b', ['prospects:read']));
    assert.equal(res.body.data.drafts.changes_requested, 1);
    assert.equal(res.body.data.backlinks.closed, 1);
  });

  it('follows writes at once', async () => {
    await sqlRun(t.store, "UPDATE threads SET status = 'closed' WHERE id = 'thr_1'");
    const res = await t.get(PATH, token);
    assert.deepEqual(res.body.data.threads, { open: 0, awaiting_reply: 0, replied: 2, closed: 2 });
  });

  it("answers 404 for another account's project, a site of another project and unknown ids", async () => {
    for (const path of [
      '/projects/prj_b1/sites/site_b1/pipeline',
      '/workspaces/prj_b1/sites/site_b1/pipeline',
      '/projects/prj_a1/sites/site_b1/pipeline',
      '/projects/prj_a1/sites/site_a3/pipeline',
      '/projects/prj_a1/sites/site_nope/pipeline',
      '/projects/prj_nope/sites/site_a1/pipeline',
    ]) {
      const res = await t.get(path, token);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, 'NOT_FOUND');
    }
  });
});
