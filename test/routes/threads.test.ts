/**
 * GET /{group}/{id}/sites/{siteId}/threads and /threads/{threadId}/messages: fields, order
 * (threads newest updatedAt first; messages oldest sentAt first, unsent last), paging across the
 * two parts, the two ids a thread answers to, 404s inside the account.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { T, contact, prospect, routeFixture, thread as threadRecord } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';

const msg = (
  id: string,
  direction: 'inbound' | 'outbound',
  sentAt: string | null,
  extra: Record<string, unknown> = {},
) => ({
  id,
  direction,
  fromEmail: direction === 'inbound' ? 'con_1@example.org' : 'me@acme.test',
  toEmails: [direction === 'inbound' ? 'me@acme.test' : 'con_1@example.org'],
  subject: 'Re: camping gear',
  body: `Body of ${id}`,
  sentAt,
  ...extra,
});
/** The shared thread record, created at T(1) and updated at `updatedAt`. */
const thread = (
  id: string,
  siteId: string,
  prospectId: string,
  contactId: string,
  updatedAt: string,
  extra: Record<string, unknown> = {},
) => threadRecord(id, siteId, prospectId, contactId, { createdAt: T(1), updatedAt, ...extra });

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
  threads: [
    thread('thr_1', 'site_a1', 'prs_1', 'con_1', T(5), {
      status: 'replied',
      outcome: 'positive',
      classification: 'interested',
      messages: [
        // Listed out of order on purpose. Sent: msg_2 (T2) and msg_3 (T2, tie → id), msg_1 (T1 +02:00 = 08:00 UTC, oldest).
        msg('msg_3', 'outbound', T(2)),
        msg('msg_2', 'inbound', T(2), { ccEmails: ['boss@example.org'] }),
        msg('msg_1', 'outbound', '2026-03-01T10:00:00+02:00'),
        // Unsent (sentAt null): after the sent ones, oldest createdAt first.
        msg('msg_q2', 'outbound', null, { status: 'queued', createdAt: T(6), subject: null }),
        msg('msg_q1', 'outbound', null, { status: 'failed', attempts: 5, createdAt: T(4) }),
      ],
    }),
    // Its provider id is thr_1's record id: the record id wins.
    thread('thr_2', 'site_a1', 'prs_2', 'con_2', T(3), {
      threadId: 'thr_1',
      status: 'awaiting_reply',
      messages: [msg('msg_t2', 'outbound', T(3))],
    }),
    // Ties thr_1 on updatedAt: id descending puts thr_3 first.
    thread('thr_3', 'site_a1', 'prs_1', 'con_1', T(5), {
      status: 'closed',
      outcome: 'negative',
      classification: 'bounce',
    }),
    // Its provider id equals thr_1's: a provider id answers only within its own site.
    thread('thr_a2', 'site_a2', 'prs_a2', 'con_a2', T(7), {
      threadId: 'gm-thr_1',
      messages: [msg('msg_a2', 'inbound', T(7))],
    }),
    thread('thr_a3', 'site_a3', 'prs_a3', 'con_a3', T(7), { messages: [msg('msg_a3', 'inbound', T(7))] }),
    thread('thr_b', 'site_b1', 'prs_b', 'con_b', T(7), { messages: [msg('msg_b', 'inbound', T(7))] }),
  ],
});

const THREAD_ORDER = ['thr_3', 'thr_1', 'thr_2'];
const MESSAGE_ORDER = ['msg_1', 'msg_2', 'msg_3', 'msg_q1', 'msg_q2'];

const CON_1 = {
  id: 'con_1',
  fullName: 'Ana Ruiz',
  email: 'con_1@example.org',
  role: 'Editor',
  company: 'Camping Weekly',
};
const PRS_1 = {
  id: 'prs_1',
  title: 'The best camping gear of 2026',
  url: 'https://prs_1.example.org/post',
  domain: 'prs_1.example.org',
};

describe('threads', () => {
  let t: TestServer;
  let token: string;
  const ids = (body: any) => body.data.data.map((d: { id: string }) => d.id);
  const LIST = '/projects/prj_a1/sites/site_a1/threads';

  before(async () => ({ t, token } = await startRouteServer(DOC, ['outreach:read'])));
  after(() => t?.close());

  describe('GET /sites/{siteId}/threads', () => {
    it("lists the site's threads newest updatedAt first with contact and prospect", async () => {
      const res = await t.get(LIST, token);
      assert.equal(res.status, 200);
      assert.deepEqual(ids(res.body), THREAD_ORDER);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 3, hasMore: false });
      assert.deepEqual(res.body.data.data[1], {
        id: 'thr_1',
        threadId: 'gm-thr_1',
        contactId: 'con_1',
        status: 'replied',
        outcome: 'positive',
        classification: 'interested',
        // Counted from the messages at import; the newest sent message of each direction.
        inboundCount: 1,
        outboundCount: 4,
        lastInboundAt: T(2),
        lastOutboundAt: T(2),
        updatedAt: T(5),
        contact: CON_1,
        prospect: PRS_1,
      });
      assert.deepEqual(res.body.data.data[0], {
        id: 'thr_3',
        threadId: 'gm-thr_3',
        contactId: 'con_1',
        status: 'closed',
        outcome: 'negative',
        classification: 'bounce',
        inboundCount: 0,
        outboundCount: 0,
        lastInboundAt: null,
        lastOutboundAt: null,
        updatedAt: T(5),
        contact: CON_1,
        prospect: PRS_1,
      });
      assert.deepEqual(res.body.data.data[2].contact, {
        id: 'con_2',
        fullName: null,
        email: 'con_2@example.org',
        role: null,
        company: null,
      });
      assert.equal(res.body.data.data[2].prospect.title, null);
    });

    it("answers 404 for another account's project, a site of another project and unknown ids", async () => {
      for (const path of [
        '/projects/prj_b1/sites/site_b1/threads',
        '/projects/prj_a1/sites/site_b1/threads',
        '/projects/prj_a1/sites/site_a3/threads',
        '/projects/prj_a2/sites/site_a1/threads',
        '/projects/prj_a1/sites/site_nope/threads',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });

  describe('GET /sites/{siteId}/threads/{threadId}/messages', () => {
    const MESSAGES = '/projects/prj_a1/sites/site_a1/threads/thr_1/messages';

    it('lists the messages oldest sentAt first, unsent ones last by createdAt', async () => {
      const res = await t.get(MESSAGES, token);
      assert.equal(res.status, 200);
      assert.deepEqual(ids(res.body), MESSAGE_ORDER);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 25, total: 5, hasMore: false });
      const [first, second, , failed, queued] = res.body.data.data;
      assert.deepEqual(first, {
        id: 'msg_1',
        direction: 'outbound',
        status: 'sent',
        fromEmail: 'me@acme.test',
        toEmails: ['con_1@example.org'],
        ccEmails: [],
        subject: 'Re: camping gear',
        body: 'Body of msg_1',
        sentAt: '2026-03-01T08:00:00.000Z',
        attempts: 0,
        createdAt: '2026-03-01T08:00:00.000Z',
      });
      assert.deepEqual(second.ccEmails, ['boss@example.org']);
      assert.equal(second.direction, 'inbound');
      assert.deepEqual(failed, {
        id: 'msg_q1',
        direction: 'outbound',
        status: 'failed',
        fromEmail: 'me@acme.test',
        toEmails: ['con_1@example.org'],
        ccEmails: [],
        subject: 'Re: camping gear',
        body: 'Body of msg_q1',
        sentAt: null,
        attempts: 5,
        createdAt: T(4),
      });
      assert.equal(queued.status, 'queued');
      assert.equal(queued.sentAt, null);
      assert.equal(queued.subject, null);
    });

    it('answers identically under /workspaces and by the provider threadId', async () => {
      const a = await t.get(`${MESSAGES}?limit=2&page=2`, token);
      const b = await t.get('/workspaces/prj_a1/sites/site_a1/threads/thr_1/messages?limit=2&page=2', token);
      const c = await t.get('/projects/prj_a1/sites/site_a1/threads/gm-thr_1/messages?limit=2&page=2', token);
      assert.equal(b.status, 200);
      assert.equal(c.status, 200);
      assert.deepEqual(b.body, a.body);
      assert.deepEqual(c.body, a.body);
    });

    it('pages across the sent and unsent messages', async () => {
      const pages: string[][] = [];
      for (let page = 1; page <= 3; page++) {
        const res = await t.get(`${MESSAGES}?limit=2&page=${page}`, token);
        pages.push(ids(res.body));
        assert.deepEqual(res.body.data.pagination, { page, limit: 2, total: 5, hasMore: page < 3 });
      }
      assert.deepEqual(pages, [['msg_1', 'msg_2'], ['msg_3', 'msg_q1'], ['msg_q2']]);
      for (const limit of [1, 3, 4]) {
        const all: string[] = [];
        for (let page = 1; page * limit < 5 + limit; page++)
          all.push(...ids((await t.get(`${MESSAGES}?limit=${limit}&page=${page}`, token)).body));
        assert.deepEqual(all, MESSAGE_ORDER, `limit ${limit}`);
      }
      let res = await t.get(`${MESSAGES}?limit=1`, token);
      assert.deepEqual(res.body.data.pagination, { page: 1, limit: 1, total: 5, hasMore: true });
      res = await t.get(`${MESSAGES}?limit=2&page=4`, token);
      assert.deepEqual(res.body.data, { data: [], pagination: { page: 4, limit: 2, total: 5, hasMore: false } });
      res = await t.get('/projects/prj_a1/sites/site_a1/threads/thr_3/messages', token);
      assert.deepEqual(res.body.data, { data: [], pagination: { page: 1, limit: 25, total: 0, hasMore: false } });
    });

    it('takes the record id first; a provider threadId answers only within its site', async () => {
      const byId = await t.get('/projects/prj_a1/sites/site_a1/threads/thr_1/messages', token);
      assert.deepEqual(ids(byId.body), MESSAGE_ORDER);
      // thr_a2's provider id equals thr_1's: in site_a2 it names thr_a2, in site_a1 thr_1.
      const res = await t.get('/projects/prj_a1/sites/site_a2/threads/gm-thr_1/messages', token);
      assert.deepEqual(ids(res.body), ['msg_a2']);
      const own = await t.get('/projects/prj_a1/sites/site_a1/threads/gm-thr_1/messages?limit=1', token);
      assert.deepEqual(ids(own.body), ['msg_1']);
    });

    it('answers 404 for a thread through the wrong site, project or account', async () => {
      for (const path of [
        '/projects/prj_a1/sites/site_a1/threads/thr_a2/messages',
        '/projects/prj_a1/sites/site_a2/threads/thr_1/messages',
        '/projects/prj_a1/sites/site_a1/threads/gm-thr_a3/messages',
        '/projects/prj_a1/sites/site_a3/threads/thr_a3/messages',
        '/projects/prj_a1/sites/site_a1/threads/thr_b/messages',
        '/projects/prj_a1/sites/site_a1/threads/gm-thr_b/messages',
        '/projects/prj_b1/sites/site_b1/threads/thr_b/messages',
        '/workspaces/prj_b1/sites/site_b1/threads/gm-thr_b/messages',
        '/projects/prj_a1/sites/site_a1/threads/thr_nope/messages',
      ]) {
        const res = await t.get(path, token);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'NOT_FOUND');
      }
    });
  });
});
