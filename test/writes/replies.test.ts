/**
 * POST …/sites/{siteId}/threads/{threadId}/replies and the outbox: acceptance in one transaction
 * with the key, boundaries, the sender rule, and delivery to a real SMTP server on 127.0.0.1 —
 * a refused first attempt retried after the backoff (fake clock) and sent, attempts exhausted
 * and failed, and a permanent refusal failed at once.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { isoAt } from '../../src/domain/clock.js';
import { outboxMessages } from '../../src/repos/outbox.js';
import type { TestServer } from '../helpers/harness.js';
import { chars, row, startSmtp, startWriteServer, type TestSmtp } from './helpers.js';
import { refuseWrites, sqlRun } from '../helpers/sql.js';

const BACKOFF = 1000;
const REPLY = '/projects/prj_a1/sites/site_a1/threads/thr_a1/replies';
const reply = (t: TestServer, token: string, body: Record<string, unknown>, path = REPLY) =>
  t.request('POST', path, { token, body });
const detailPaths = (res: { body: { error: { details?: { path: string }[] } } }) =>
  (res.body.error.details ?? []).map((d) => d.path);

describe('reply to a thread', () => {
  let t: TestServer;
  let smtp: TestSmtp;
  let token: string;
  before(async () => {
    smtp = await startSmtp();
    t = await startWriteServer({
      config: {
        'providers.mail': 'smtp',
        'smtp.host': '127.0.0.1',
        'smtp.port': smtp.port,
        'outbox.backoffMs': BACKOFF,
        'outbox.maxAttempts': 3,
      },
    });
    token = await t.mintToken('acct_a', ['outreach:send', 'outreach:read']);
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });
  beforeEach(async () => {
    t.clock.advance(1);
    await t.server.workers.outbox.drain();
    smtp.received.length = 0;
    smtp.attempts = 0;
    smtp.refuse = () => undefined;
  });
  /** Queues a reply straight into the outbox, without waking the worker (the test drives it). */
  const queue = (body: string) =>
    outboxMessages.enqueue(
      t.store.db,
      {
        threadId: 'thr_a1',
        sender: { id: 'snd_a1', email: 'me@trailgear.example' },
        to: ['ana@valid.test'],
        cc: [],
        subject: 'Re: Guest post idea',
        body,
      },
      isoAt(t.clock.now()),
    );
  // Without an id: the newest message of thr_a1 (each test runs a millisecond later, see beforeEach).
  const message = async (id?: string) =>
    id
      ? await row(t, 'SELECT * FROM thread_messages WHERE id = ?', id)
      : await row(t, "SELECT * FROM thread_messages WHERE thread_id = 'thr_a1' ORDER BY created_at DESC LIMIT 1");

  it('accepts the reply (202 queued), moves the thread counters at once, and delivers it', async () => {
    t.clock.advance(1000);
    const now = isoAt(t.clock.now());
    const res = await reply(t, token, {
      body: 'Thanks! Here is the link.',
      ccEmails: ['boss@trailgear.example'],
      idempotencyKey: 'reply-key-0001',
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual(res.body.data, { threadId: 'thr_a1', status: 'queued' });
    const thread = await row(t, "SELECT * FROM threads WHERE id = 'thr_a1'");
    assert.equal(thread.outbound_count, 2);
    assert.equal(thread.last_outbound_at, now);
    assert.equal(thread.updated_at, now);
    const queued = await message();
    assert.equal(queued.direction, 'outbound');
    assert.equal(queued.subject, 'Re: Guest post idea');
    assert.equal(queued.from_email, 'me@trailgear.example');
    assert.equal(queued.sender_id, 'snd_a1');
    assert.deepEqual(JSON.parse(queued.to_emails), ['ana@valid.test']);
    assert.deepEqual(JSON.parse(queued.cc_emails), ['boss@trailgear.example']);

    await t.server.workers.outbox.drain();
    const sent = await message(queued.id);
    assert.equal(sent.status, 'sent');
    assert.equal(sent.sent_at, now);
    assert.equal(sent.attempts, 1);
    assert.equal(smtp.received.length, 1);
    const mail = smtp.received[0]!;
    assert.equal(mail.from, 'me@trailgear.example');
    assert.deepEqual(mail.to.sort(), ['ana@valid.test', 'boss@trailgear.example']);
    assert.match(mail.raw, /^Subject: Re: Guest post idea$/m);
    assert.match(mail.raw, /^From: Mia from Trail Gear <me@trailgear\.example>$/m);
    assert.match(mail.raw, /^Reply-To: replies@trailgear\.example$/m);
    assert.match(mail.raw, new RegExp(`^Message-ID: <${queued.id}@trailgear\\.example>$`, 'm'));
    assert.match(mail.raw, /Thanks! Here is the link\./);
  });

  it('replays the same key without queueing twice, refuses it for another body, accepts the provider threadId', async () => {
    const first = await reply(
      t,
      token,
      { body: 'One reply only, please.', idempotencyKey: 'reply-key-0002' },
      '/workspaces/prj_a1/sites/site_a1/threads/gmail-thread-123/replies',
    );
    assert.equal(first.status, 202);
    assert.equal(first.body.data.threadId, 'thr_a1');
    const count = async () => (await row(t, "SELECT COUNT(*) AS n FROM thread_messages WHERE thread_id = 'thr_a1'")).n;
    const before = await count();
    const again = await reply(t, token, { body: 'One reply only, please.', idempotencyKey: 'reply-key-0002' });
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(await count(), before);
    const reused = await reply(t, token, { body: 'A different reply body.', idempotencyKey: 'reply-key-0002' });
    assert.equal(reused.status, 422);
    assert.equal(reused.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
    await t.server.workers.outbox.drain();
    assert.equal(smtp.received.length, 1);
  });

  it('retries a refused attempt after the backoff and ends sent', async () => {
    smtp.refuse = (attempt) => (attempt === 1 ? 451 : undefined);
    const res = await reply(t, token, { body: 'Second try will work.', idempotencyKey: 'reply-key-0003' });
    assert.equal(res.status, 202);
    await t.server.workers.outbox.drain();
    const id = (await message()).id;
    let m = await message(id);
    assert.equal(m.status, 'queued');
    assert.equal(m.attempts, 1);
    assert.match(m.last_error, /451/);
    assert.equal(Date.parse(m.next_attempt_at), t.clock.now() + BACKOFF);
    t.clock.advance(BACKOFF - 1);
    await t.server.workers.outbox.drain();
    assert.equal((await message(id)).attempts, 1, 'not before the backoff');
    t.clock.advance(1);
    await t.server.workers.outbox.drain();
    m = await message(id);
    assert.equal(m.status, 'sent');
    assert.equal(m.attempts, 2);
    assert.equal(m.last_error, null);
    assert.equal(smtp.received.length, 1);
  });

  it('fails after outbox.maxAttempts refused attempts, with exponential backoff', async () => {
    smtp.refuse = () => 421;
    await reply(t, token, { body: 'This one will not go out.', idempotencyKey: 'reply-key-0004' });
    await t.server.workers.outbox.drain();
    const id = (await message()).id;
    t.clock.advance(BACKOFF);
    await t.server.workers.outbox.drain();
    assert.equal((await message(id)).attempts, 2);
    assert.equal(Date.parse((await message(id)).next_attempt_at), t.clock.now() + 2 * BACKOFF);
    t.clock.advance(2 * BACKOFF);
    await t.server.workers.outbox.drain();
    const m = await message(id);
    assert.equal(m.status, 'failed');
    assert.equal(m.attempts, 3);
    assert.equal(m.sent_at, null);
    assert.equal(m.next_attempt_at, null);
    assert.equal(smtp.received.length, 0);
  });

  it('fails at once on a permanent (5xx) refusal', async () => {
    smtp.refuse = () => 550;
    await reply(t, token, { body: 'Mailbox does not exist.', idempotencyKey: 'reply-key-0005' });
    await t.server.workers.outbox.drain();
    const m = await message();
    assert.equal(m.status, 'failed');
    assert.equal(m.attempts, 1);
    assert.match(m.last_error, /550/);
  });

  it('never attempts a message more than outbox.maxAttempts times, a stop during the last attempt included', async () => {
    const id = await queue('Interrupted on its last try.');
    // What a process killed during its 3rd (last) attempt leaves: queued, 3 attempts counted,
    // the retry that would have followed already due.
    await sqlRun(
      t.store,
      'UPDATE thread_messages SET attempts = 3, next_attempt_at = ? WHERE id = ?',
      isoAt(t.clock.now() - 1),
      id,
    );
    await t.server.workers.outbox.drain();
    const m = await message(id);
    assert.equal(smtp.attempts, 0, 'no 4th attempt');
    assert.equal(m.status, 'failed');
    assert.equal(m.attempts, 3);
    assert.equal(m.next_attempt_at, null);
    assert.match(m.last_error, /stopped during attempt 3 of 3/);
    t.clock.advance(3_600_000);
    await t.server.workers.outbox.drain();
    assert.equal(smtp.attempts, 0);
  });

  it("records the relay's acceptance before anything else runs; a failure to record it is not a failed delivery", async () => {
    const mail = t.server.app.deps.providers.mail;
    const original = mail.send;
    const seen: string[] = [];
    const statements: string[] = [];
    const untrace = t.store.traceQueries((q) => statements.push(q.sql));
    try {
      // The transport reports acceptance: the next statement is the one that records it, and on
      // SQLite (one connection, no round trip) it has run before the first macrotask after that.
      let accepted = -1;
      mail.send = async (outgoing) => {
        await original.call(mail, outgoing);
        accepted = statements.length;
        const id = /^<([^@]+)@/.exec(outgoing.messageId)![1]!;
        if (t.store.dialect === 'sqlite')
          setImmediate(
            () => void row(t, 'SELECT status FROM thread_messages WHERE id = ?', id).then((r) => seen.push(r.status)),
          );
      };
      await reply(t, token, { body: 'Recorded at once.', idempotencyKey: 'reply-key-0007' });
      await t.server.workers.outbox.drain();
      await new Promise((resolve) => setImmediate(resolve));
      assert.match(statements[accepted] ?? '', /^update "thread_messages" set "status" = (\?|\$1), "sent_at"/);
      if (t.store.dialect === 'sqlite') assert.deepEqual(seen, ['sent']);

      // The relay accepts but the store refuses the update: the attempt stays counted and leased,
      // retried after its backoff (at least once), never marked failed as if the relay had refused.
      const id = await queue('Accepted, not recorded.');
      const allow = await refuseWrites(t.store, 'UPDATE', 'thread_messages', "NEW.status = 'sent'", 'disk I/O error');
      try {
        await assert.rejects(t.server.workers.outbox.runOnce(), /disk I\/O error/);
      } finally {
        await allow();
      }
      let m = await message(id);
      assert.equal(m.status, 'queued');
      assert.equal(m.attempts, 1);
      assert.equal(m.last_error, null);
      // Due again when its lease ends: the backoff, or among instances (PostgreSQL) workers.leaseMs.
      t.clock.advance(t.store.sharedByInstances ? t.server.app.deps.config.workers.leaseMs : BACKOFF);
      await t.server.workers.outbox.drain();
      m = await message(id);
      assert.equal(m.status, 'sent');
      assert.equal(m.attempts, 2);
      const copies = smtp.received.filter((r) => r.raw.includes('Accepted, not recorded.'));
      assert.equal(copies.length, 2, 'at least once: the unrecorded delivery is repeated');
      assert.equal(
        new Set(copies.map((r) => /^Message-ID: (.*)$/m.exec(r.raw)![1])).size,
        1,
        'with the same Message-ID',
      );
    } finally {
      untrace();
      mail.send = original;
    }
  });

  it('shows the delivery status among the thread messages', async () => {
    const res = await t.get('/projects/prj_a1/sites/site_a1/threads/thr_a1/messages?limit=100', token);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const statuses = res.body.data.data
      .filter((m: { direction: string }) => m.direction === 'outbound')
      .map((m: { status: string }) => m.status);
    assert.ok(statuses.includes('sent') && statuses.includes('failed'), statuses.join());
  });

  it('checks body 10–10000, ccEmails (≤ 10 valid addresses) and idempotencyKey 8–160', async () => {
    const cc = (n: number) => Array.from({ length: n }, (_, i) => `cc${i}@trailgear.example`);
    const cases: [Record<string, unknown>, number, string[]][] = [
      [{ body: chars(9), idempotencyKey: 'bounds-key-01' }, 422, ['body.body']],
      [{ body: chars(10), idempotencyKey: 'bounds-key-02' }, 202, []],
      [{ body: chars(10000), idempotencyKey: 'bounds-key-03' }, 202, []],
      [{ body: chars(10001), idempotencyKey: 'bounds-key-04' }, 422, ['body.body']],
      [{ body: chars(10), ccEmails: cc(10), idempotencyKey: 'bounds-key-05' }, 202, []],
      [{ body: chars(10), ccEmails: cc(11), idempotencyKey: 'bounds-key-06' }, 422, ['body.ccEmails']],
      [
        { body: chars(10), ccEmails: ['ok@trailgear.example', 'not an email'], idempotencyKey: 'bounds-key-07' },
        422,
        ['body.ccEmails.1'],
      ],
      [{ body: chars(10), idempotencyKey: chars(7) }, 422, ['body.idempotencyKey']],
      [{ body: chars(10), idempotencyKey: chars(8, 'p') }, 202, []],
      [{ body: chars(10), idempotencyKey: chars(160, 'q') }, 202, []],
      [{ body: chars(10), idempotencyKey: chars(161) }, 422, ['body.idempotencyKey']],
      [{ body: chars(10) }, 422, ['body.idempotencyKey']],
    ];
    for (const [body, status, details] of cases) {
      const res = await reply(t, token, body);
      assert.equal(res.status, status, JSON.stringify(body).slice(0, 100));
      if (status === 422) assert.deepEqual(detailPaths(res), details);
    }
  });

  it('answers 422 when the site has no active sender, storing nothing', async () => {
    const res = await reply(
      t,
      token,
      { body: 'Nobody can send this.', idempotencyKey: 'no-sender-key' },
      '/projects/prj_a1/sites/site_a2/threads/thr_a2/replies',
    );
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'VALIDATION_ERROR');
    assert.match(res.body.error.message, /no active email sender/);
    assert.equal((await row(t, "SELECT COUNT(*) AS n FROM idempotency_keys WHERE key = 'no-sender-key'")).n, 0);
    assert.equal((await row(t, "SELECT outbound_count FROM threads WHERE id = 'thr_a2'")).outbound_count, 0);
  });

  it('answers 404 for a thread through another site', async () => {
    const res = await reply(
      t,
      token,
      { body: 'Wrong parent site.', idempotencyKey: 'wrong-site-key' },
      '/projects/prj_a1/sites/site_a2/threads/thr_a1/replies',
    );
    assert.equal(res.status, 404);
  });
});
