/**
 * decisions.md §7 "a stored answer is replayed before any check that depends on the current state
 * of the data": for each of the four keyed writes, an accepted request whose data changed since
 * (a sender paused, the plan expired, a draft edited, a contact verified) is answered again with
 * its stored status and body and `Idempotent-Replayed: true`, while a new key meets the checks
 * in the order of §3. The same request under the other path form or the thread's provider
 * `threadId` is the same request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isoAt } from '../../src/domain/clock.js';
import type { TestResponse, TestServer } from '../helpers/harness.js';
import { row, startWriteServer } from './helpers.js';
import { sqlRun } from '../helpers/sql.js';

type Send = (key: string, body?: Record<string, unknown>, form?: 'projects' | 'workspaces') => Promise<TestResponse>;

describe('idempotent replay comes before the checks of the current data', () => {
  let t: TestServer;
  let tokenA: string;
  let tokenC: string;
  before(async () => {
    t = await startWriteServer();
    tokenA = await t.mintToken('acct_a', ['outreach:send', 'outreach:write', 'contacts:write']);
    tokenC = await t.mintToken('acct_c', ['outreach:send', 'outreach:write', 'contacts:write']);
  });
  after(() => t.close());

  const replayed = async (
    send: Send,
    key: string,
    body?: Record<string, unknown>,
    form?: 'projects' | 'workspaces',
  ) => {
    const res = await send(key, body, form);
    assert.equal(res.headers.get('idempotent-replayed'), 'true', JSON.stringify(res.body));
    return res;
  };

  it('reply: the 202 is replayed after the sender was paused, by record id or provider threadId', async () => {
    const send: Send = (key, body = { body: 'Happy to send the link over.' }, form = 'projects') =>
      t.request(
        'POST',
        `/${form}/prj_a1/sites/site_a1/threads/${key.endsWith('-alias') ? 'gmail-thread-123' : 'thr_a1'}/replies`,
        {
          token: tokenA,
          body: { ...body, idempotencyKey: key },
        },
      );
    const first = await send('replay-reply-alias', undefined, 'workspaces');
    assert.equal(first.status, 202, JSON.stringify(first.body));
    const queued = (await row<{ n: number }>(t, "SELECT COUNT(*) AS n FROM thread_messages WHERE thread_id = 'thr_a1'"))
      .n;
    await sqlRun(t.store, "UPDATE email_senders SET status = 'paused' WHERE id = 'snd_a1'");
    try {
      const again = await replayed(send, 'replay-reply-alias');
      assert.equal(again.status, 202);
      assert.deepEqual(again.body, first.body);
      assert.equal(
        (await row<{ n: number }>(t, "SELECT COUNT(*) AS n FROM thread_messages WHERE thread_id = 'thr_a1'")).n,
        queued,
        'nothing queued twice',
      );
      // The same thread named by its record id under the project form: the same request.
      const byId = await t.request('POST', '/projects/prj_a1/sites/site_a1/threads/thr_a1/replies', {
        token: tokenA,
        body: { body: 'Happy to send the link over.', idempotencyKey: 'replay-reply-alias' },
      });
      assert.equal(byId.status, 202);
      assert.equal(byId.headers.get('idempotent-replayed'), 'true');
      // Another body under that key is still refused; a new key meets the sender rule.
      const reused = await send('replay-reply-alias', { body: 'Something else entirely.' });
      assert.equal(reused.body.error?.code, 'IDEMPOTENCY_KEY_REUSED');
      const fresh = await send('replay-reply-new');
      assert.equal(fresh.status, 422);
      assert.equal(fresh.body.error.code, 'VALIDATION_ERROR');
    } finally {
      await sqlRun(t.store, "UPDATE email_senders SET status = 'active' WHERE id = 'snd_a1'");
    }
  });

  describe('every keyed write replays after the plan expired (a new key is 402)', () => {
    const writes: [string, Send][] = [
      [
        'reply',
        (key, body = { body: 'A reply before the plan ran out.' }, form = 'projects') =>
          t.request('POST', `/${form}/prj_c1/sites/site_c1/threads/thr_c1/replies`, {
            token: tokenC,
            body: { ...body, idempotencyKey: key },
          }),
      ],
      [
        'regenerate',
        (key, body = { instruction: 'Shorter, please.' }, form = 'projects') =>
          t.request('POST', `/${form}/prj_c1/sites/site_c1/drafts/drf_c1/regenerate`, {
            token: tokenC,
            body,
            headers: { 'idempotency-key': key },
          }),
      ],
      [
        'contact discovery',
        (key, body = {}, form = 'projects') =>
          t.request('POST', `/${form}/prj_c1/prospects/pr_c1/contact-discovery`, {
            token: tokenC,
            body: { ...body, idempotencyKey: key },
          }),
      ],
      [
        'verify',
        (key, body = {}, form = 'projects') =>
          t.request('POST', `/${form}/prj_c1/sites/site_c1/contacts/con_c1/verify`, {
            token: tokenC,
            body: { ...body, idempotencyKey: key },
          }),
      ],
    ];
    const firsts = new Map<string, TestResponse>();
    before(async () => {
      await sqlRun(
        t.store,
        "UPDATE accounts SET plan_expires_at = ? WHERE id = 'acct_c'",
        isoAt(t.clock.now() + 60_000),
      );
      for (const [name, send] of writes) {
        const first = await send(`before-expiry-${name.replace(' ', '-')}`);
        assert.ok(first.status < 300, `${name}: ${JSON.stringify(first.body)}`);
        firsts.set(name, first);
      }
      t.clock.advance(120_000);
    });

    for (const [name, send] of writes) {
      it(name, async () => {
        const key = `before-expiry-${name.replace(' ', '-')}`;
        const first = firsts.get(name)!;
        const again = await replayed(send, key);
        assert.equal(again.status, first.status);
        assert.deepEqual(again.body, first.body);
        await replayed(send, key, undefined, 'workspaces');
        const fresh = await send(`after-expiry-${name.replace(' ', '-')}`);
        assert.equal(fresh.status, 402, JSON.stringify(fresh.body));
        assert.equal(fresh.body.error.code, 'UPGRADE_REQUIRED');
      });
    }
  });

  it('regenerate and verify replay their first answer after the draft or the contact changed', async () => {
    const regenerate = () =>
      t.request('POST', '/projects/prj_a1/sites/site_a1/drafts/drf_a1/regenerate', {
        token: tokenA,
        body: { instruction: 'Mention the spring sale.' },
        headers: { 'idempotency-key': 'replay-regenerate' },
      });
    const first = await regenerate();
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const edited = await t.request('PATCH', '/projects/prj_a1/sites/site_a1/drafts/drf_a1', {
      token: tokenA,
      body: { subject: 'Edited since', body: 'The draft was edited after it was regenerated.' },
    });
    assert.equal(edited.status, 200);
    const again = await regenerate();
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);

    const verify = () =>
      t.request('POST', '/projects/prj_a1/sites/site_a1/contacts/con_risky/verify', {
        token: tokenA,
        body: { idempotencyKey: 'replay-verify' },
      });
    const verified = await verify();
    assert.equal(verified.status, 200);
    await sqlRun(t.store, "UPDATE contacts SET verification_status = 'valid' WHERE id = 'con_risky'");
    const replay = await verify();
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, verified.body);
  });
});
