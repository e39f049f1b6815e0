/**
 * The outbox worker's own rules (src/workers/outbox.ts, decisions.md §7, §15) that the reply
 * route's tests leave open: the subject of a reply, the warning and the metric of each delivery
 * attempt, the error a message keeps when its last attempt fails, and the replies a pass gives up
 * for an attempt interrupted by a stop. Real SMTP on 127.0.0.1, a fake clock, and the records read
 * through the API (or, for what the API does not show, the store's query builder).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { isoAt } from '../../src/domain/clock.js';
import type { TestServer } from '../helpers/harness.js';
import { sqliteStore } from '../helpers/stores.js';
import { startSmtp, startWriteServer, type TestSmtp, writesFixture } from './helpers.js';

const BACKOFF = 1000;
const SITE = '/projects/prj_a1/sites/site_a1';
const T1 = '2026-03-02T09:00:00.000Z';
const T2 = '2026-03-03T09:00:00.000Z';

/** A thread of site_a1 whose messages have these subjects, oldest first (a day apart). */
const threadWithSubjects = (id: string, subjects: (string | null)[]) => ({
  id,
  siteId: 'site_a1',
  prospectId: 'pr_a1',
  contactId: 'con_a1',
  threadId: `provider-${id}`,
  status: 'open' as const,
  outcome: 'none' as const,
  classification: 'question' as const,
  createdAt: T1,
  updatedAt: T1,
  messages: subjects.map((subject, i) => ({
    id: `${id}_m${i}`,
    direction: 'inbound' as const,
    status: 'sent' as const,
    fromEmail: 'ana@valid.test',
    toEmails: ['me@trailgear.example'],
    subject,
    body: 'Tell me more.',
    sentAt: i === 0 ? T1 : T2,
    createdAt: T1,
  })),
});

describe('the outbox worker', () => {
  let t: TestServer;
  let smtp: TestSmtp;
  let token: string;
  const logged: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  before(async () => {
    smtp = await startSmtp();
    const fixture = writesFixture();
    fixture.threads!.push(
      threadWithSubjects('thr_inner_re', ['Question re: backlinks']),
      threadWithSubjects('thr_upper_re', ['RE: Hello']),
      threadWithSubjects('thr_spaced', ['  Spaced out  ']),
      threadWithSubjects('thr_blank', ['   ']),
      threadWithSubjects('thr_latest', ['Old subject', 'New subject']),
      threadWithSubjects('thr_latest_null', ['Kept subject', null]),
      threadWithSubjects('thr_no_subject', [null]),
      // An inbound subject as long as a header may be (256 KiB), its last character two UTF-16 units.
      threadWithSubjects('thr_long', [`${'x'.repeat(993)}\u{1F600}${'y'.repeat(256 * 1024)}`]),
    );
    t = await startWriteServer({
      fixture,
      logger: { log: (level, message, fields) => logged.push({ level, message, fields }) },
      config: {
        'providers.mail': 'smtp',
        'smtp.host': '127.0.0.1',
        'smtp.port': smtp.port,
        'outbox.backoffMs': BACKOFF,
        'outbox.maxAttempts': 3,
        'metrics.enabled': true,
      },
    });
    token = await t.mintToken('acct_a', ['outreach:send', 'outreach:read']);
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });
  beforeEach(async () => {
    await t.server.workers.outbox.drain();
    smtp.refuse = () => undefined;
    logged.length = 0;
  });

  /** The outbound messages of `thread`, as the API shows them. */
  const outbound = async (thread: string) => {
    const res = await t.get(`${SITE}/threads/${thread}/messages?limit=100`, token);
    assert.equal(res.status, 200);
    return (res.body.data.data as any[]).filter((m) => m.direction === 'outbound');
  };
  /** Posts a reply to `thread`; resolves with the id of the message it queued. */
  const reply = async (thread: string, key: string): Promise<string> => {
    const known = new Set((await outbound(thread)).map((m) => m.id));
    const res = await t.request('POST', `${SITE}/threads/${thread}/replies`, {
      token,
      body: { body: 'A reply from the outbox test.', idempotencyKey: key },
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const added = (await outbound(thread)).filter((m) => !known.has(m.id));
    assert.equal(added.length, 1);
    return added[0].id;
  };
  /** Message `id` of `thread`, as the API shows it. */
  const message = async (thread: string, id: string) => (await outbound(thread)).find((m) => m.id === id);
  /** The `outreach_outbox_deliveries_total` counters, by result. */
  const deliveries = async () => {
    const text = await (await fetch(`${t.origin}/metrics`)).text();
    const counts = { sent: 0, retry: 0, failed: 0 };
    for (const [, result, value] of text.matchAll(/^outreach_outbox_deliveries_total\{result="(\w+)"\} (\d+)$/gm))
      counts[result as keyof typeof counts] = Number(value);
    return counts;
  };
  const lastError = async (id: string) =>
    (
      await t.store.db
        .selectFrom('thread_messages')
        .select(['last_error', 'status'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).last_error;

  it("gives a reply Re: and the thread's latest subject, trimmed and never doubled, or Re: and the prospect's title; at most 998 characters", async () => {
    const expected: Record<string, string> = {
      thr_inner_re: 'Re: Question re: backlinks',
      thr_upper_re: 'RE: Hello',
      thr_spaced: 'Re: Spaced out',
      thr_blank: 'Re: The 10 best hiking backpacks',
      thr_latest: 'Re: New subject',
      thr_latest_null: 'Re: Kept subject',
      thr_no_subject: 'Re: The 10 best hiking backpacks',
      // RFC 5322's 998 characters, the pair that would be cut in two left out.
      thr_long: `Re: ${'x'.repeat(993)}`,
    };
    for (const [thread, subject] of Object.entries(expected)) {
      const id = await reply(thread, `subject-key-${thread}`);
      assert.equal((await message(thread, id)).subject, subject, thread);
    }
    await t.server.workers.outbox.drain();
    assert.ok(smtp.received.some((mail) => /^Subject: Re: Question re: backlinks$/m.test(mail.raw)));
  });

  it('logs each failed attempt and counts every attempt by result: retry, then sent; failed when given up', async () => {
    const before = await deliveries();
    smtp.refuse = (attempt) => (attempt === 1 ? 451 : undefined);
    smtp.attempts = 0;
    const id = await reply('thr_a1', 'metric-key-0001');
    await t.server.workers.outbox.drain();
    const warning = logged.find((line) => line.message === 'reply delivery attempt failed');
    assert.ok(warning, JSON.stringify(logged));
    assert.equal(warning.level, 'warn');
    assert.deepEqual(Object.keys(warning.fields!).sort(), ['attempt', 'error', 'messageId', 'retryable']);
    assert.deepEqual(
      { ...warning.fields, error: undefined },
      { messageId: id, attempt: 1, retryable: true, error: undefined },
    );
    assert.match(String(warning.fields!.error), /451/);
    assert.deepEqual(await deliveries(), { ...before, retry: before.retry + 1 });
    t.clock.advance(BACKOFF);
    await t.server.workers.outbox.drain();
    assert.equal((await message('thr_a1', id)).status, 'sent');
    assert.deepEqual(await deliveries(), { ...before, retry: before.retry + 1, sent: before.sent + 1 });

    smtp.refuse = () => 550;
    const refused = await reply('thr_a1', 'metric-key-0002');
    await t.server.workers.outbox.drain();
    assert.equal((await message('thr_a1', refused)).status, 'failed');
    assert.deepEqual(await deliveries(), { retry: before.retry + 1, sent: before.sent + 1, failed: before.failed + 1 });
  });

  it('logs a pass that fails in the background with the name of its worker', async () => {
    // Without its table every pass fails (a store that cannot serve): the worker logs it and goes on.
    await sql`ALTER TABLE thread_messages RENAME TO thread_messages_away`.execute(t.store.db);
    try {
      t.server.workers.outbox.wake();
      for (let i = 0; !logged.some((line) => line.message === 'background worker failed'); i++) {
        if (i === 1000) assert.fail(`no failure logged: ${JSON.stringify(logged)}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await sql`ALTER TABLE thread_messages_away RENAME TO thread_messages`.execute(t.store.db);
    }
    const failure = logged.find((line) => line.message === 'background worker failed')!;
    assert.equal(failure.level, 'error');
    assert.deepEqual(Object.keys(failure.fields!).sort(), ['error', 'worker']);
    assert.equal(failure.fields!.worker, 'outbox');
    assert.match(String(failure.fields!.error), /thread_messages/);
  });

  it("keeps the last attempt's refusal as the error of a message that failed after outbox.maxAttempts attempts", async () => {
    smtp.refuse = () => 421;
    const id = await reply('thr_a1', 'last-error-key-01');
    for (const wait of [0, BACKOFF, 2 * BACKOFF]) {
      t.clock.advance(wait);
      await t.server.workers.outbox.drain();
    }
    const m = await message('thr_a1', id);
    assert.deepEqual([m.status, m.attempts], ['failed', 3]);
    assert.match(String(await lastError(id)), /421/);
    const warnings = logged.filter((line) => line.message === 'reply delivery attempt failed');
    assert.deepEqual(
      warnings.map((line) => [line.fields!.attempt, line.fields!.retryable]),
      [
        [1, true],
        [2, true],
        [3, true],
      ],
    );
    assert.ok(!logged.some((line) => /interrupted/.test(line.message)), 'given up by its own last attempt');
  });

  it('gives up, counts and logs once the replies whose last attempt a stop interrupted', async () => {
    // Two replies whose first attempt was refused, both due again; then the first as a process
    // stopped during its 3rd (last) attempt leaves it: queued, 3 attempts counted.
    smtp.refuse = () => 421;
    const interrupted = await reply('thr_a1', 'interrupted-key-01');
    const delivered = await reply('thr_inner_re', 'interrupted-key-02');
    await t.server.workers.outbox.drain();
    smtp.refuse = () => undefined;
    const due = isoAt(t.clock.now() - 1);
    await t.store.db
      .updateTable('thread_messages')
      .set({ attempts: 3, next_attempt_at: due })
      .where('id', '=', interrupted)
      .execute();
    await t.store.db.updateTable('thread_messages').set({ next_attempt_at: due }).where('id', '=', delivered).execute();
    logged.length = 0;
    assert.equal(await t.server.workers.outbox.runOnce(), 2, 'the reply given up and the one delivered');
    assert.equal((await message('thr_a1', interrupted)).status, 'failed');
    assert.equal((await message('thr_inner_re', delivered)).status, 'sent');
    assert.deepEqual(
      logged.filter((line) => /interrupted/.test(line.message)),
      [
        {
          level: 'warn',
          message: 'replies interrupted during their last delivery attempt marked failed',
          fields: { count: 1, maxAttempts: 3 },
        },
      ],
    );
    logged.length = 0;
    assert.equal(await t.server.workers.outbox.runOnce(), 0);
    assert.deepEqual(logged, [], 'a pass with nothing to do logs nothing');
  });

  it('reads no more of a backlog than one batch: each statement on the queue has a LIMIT or names its message', async () => {
    // 25 queued replies, more than a pass takes (20). A statement over every due row (as giving up
    // interrupted replies once was) costs as much as the backlog is long, at every pass, on the
    // event loop: under a burst of replies it held the replies' own answers for tens of ms.
    smtp.refuse = () => 421;
    for (let i = 0; i < 25; i++) await reply('thr_a1', `backlog-key-${String(i).padStart(2, '0')}`);
    smtp.refuse = () => undefined;
    // Any the server attempted meanwhile (refused) is due again after its backoff.
    t.clock.advance(4 * BACKOFF);
    const queries: { sql: string; parameters: readonly unknown[] }[] = [];
    const stop = t.store.traceQueries((q) => queries.push(q));
    try {
      // A pass the last reply woke may have taken some first: this one finds the rest of a batch.
      const handled = await t.server.workers.outbox.runOnce();
      assert.ok(handled > 0 && handled <= 20, `one batch at most: ${handled}`);
    } finally {
      stop();
    }
    const onQueue = queries.filter((q) => /"thread_messages"/.test(q.sql));
    assert.ok(onQueue.length > 20, `the due rows, then a lease and a sent per message: ${onQueue.length}`);
    for (const q of onQueue) {
      // On both stores, by the statement: a LIMIT, or the message's id in its WHERE.
      assert.ok(/ limit (\?|\$\d+)$/.test(q.sql) || /where "id" = (\?|\$\d+)/.test(q.sql), q.sql);
      // On SQLite, by its plan too (PostgreSQL's planner scans tables this small whatever the indexes).
      if (t.store.dialect !== 'sqlite') continue;
      const plan = (
        sqliteStore(t.store)
          .sqlite.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
          .all(...q.parameters) as { detail: string }[]
      )
        .map((r) => r.detail)
        .join('; ');
      assert.ok(/ limit \?$/.test(q.sql) || /thread_messages[^;]*\(id=\?\)/.test(plan), `${q.sql}\n  ${plan}`);
    }
  });
});
