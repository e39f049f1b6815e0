/**
 * GET /{group}/{id}/sites/{siteId}/drafts and /drafts/{draftId}: fields (message, prospect,
 * contact), status filter, 404s inside the account.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DRAFT_STATUSES, type DraftStatus } from '../../src/domain/enums.js';
import { T, contact, draft as draftRecord, prospect, routeFixture } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';
import { sqlRun } from '../helpers/sql.js';

const message = (id: string, createdAt: string, extra: Record<string, unknown> = {}) => ({
  id,
  subject: `Subject ${id}`,
  body: `Body of ${id}, long enough.`,
  createdAt,
  updatedAt: createdAt,
  ...extra,
});
/** The shared draft record for a guest post, with status `status` and one message, created and updated at `createdAt`. */
const draft = (
  id: string,
  siteId: string,
  prospectId: string,
  contactId: string,
  status: DraftStatus,
  createdAt: string,
  extra: Record<string, unknown> = {},
) =>
  draftRecord(id, siteId, prospectId, contactId, {
    status,
    purpose: 'guest_post',
    createdAt,
    updatedAt: createdAt,
    message: message(`msg_${id}`, createdAt),
    ...extra,
  });

const DOC = routeFixture({
  prospects: [
    prospect('prs_1', 'site_a1', { title: 'The best camping gear of 2026' }),
    prospect('prs_2', 'site_a1', { title: null }),
    prospect('prs_a2', 'site_a2', { title: 'Shop roundup' }),
    prospect('prs_a3', 'site_a3', { title: 'Other' }),
    prospect('prs_b', 'site_b1', { title: 'Bravo' }),
  ],
  contacts: [
    contact('con_1', 'prs_1', { fullName: 'Ana Ruiz', role: 'Editor', company: 'Camping Weekly' }),
    contact('con_2', 'prs_2'),
    contact('con_a2', 'prs_a2'),
    contact('con_a3', 'prs_a3'),
    contact('con_b', 'prs_b'),
  ],
  drafts: [
    draft('drf_1', 'site_a1', 'prs_1', 'con_1', 'draft', T(1), {
      starredAt: '2026-03-02T12:30:00+02:00',
      message: message('msg_drf_1', T(1), {
        updatedAt: T(2),
        personalization: { firstName: 'Ana', topics: ['tents', 'stoves'] },
        groundingSummary: 'Ana wrote a roundup of camping gear.',
        generationProvider: 'template',
        generationModel: 'template-v1',
      }),
    }),
    draft('drf_2', 'site_a1', 'prs_2', 'con_2', 'awaiting_approval', T(2)),
    // drf_3 and drf_4 tie on createdAt: id descending decides.
    draft('drf_3', 'site_a1', 'prs_1', 'con_1', 'changes_requested', T(3)),
    draft('drf_4', 'site_a1', 'prs_2', 'con_2', 'approved', T(3)),
    // No message yet; an offset date-time comes back in UTC.
    draft('drf_5', 'site_a1', 'prs_1', 'con_1', 'draft', '2026-03-04T12:00:00+02:00', { message: null, purpose: null }),
    draft('drf_a2', 'site_a2', 'prs_a2', 'con_a2', 'draft', T(5)),
    draft('drf_a3', 'site_a3', 'prs_a3', 'con_a3', 'draft', T(5)),
    draft('drf_b', 'site_b1', 'prs_b', 'con_b', 'draft', T(5)),
  ],
});

/** site_a1's drafts, newest createdAt first, ties by id descending. */
const ORDER = ['drf_5', 'drf_4', 'drf_3', 'drf_2', 'drf_1'];
const STATUS_OF: Record<string, string> = {
  drf_1: 'draft',
  drf_2: 'awaiting_approval',
  drf_3: 'changes_requested',
  drf_4: 'approved',
  drf_5: 'draft',
};

const DRF_1 = {
  id: 'drf_1',
  prospectId: 'prs_1',
  contactId: 'con_1',
  status: 'draft',
  purpose: 'guest_post',
  starredAt: '2026-03-02T10:30:00.000Z',
  createdAt: T(1),
  updatedAt: T(1),
  message: {
    id: 'msg_drf_1',
    subject: 'Subject msg_drf_1',
    body: 'Body of msg_drf_1, long enough.',
    personalization: { firstName: 'Ana', topics: ['tents', 'stoves'] },
    groundingSummary: 'Ana wrote a roundup of camping gear.',
    generationProvider: 'template',
    generationModel: 'template-v1',
    createdAt: T(1),
    updatedAt: T(2),
  },
  prospect: {
    id: 'prs_1',
    title: 'The best camping gear of 2026',
    url: 'https://prs_1.example.org/post',
    domain: 'prs_1.example.org',
  },
  contact: { id: 'con_1', fullName: 'Ana Ruiz', email: 'con_1@example.org', role: 'Editor', company: 'Camping Weekly' },
};

describe('drafts', () => {
  let t: TestServer;
  let token: string;
  const ids = (body: any) => body.data.data.map((d: { id: string }) => d.id);
  const LIST = '/projects/prj_a1/sites/site_a1/drafts';

  before(async () => ({ t, token } = await startRouteServer(DOC, ['outreach:read'])));
  after(() => t?.close());

  describe('GET /sites/{siteId}/drafts', () => {
    it("lists the site's drafts newest first with message, prospect and contact", async () => {
      const res = await t.get(LIST, token);
      assert.equal(res.status, 200);
      assert.deepEqual(ids(res.body), ORDER);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 5, hasMore: false });
      assert.deepEqual(res.body.data.data[4], DRF_1);
      assert.deepEqual(res.body.data.data[0], {
        id: 'drf_5',
        prospectId: 'prs_1',
        contactId: 'con_1',
        status: 'draft',
        purpose: null,
        starredAt: null,
        createdAt: '2026-03-04T10:00:00.000Z',
        updatedAt: '2026-03-04T10:00:00.000Z',
        message: null,
        prospect: DRF_1.prospect,
        contact: DRF_1.contact,
      });
      // A prospect without a title and a contact without name, role or company.
      assert.deepEqual(res.body.data.data[3].prospect, {
        id: 'prs_2',
        title: null,
        url: 'https://prs_2.example.org/post',
        domain: 'prs_2.example.org',
      });
      assert.deepEqual(res.body.data.data[3].contact, {
        id: 'con_2',
        fullName: null,
        email: 'con_2@example.org',
        role: null,
        company: null,
      });
      assert.deepEqual(res.body.data.data[3].message.personalization, {});
    });

    it('filters by each status value', async () => {
      for (const status of DRAFT_STATUSES) {
        const res = await t.get(`${LIST}?status=${status}`, token);
        assert.equal(res.status, 200, status);
        const expected = ORDER.filter((id) => STATUS_OF[id] === status);
        assert.deepEqual(ids(res.body), expected, status);
        assert.equal(res.body.data.pagination.total, expected.length, status);
      }
    });

    it('rejects an unknown status with 422 and details, before any lookup', async () => {
      for (const bad of ['sent', 'DRAFT', '']) {
        const res = await t.get(`${LIST}?status=${bad}`, token);
        assert.equal(res.status, 422, bad);
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
        assert.deepEqual(
          res.body.error.details.map((d: { path: string }) => d.path),
          ['query.status'],
        );
      }
      const res = await t.get('/projects/prj_b1/sites/site_b1/drafts?status=sent', token);
      assert.equal(res.status, 422);
    });

    it("answers 404 for another account's project, a site of another project and unknown ids", async () => {
      for (const path of [
        '/projects/prj_b1/sites/site_b1/drafts',
        '/workspaces/prj_b1/sites/site_b1/drafts',
        '/projects/prj_a1/sites/site_b1/drafts',
        '/projects/prj_a1/sites/site_a3/drafts',
        '/projects/prj_a1/sites/site_nope/drafts',
        '/projects/prj_nope/sites/site_a1/drafts',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });

  describe('GET /sites/{siteId}/drafts/{draftId}', () => {
    it('returns the draft with its current message, prospect and contact', async () => {
      const res = await t.get('/projects/prj_a1/sites/site_a1/drafts/drf_1', token);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data, DRF_1);
      const none = await t.get('/projects/prj_a1/sites/site_a1/drafts/drf_5', token);
      assert.equal(none.status, 200);
      assert.equal(none.body.data.message, null);
    });

    it('shows the message drafts.message_id points at, not an older one', async () => {
      const now = T(9);
      await sqlRun(
        t.store,
        "INSERT INTO draft_messages (id, draft_id, subject, body, created_at, updated_at) VALUES ('msg_drf_2_old', 'drf_2', 'Old', 'Old body text here', ?, ?)",
        now,
        now,
      );
      const res = await t.get('/projects/prj_a1/sites/site_a1/drafts/drf_2', token);
      assert.equal(res.body.data.message.id, 'msg_drf_2');
    });

    it('answers 404 for a draft through the wrong site, project or account', async () => {
      for (const path of [
        '/projects/prj_a1/sites/site_a1/drafts/drf_a2',
        '/projects/prj_a1/sites/site_a2/drafts/drf_1',
        '/projects/prj_a1/sites/site_a1/drafts/drf_a3',
        '/projects/prj_a1/sites/site_a3/drafts/drf_a3',
        '/projects/prj_a1/sites/site_a1/drafts/drf_b',
        '/projects/prj_b1/sites/site_b1/drafts/drf_b',
        '/workspaces/prj_b1/sites/site_b1/drafts/drf_b',
        '/projects/prj_a1/sites/site_a1/drafts/drf_nope',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });
});
