/**
 * POST …/prospects/{prospectId}/contact-discovery and …/sites/{siteId}/contacts/{contactId}/verify:
 * outcomes with the offline providers and their magic inputs, the discovery worker, the http
 * verifier adapter, idempotency (replay, reuse, in-flight conflict, release on failure), the
 * plan gate and the body rules.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_SCOPES, type TestServer } from '../helpers/harness.js';
import { chars, gate, row, sendJson, startHttp, startWriteServer, type TestHttp } from './helpers.js';
import { sqlRun } from '../helpers/sql.js';

const discover = (
  t: TestServer,
  token: string,
  prospectId: string,
  idempotencyKey: string,
  group = 'projects/prj_a1',
) => t.request('POST', `/${group}/prospects/${prospectId}/contact-discovery`, { token, body: { idempotencyKey } });
const verify = (
  t: TestServer,
  token: string,
  contactId: string,
  idempotencyKey: string,
  site = 'site_a1',
  group = 'projects/prj_a1',
) => t.request('POST', `/${group}/sites/${site}/contacts/${contactId}/verify`, { token, body: { idempotencyKey } });
const count = async (t: TestServer, sql: string, ...params: unknown[]) =>
  Number((await row<{ n: number }>(t, `SELECT COUNT(*) AS n FROM (${sql}) AS q`, ...params)).n);

describe('contact discovery', () => {
  let t: TestServer;
  let token: string;
  before(async () => {
    t = await startWriteServer();
    token = await t.mintToken('acct_a', ['contacts:write']);
  });
  after(() => t.close());

  it('creates the best contact from the stored contact paths (200 created)', async () => {
    const res = await discover(t, token, 'pr_a1', 'disc-key-0001');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { outcome, contact, job } = res.body.data;
    assert.equal(outcome, 'created');
    assert.equal(job, null);
    assert.equal(contact.email, 'editor@hikingblog.example');
    assert.equal(contact.fullName, 'Eve Editor');
    assert.equal(contact.role, 'Editor');
    assert.equal(contact.source, 'contact_discovery');
    assert.equal(contact.sourceProvider, 'builtin');
    assert.equal(contact.sourceReference, 'contactPaths[0]');
    assert.equal(contact.verificationStatus, 'unverified');
    assert.equal(
      (await row(t, 'SELECT prospect_id, site_id FROM contacts WHERE id = ?', contact.id)).site_id,
      'site_a1',
    );
  });

  it('replays the same key and request without running twice, and refuses the key for another request', async () => {
    const first = await discover(t, token, 'pr_text', 'disc-key-0002');
    assert.equal(first.status, 200);
    assert.equal(first.body.data.contact.email, 'hello@textonly.example');
    assert.equal(first.body.data.contact.sourceReference, 'contentExcerpt');
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await discover(t, token, 'pr_text', 'disc-key-0002');
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(await count(t, "SELECT 1 FROM contacts WHERE prospect_id = 'pr_text'"), 1);
    // The workspace form is the same operation: the key is shared.
    const twin = await discover(t, token, 'pr_text', 'disc-key-0002', 'workspaces/prj_a1');
    assert.equal(twin.headers.get('idempotent-replayed'), 'true');
    const reused = await discover(t, token, 'pr_a1', 'disc-key-0002');
    assert.equal(reused.status, 422);
    assert.equal(reused.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('keys are per account: another account may use the same key', async () => {
    await sqlRun(t.store, "UPDATE accounts SET plan = 'lifetime' WHERE id = 'acct_b'");
    try {
      const res = await discover(
        t,
        await t.mintToken('acct_b', ['contacts:write']),
        'pr_b1',
        'disc-key-0002',
        'projects/prj_b1',
      );
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('idempotent-replayed'), null);
    } finally {
      await sqlRun(t.store, "UPDATE accounts SET plan = 'free' WHERE id = 'acct_b'");
    }
  });

  it('answers existing when the prospect already has the address (case-insensitive)', async () => {
    const res = await discover(t, token, 'pr_mailto', 'disc-key-0003');
    assert.equal(res.status, 200);
    assert.equal(res.body.data.outcome, 'existing');
    assert.equal(res.body.data.contact.id, 'con_mailto');
    assert.equal(await count(t, "SELECT 1 FROM contacts WHERE prospect_id = 'pr_mailto'"), 1);
  });

  it('answers not_found (200, contact null) for a *.notfound.test prospect', async () => {
    const res = await discover(t, token, 'pr_notfound', 'disc-key-0004');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, { outcome: 'not_found', contact: null, job: null });
  });

  it('queues a *.queued.test prospect (202) and the discovery worker completes the job with the contact', async () => {
    const res = await discover(t, token, 'pr_queued', 'disc-key-0005');
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const { outcome, contact, job } = res.body.data;
    assert.equal(outcome, 'queued');
    assert.equal(contact, null);
    assert.equal(job.type, 'contact_discovery');
    assert.equal(job.status, 'queued');
    assert.equal(job.subjectType, 'prospect');
    assert.equal(job.subjectId, 'pr_queued');
    assert.equal(job.currentAttempt, 0);
    assert.equal((await row(t, 'SELECT site_id FROM discovery_jobs WHERE id = ?', job.id)).site_id, 'site_a1');
    await t.server.workers.discovery.drain();
    const done = await row(t, 'SELECT * FROM discovery_jobs WHERE id = ?', job.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.current_attempt, 1);
    assert.ok(done.completed_at);
    assert.equal(
      (await row(t, "SELECT email FROM contacts WHERE prospect_id = 'pr_queued'")).email,
      'later@blog.queued.test',
    );
    // A replay still tells what was answered then.
    const again = await discover(t, token, 'pr_queued', 'disc-key-0005');
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.data.job.status, 'queued');
  });

  it('fails the job when nothing is found', async () => {
    const res = await discover(t, token, 'pr_queued_empty', 'disc-key-0006');
    assert.equal(res.status, 202);
    await t.server.workers.discovery.drain();
    const job = await row(t, 'SELECT * FROM discovery_jobs WHERE id = ?', res.body.data.job.id);
    assert.equal(job.status, 'failed');
    assert.match(job.last_error, /no contact address/);
  });

  it('answers 404 for a prospect of another project or account, before the plan gate', async () => {
    assert.equal((await discover(t, token, 'pr_b1', 'disc-key-0007')).status, 404);
    assert.equal((await discover(t, token, 'pr_missing', 'disc-key-0007')).status, 404);
    const free = await t.mintToken('acct_b', ['contacts:write']);
    assert.equal((await discover(t, free, 'pr_a1', 'disc-key-0007', 'projects/prj_b1')).status, 404);
  });

  it('validates idempotencyKey length 8–160', async () => {
    for (const [key, status] of [
      [chars(7), 422],
      [chars(8, 'k'), 200],
      [chars(160, 'm'), 200],
      [chars(161), 422],
    ] as const) {
      const res = await discover(t, token, 'pr_notfound', key);
      assert.equal(res.status, status, `key of ${key.length}`);
      if (status === 422)
        assert.deepEqual(
          res.body.error.details.map((d: { path: string }) => d.path),
          ['body.idempotencyKey'],
        );
    }
    const missing = await t.request('POST', '/projects/prj_a1/prospects/pr_a1/contact-discovery', { token, body: {} });
    assert.equal(missing.status, 422);
  });

  it('requires contacts:write', async () => {
    const other = await t.mintToken(
      'acct_a',
      ALL_SCOPES.filter((s) => s !== 'contacts:write'),
    );
    const res = await discover(t, other, 'pr_a1', 'disc-key-0008');
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'SCOPE_REQUIRED');
  });
});

describe('verify contact (builtin verifier)', () => {
  let t: TestServer;
  let token: string;
  before(async () => {
    t = await startWriteServer();
    token = await t.mintToken('acct_a', ['contacts:write']);
  });
  after(() => t.close());

  it('sets the status of each magic domain and lastVerifiedAt', async () => {
    const now = new Date(t.clock.now()).toISOString();
    const expected = {
      con_a1: 'valid',
      con_invalid: 'invalid',
      con_risky: 'risky',
      con_unknown: 'unknown',
      con_disposable: 'risky',
    };
    for (const [id, status] of Object.entries(expected)) {
      const res = await verify(t, token, id, `verify-${id}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.id, id);
      assert.equal(res.body.data.verificationStatus, status, id);
      assert.equal(res.body.data.lastVerifiedAt, now);
      assert.equal(res.body.data.updatedAt, now);
      assert.equal(
        (await row(t, 'SELECT verification_status FROM contacts WHERE id = ?', id)).verification_status,
        status,
      );
    }
  });

  it('answers 404 for a contact of another site, in both forms', async () => {
    assert.equal((await verify(t, token, 'con_a2', 'verify-wrong-site')).status, 404);
    assert.equal((await verify(t, token, 'con_a2', 'verify-wrong-site', 'site_a1', 'workspaces/prj_a1')).status, 404);
    const ok = await verify(t, token, 'con_a2', 'verify-right-site', 'site_a2', 'workspaces/prj_a1');
    assert.equal(ok.status, 200);
  });
});

describe('verify contact (http verifier)', () => {
  let t: TestServer;
  let service: TestHttp;
  let token: string;
  let hold: ReturnType<typeof gate> | undefined;
  let answer: { status: number; body: unknown } = { status: 200, body: { status: 'deliverable' } };
  before(async () => {
    service = await startHttp(async (_req, res) => {
      if (hold) await hold.promise;
      sendJson(res, answer.status, answer.body);
    });
    process.env.OUTREACH_TEST_VERIFIER_KEY = 'vk-local'; // the http verifier needs its key variable set
    t = await startWriteServer({
      config: {
        'providers.verifier': 'http',
        'verifier.httpUrl': `${service.url}/verify`,
        'verifier.httpApiKeyEnv': 'OUTREACH_TEST_VERIFIER_KEY',
      },
    });
    token = await t.mintToken('acct_a', ['contacts:write']);
  });
  after(async () => {
    await t.close();
    await service.close();
  });

  it('POSTs the address as JSON and maps the service words', async () => {
    for (const [word, status] of [
      ['deliverable', 'valid'],
      ['undeliverable', 'invalid'],
      ['catch-all', 'risky'],
      ['timeout', 'unknown'],
    ]) {
      answer = { status: 200, body: { data: { result: word } } };
      const res = await verify(t, token, 'con_a1', `http-verify-${word}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.verificationStatus, status, word);
    }
    const last = service.requests.at(-1)!;
    assert.equal(last.method, 'POST');
    assert.deepEqual(JSON.parse(last.body), { email: 'ana@valid.test' });
  });

  it('answers 409 to a second request with the key while the first is in flight, then replays', async () => {
    answer = { status: 200, body: { status: 'valid' } };
    hold = gate();
    const first = verify(t, token, 'con_risky', 'in-flight-key-1');
    while (!service.requests.some((r) => r.body.includes('carl@risky.test')))
      await new Promise((r) => setTimeout(r, 5));
    const second = await verify(t, token, 'con_risky', 'in-flight-key-1');
    assert.equal(second.status, 409);
    assert.equal(second.body.error.code, 'IDEMPOTENCY_CONFLICT');
    hold.open();
    hold = undefined;
    const done = await first;
    assert.equal(done.status, 200);
    assert.equal(done.body.data.verificationStatus, 'valid');
    const replay = await verify(t, token, 'con_risky', 'in-flight-key-1');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, done.body);
  });

  it('a provider failure is a 500 that releases the key', async () => {
    answer = { status: 503, body: { error: 'down' } };
    const failed = await verify(t, token, 'con_unknown', 'release-key-1');
    assert.equal(failed.status, 500);
    assert.equal(failed.body.error.code, 'INTERNAL_ERROR');
    assert.equal((await row(t, "SELECT COUNT(*) AS n FROM idempotency_keys WHERE key = 'release-key-1'")).n, 0);
    assert.equal(
      (await row(t, "SELECT verification_status FROM contacts WHERE id = 'con_unknown'")).verification_status,
      'unverified',
    );
    answer = { status: 200, body: { status: 'risky' } };
    const retried = await verify(t, token, 'con_unknown', 'release-key-1');
    assert.equal(retried.status, 200);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    assert.equal(retried.body.data.verificationStatus, 'risky');
  });
});
