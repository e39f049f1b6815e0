/**
 * GET /{group}/{id}/sites/{siteId}/email-accounts: connections and senders (not paginated),
 * fields, order, 404s inside the account.
 * What every list or route shares (paging, 422s for page/limit, order, /workspaces twins,
 * scope, other accounts' 404s) is in test/http/lists.test.ts and test/http/access.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { T, routeFixture } from '../helpers/fixture.js';
import { startRouteServer, type TestServer } from '../helpers/harness.js';

const connection = (id: string, siteId: string, createdAt: string, extra: Record<string, unknown> = {}) => ({
  id,
  siteId,
  provider: 'gmail',
  status: 'connected',
  accountEmail: `${id}@acme.test`,
  createdAt,
  updatedAt: createdAt,
  ...extra,
});
const sender = (
  id: string,
  siteId: string,
  connectionId: string,
  createdAt: string,
  extra: Record<string, unknown> = {},
) => ({
  id,
  siteId,
  connectionId,
  status: 'active',
  email: `${id}@acme.test`,
  createdAt,
  updatedAt: createdAt,
  ...extra,
});

const DOC = routeFixture({
  emailConnections: [
    connection('conn_1', 'site_a1', T(1), {
      providerRegion: 'eu',
      connectedAt: '2026-03-01T12:00:00+02:00',
      lastTestedAt: T(3),
      updatedAt: T(3),
    }),
    connection('conn_2', 'site_a1', T(2), { provider: 'smtp', status: 'error', hasError: true }),
    connection('conn_a3', 'site_a3', T(2)),
    connection('conn_b', 'site_b1', T(2)),
  ],
  emailSenders: [
    sender('snd_1', 'site_a1', 'conn_1', T(1), {
      source: 'oauth',
      verificationStatus: 'verified',
      displayName: 'Ana at Acme',
      replyToEmail: 'replies@acme.test',
      dailyLimit: 40,
      healthStatus: 'healthy',
      warmupStatus: 'warmed',
      healthScore: 97.5,
    }),
    // Ties snd_1 on createdAt: id descending puts snd_2 first.
    sender('snd_2', 'site_a1', 'conn_2', T(1), { status: 'paused' }),
    sender('snd_3', 'site_a1', 'conn_1', T(3), {
      status: 'disabled',
      warmupStatus: 'paused',
      healthStatus: 'unhealthy',
    }),
    sender('snd_a3', 'site_a3', 'conn_a3', T(2)),
    sender('snd_b', 'site_b1', 'conn_b', T(2)),
  ],
});

describe('email accounts', () => {
  let t: TestServer;
  let token: string;
  const ids = (items: { id: string }[]) => items.map((d) => d.id);
  const PATH = '/projects/prj_a1/sites/site_a1/email-accounts';

  before(async () => ({ t, token } = await startRouteServer(DOC, ['outreach:read'])));
  after(() => t?.close());

  it('returns every connection and sender of the site, newest first, not paginated', async () => {
    const res = await t.get(PATH, token);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body.data).sort(), ['connections', 'senders']);
    assert.deepEqual(ids(res.body.data.connections), ['conn_2', 'conn_1']);
    assert.deepEqual(ids(res.body.data.senders), ['snd_3', 'snd_2', 'snd_1']);
    assert.deepEqual(res.body.data.connections[1], {
      id: 'conn_1',
      provider: 'gmail',
      status: 'connected',
      accountEmail: 'conn_1@acme.test',
      providerRegion: 'eu',
      hasError: false,
      connectedAt: T(1),
      lastTestedAt: T(3),
      createdAt: T(1),
      updatedAt: T(3),
    });
    assert.deepEqual(res.body.data.connections[0], {
      id: 'conn_2',
      provider: 'smtp',
      status: 'error',
      accountEmail: 'conn_2@acme.test',
      providerRegion: null,
      hasError: true,
      connectedAt: null,
      lastTestedAt: null,
      createdAt: T(2),
      updatedAt: T(2),
    });
    assert.deepEqual(res.body.data.senders[2], {
      id: 'snd_1',
      connectionId: 'conn_1',
      source: 'oauth',
      status: 'active',
      verificationStatus: 'verified',
      displayName: 'Ana at Acme',
      email: 'snd_1@acme.test',
      replyToEmail: 'replies@acme.test',
      dailyLimit: 40,
      healthStatus: 'healthy',
      warmupStatus: 'warmed',
      healthScore: 97.5,
      createdAt: T(1),
      updatedAt: T(1),
    });
    assert.deepEqual(res.body.data.senders[1], {
      id: 'snd_2',
      connectionId: 'conn_2',
      source: null,
      status: 'paused',
      verificationStatus: null,
      displayName: null,
      email: 'snd_2@acme.test',
      replyToEmail: null,
      dailyLimit: null,
      healthStatus: null,
      warmupStatus: null,
      healthScore: null,
      createdAt: T(1),
      updatedAt: T(1),
    });
  });

  it('ignores page and limit (not a paginated list)', async () => {
    const res = await t.get(`${PATH}?page=2&limit=1`, token);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.senders.length, 3);
  });

  it('returns empty lists for a site without accounts; only the site asked for', async () => {
    let res = await t.get('/projects/prj_a1/sites/site_a2/email-accounts', token);
    assert.deepEqual(res.body.data, { connections: [], senders: [] });
    res = await t.get('/projects/prj_a2/sites/site_a3/email-accounts', token);
    assert.deepEqual(ids(res.body.data.connections), ['conn_a3']);
    assert.deepEqual(ids(res.body.data.senders), ['snd_a3']);
    res = await t.get('/projects/prj_b1/sites/site_b1/email-accounts', await t.mintToken('acct_b', ['outreach:read']));
    assert.deepEqual(ids(res.body.data.senders), ['snd_b']);
  });

  it("answers 404 for another account's project, a site of another project and unknown ids", async () => {
    for (const path of [
      '/projects/prj_b1/sites/site_b1/email-accounts',
      '/workspaces/prj_b1/sites/site_b1/email-accounts',
      '/projects/prj_a1/sites/site_b1/email-accounts',
      '/projects/prj_a1/sites/site_a3/email-accounts',
      '/projects/prj_a2/sites/site_a1/email-accounts',
      '/projects/prj_a1/sites/site_nope/email-accounts',
      '/projects/prj_nope/sites/site_a1/email-accounts',
    ]) {
      const res = await t.get(path, token);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, 'NOT_FOUND');
    }
  });
});
