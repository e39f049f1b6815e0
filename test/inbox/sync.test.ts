/**
 * The inbox sync against a real Dovecot (decisions.md §17): each rule that finds a message's
 * thread, each classification row with what it changes on the thread and the contact, messages
 * stored once (twice in the mailbox, a second pass, a pass after a crash that lost the mailbox's
 * position, a changed UIDVALIDITY, a copy in a second mailbox, two instances), bad input (over
 * `inbox.maxBytes`, unparseable, HTML only, encoded words, no Date), connections' health (a wrong
 * password beside a working one; the password in no log line), the mailbox left untouched, the
 * lease, exact counts through the API, and the metric.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isoAt } from '../../src/domain/clock.js';
import { openStore } from '../../src/db/connection.js';
import { runInboxPass } from '../../src/workers/inbox/pass.js';
import { startSmtp } from '../writes/helpers.js';
import { startDovecot, type TestDovecot } from '../helpers/dovecot.js';
import type { TestServer } from '../helpers/harness.js';
import { serviceSkip } from '../helpers/services.js';
import {
  ANA,
  BOB,
  BOB_PASSWORD,
  CAT,
  DAN,
  ME,
  PASSWORD,
  USERS,
  dsn,
  mail,
  outboxId,
  pass,
  read,
  recordingLogger,
  row,
  rows,
  setPasswords,
  startInboxServer,
  storedAs,
  summaryOf,
} from './helpers.js';
import { refuseWrites, sqlRun } from '../helpers/sql.js';

const skip = await serviceSkip('dovecot');

const counts = { matched: 0, unmatched: 0, duplicates: 0, bounces: 0, skipped: 0, errors: 0 };
const API_THREADS = '/projects/prj_in/sites/site_in/threads';

describe('the inbox sync against Dovecot', { skip }, () => {
  let dovecot: TestDovecot;
  const servers: TestServer[] = [];
  /** A server whose conn_in reads `user`'s mailbox (a mailbox of this test's own). */
  const server = async (...args: Parameters<typeof startInboxServer> extends [unknown, ...infer R] ? R : never) => {
    const t = await startInboxServer(dovecot, ...args);
    servers.push(t);
    return t;
  };
  before(async () => {
    dovecot = await startDovecot(USERS);
  });
  after(async () => {
    for (const t of servers) await t.close();
    await dovecot?.stop();
  });

  it('finds each message its thread: the notification’s original, In-Reply-To, References from the last, the sender; else unmatched', async () => {
    const t = await server({ user: 'box1' });
    const at = { receivedAt: t.clock.now() };
    const messages = {
      inReplyTo: mail({
        messageId: '<m1@blog.example>',
        inReplyTo: outboxId('msg_out_ana'),
        references: outboxId('msg_out_dan'),
      }),
      references: mail({
        from: 'Zed <zed@elsewhere.example>',
        messageId: '<m2@elsewhere.example>',
        inReplyTo: '<not-ours@elsewhere.example>',
        references: `<first@x.example> ${outboxId('msg_out_dan')} <last-not-ours@x.example>`,
      }),
      sender: mail({ from: `"Cat" <${CAT.toUpperCase()}>`, messageId: '<m3@shop.example>' }),
      latest: mail({ from: ANA, messageId: '<m4@blog.example>', subject: 'Another thing' }),
      bounce: dsn({
        original: outboxId('msg_out_r1'),
        recipient: 'r1@rows.example',
        action: 'failed',
        status: '5.1.1',
        messageId: '<m5@mx.example>',
      }),
      unmatched: mail({ from: 'nobody@nowhere.example', messageId: '<m6@nowhere.example>' }),
    };
    for (const raw of Object.values(messages)) dovecot.deliver('box1', raw, at);

    const summary = summaryOf(await pass(t));
    assert.deepEqual(summary, {
      connectionId: 'conn_in',
      status: 'ok',
      error: null,
      fetched: 6,
      ...counts,
      matched: 4,
      bounces: 1,
      unmatched: 1,
    });
    const threadOf = async (id: string) => (await storedAs(t, id)).map((m) => m.thread_id);
    assert.deepEqual(await threadOf('<m1@blog.example>'), ['thr_ana'], 'In-Reply-To wins over References');
    assert.deepEqual(await threadOf('<m2@elsewhere.example>'), ['thr_dan'], 'References from the last that is ours');
    assert.deepEqual(await threadOf('<m3@shop.example>'), ['thr_cat'], 'the sender, case-insensitively');
    // thr_ana (updated 10-02) over thr_ana_old (10-01), and never site_two's thr_two (10-05).
    assert.deepEqual(
      await threadOf('<m4@blog.example>'),
      ['thr_ana'],
      'the most recently updated thread of the sender',
    );
    assert.deepEqual(await threadOf('<m5@mx.example>'), ['thr_r1'], 'a notification by its original');
    assert.deepEqual(await threadOf('<m6@nowhere.example>'), [], 'nothing stored when unmatched');
    assert.equal((await row(t, "SELECT inbound_count FROM threads WHERE id = 'thr_two'")).inbound_count, 0);
  });

  it('classifies each row of the table and changes the thread and the contact as it says', async () => {
    const t = await server({ user: 'box2' });
    const at = { receivedAt: t.clock.now() };
    const reply = (r: string, extra: Parameters<typeof mail>[0]) =>
      mail({
        from: `${r}@rows.example`,
        inReplyTo: outboxId(`msg_out_${r}`),
        messageId: `<${r}@rows.example>`,
        ...extra,
      });
    dovecot.deliver(
      'box2',
      dsn({
        original: outboxId('msg_out_r1'),
        recipient: 'r1@rows.example',
        action: 'failed',
        status: '5.1.1',
        messageId: '<r1@rows.example>',
      }),
      at,
    );
    dovecot.deliver(
      'box2',
      reply('r2', {
        subject: 'Out of Office: back on Monday',
        headers: { 'Auto-Submitted': 'auto-replied' },
        body: 'I am away until Monday.',
      }),
      at,
    );
    dovecot.deliver(
      'box2',
      reply('r3', {
        headers: { 'X-Autoreply': 'yes' },
        body: 'Thank you for your message, we will answer within two days.',
      }),
      at,
    );
    dovecot.deliver(
      'box2',
      reply('r4', { body: 'Please unsubscribe me.\n\nOn Mon, Mia wrote:\n> Would you be interested?' }),
      at,
    );
    dovecot.deliver('box2', reply('r5', { body: 'No thanks, not for us.' }), at);
    dovecot.deliver(
      'box2',
      reply('r6', { body: 'Sounds good! Send it over.\n\n> Would you be interested in a guest post?' }),
      at,
    );
    dovecot.deliver('box2', reply('r7', { body: 'What would the article be about?' }), at);
    dovecot.deliver('box2', reply('r8', { body: 'Received.\n\n> Would you be interested? Let us know.' }), at);
    const summary = summaryOf(await pass(t));
    assert.equal(summary.matched, 7);
    assert.equal(summary.bounces, 1);

    const now = isoAt(t.clock.now());
    const thread = (r: string) =>
      row<Record<string, unknown>>(
        t,
        'SELECT status, outcome, classification, inbound_count, last_inbound_at, updated_at FROM threads WHERE id = ?',
        `thr_${r}`,
      );
    const contact = (r: string) => row(t, 'SELECT status, suppression_reason FROM contacts WHERE id = ?', `con_${r}`);
    const expected: [string, string, string, string, string][] = [
      // row, classification, thread status, outcome, contact status
      ['r1', 'bounce', 'awaiting_reply', 'none', 'bounced'],
      ['r2', 'out_of_office', 'awaiting_reply', 'none', 'active'],
      ['r3', 'auto_reply', 'awaiting_reply', 'none', 'active'],
      ['r4', 'not_interested', 'replied', 'negative', 'suppressed'],
      ['r5', 'not_interested', 'replied', 'negative', 'active'],
      ['r6', 'interested', 'replied', 'positive', 'active'],
      ['r7', 'question', 'replied', 'neutral', 'active'],
      ['r8', 'unclassified', 'replied', 'none', 'active'],
    ];
    for (const [r, classification, status, outcome, contactStatus] of expected) {
      assert.deepEqual(
        await thread(r),
        {
          status,
          outcome,
          classification,
          inbound_count: 1,
          last_inbound_at: '2026-11-01T12:00:00.000Z',
          updated_at: now,
        },
        r,
      );
      assert.equal((await contact(r)).status, contactStatus, r);
    }
    assert.equal((await contact('r4')).suppression_reason, 'asked by reply to receive no more messages');
    // The stored message, as the API shows it.
    const token = await t.mintToken('acct_in', ['outreach:read']);
    const listed = await t.get(`${API_THREADS}/thr_r6/messages`, token);
    assert.equal(listed.status, 200);
    assert.equal(listed.body.data.pagination.total, 2);
    const inbound = listed.body.data.data.find((m: { direction: string }) => m.direction === 'inbound');
    assert.deepEqual(
      { ...inbound, id: undefined, createdAt: undefined },
      {
        id: undefined,
        direction: 'inbound',
        status: 'sent',
        fromEmail: 'r6@rows.example',
        toEmails: [`me@trailgear.example`],
        ccEmails: [],
        subject: 'Re: A guest post idea',
        body: 'Sounds good! Send it over.\n\n> Would you be interested in a guest post?',
        sentAt: '2026-11-01T12:00:00.000Z',
        attempts: 0,
        createdAt: undefined,
      },
    );
  });

  it('changes a contact only for a message that answers one we sent: a forged From or a report naming it changes nothing', async () => {
    const t = await server({ user: 'box17' });
    const at = { receivedAt: t.clock.now() };
    // A bounce "from" r1 about a message we never sent: rule 3 finds r1's thread by its From.
    dovecot.deliver(
      'box17',
      dsn({
        from: 'r1@rows.example',
        original: '<never-sent@elsewhere.example>',
        recipient: 'r1@rows.example',
        action: 'failed',
        status: '5.1.1',
        messageId: '<forged-bounce@x.example>',
      }),
      at,
    );
    // The same from the mail server, naming r2, its original none of ours: unmatched.
    dovecot.deliver(
      'box17',
      dsn({
        original: '<never-sent@elsewhere.example>',
        recipient: 'r2@rows.example',
        action: 'failed',
        status: '5.1.1',
        messageId: '<stray-bounce@x.example>',
      }),
      at,
    );
    // "Unsubscribe" with r3's From and nothing of ours in its headers.
    const stop = 'Please unsubscribe me.';
    dovecot.deliver('box17', mail({ from: 'r3@rows.example', messageId: '<forged-stop@x.example>', body: stop }), at);
    // The same words answering our message to r4, from whoever holds it: the contact is suppressed.
    dovecot.deliver(
      'box17',
      mail({
        from: 'assistant@rows.example',
        inReplyTo: outboxId('msg_out_r4'),
        messageId: '<stop@x.example>',
        body: stop,
      }),
      at,
    );
    // A bounce whose References name our message to r5 (its original's headers left out).
    dovecot.deliver(
      'box17',
      mail({
        from: 'MAILER-DAEMON@mx.rows.example',
        references: outboxId('msg_out_r5'),
        messageId: '<bounce-r5@x.example>',
        contentType: 'multipart/report; report-type=delivery-status; boundary="r"',
        body: [
          '--r',
          'Content-Type: message/delivery-status',
          '',
          'Reporting-MTA: dns; mx.rows.example',
          '',
          'Final-Recipient: rfc822; r5@rows.example',
          'Action: failed',
          'Status: 5.1.1',
          '--r--',
        ].join('\n'),
      }),
      at,
    );
    const summary = summaryOf(await pass(t));
    assert.deepEqual([summary.fetched, summary.matched, summary.bounces, summary.unmatched], [5, 2, 2, 1]);
    const state = async (r: string) => ({
      contact: (await row(t, 'SELECT status FROM contacts WHERE id = ?', `con_${r}`)).status,
      ...(await row(t, 'SELECT classification, inbound_count FROM threads WHERE id = ?', `thr_${r}`)),
    });
    const stored = (classification: string, contact = 'active') => ({ contact, classification, inbound_count: 1 });
    assert.deepEqual(await state('r1'), stored('bounce'), 'stored, the contact unchanged');
    assert.deepEqual(await state('r2'), { contact: 'active', classification: 'unclassified', inbound_count: 0 });
    assert.deepEqual(await state('r3'), stored('not_interested'));
    assert.deepEqual(await state('r4'), stored('not_interested', 'suppressed'));
    assert.deepEqual(await state('r5'), stored('bounce', 'bounced'));
  });

  it('stores a message once: twice in the mailbox, on a second pass, after a crash lost the position, from a second mailbox', async () => {
    const t = await server({ user: 'box3' });
    const at = { receivedAt: t.clock.now() };
    const once = mail({ messageId: '<once@blog.example>', inReplyTo: outboxId('msg_out_ana'), body: 'Sounds good.' });
    const noId = mail({ messageId: null, from: DAN, body: 'Is this still open?' });
    dovecot.deliver('box3', once, at);
    dovecot.deliver('box3', once, at);
    dovecot.deliver('box3', noId, at);
    dovecot.deliver('box3', noId, at);
    assert.deepEqual(summaryOf(await pass(t)), {
      connectionId: 'conn_in',
      status: 'ok',
      error: null,
      fetched: 4,
      ...counts,
      matched: 2,
      duplicates: 2,
    });
    assert.equal((await storedAs(t, '<once@blog.example>')).length, 1);
    assert.equal((await row(t, "SELECT inbound_count FROM threads WHERE id = 'thr_ana'")).inbound_count, 1);
    const hashed = await rows(
      t,
      "SELECT inbound_message_id FROM thread_messages WHERE thread_id = 'thr_dan' AND direction = 'inbound'",
    );
    assert.equal(hashed.length, 1);
    assert.match(hashed[0]!.inbound_message_id, /^hash:[0-9a-f]{64}$/);

    // A second pass: nothing new.
    assert.deepEqual(summaryOf(await pass(t)), {
      connectionId: 'conn_in',
      status: 'ok',
      error: null,
      fetched: 0,
      ...counts,
    });
    // A crash before the position was recorded: the next pass (a new holder, as after a restart)
    // reads the last initialDays again and drops what it stored.
    await sqlRun(t.store, 'DELETE FROM inbox_mailboxes');
    const again = summaryOf(await pass(t));
    assert.equal(again.fetched, 4);
    assert.equal(again.duplicates, 4);
    assert.equal((await row(t, "SELECT inbound_count FROM threads WHERE id = 'thr_ana'")).inbound_count, 1);

    // The same reply in a second mailbox of the site (a copy to a colleague): stored once.
    dovecot.deliver('box4', once, at);
    const second = { ...t.server.app.deps.config.inbox.connections.conn_in!, user: 'box4' };
    await sqlRun(
      t.store,
      "INSERT INTO email_connections (id, site_id, project_id, provider, status, account_email, has_error, created_at, updated_at) VALUES ('conn_in2', 'site_in', 'prj_in', 'smtp', 'connected', 'box4@trailgear.example', 0, '2026-10-01T09:00:00.000Z', '2026-10-01T09:00:00.000Z')",
    );
    const { config, logger } = t.server.app.deps;
    const [copy] = await runInboxPass(
      {
        store: t.store,
        clock: t.clock,
        logger,
        config: { ...config, inbox: { ...config.inbox, connections: { conn_in2: second } } },
      },
      {},
    );
    assert.equal(copy!.duplicates, 1);
    assert.equal((await storedAs(t, '<once@blog.example>')).length, 1);
  });

  it('reads the last initialDays again when UIDVALIDITY changes, dropping what it stored', async () => {
    const t = await server({ user: 'box5', mailbox: 'Replies', two: false });
    const at = { receivedAt: t.clock.now(), mailbox: 'Replies' };
    const first = mail({ messageId: '<v1@blog.example>', inReplyTo: outboxId('msg_out_ana') });
    const second = mail({ messageId: '<v2@news.example>', from: DAN, body: 'Yes please.' });
    dovecot.deliver('box5', first, at);
    dovecot.deliver('box5', second, at);
    assert.equal(summaryOf(await pass(t)).matched, 2);
    const before = await dovecot.uidValidity('box5', 'Replies');
    assert.equal((await row(t, 'SELECT uid_validity FROM inbox_mailboxes')).uid_validity, before);

    await dovecot.recreate('box5', 'Replies');
    // An old message, older than initialDays: not read again.
    dovecot.deliver('box5', mail({ messageId: '<old@blog.example>', from: ANA }), {
      ...at,
      receivedAt: t.clock.now() - 40 * 86_400_000,
    });
    dovecot.deliver('box5', first, at);
    dovecot.deliver('box5', second, at);
    dovecot.deliver('box5', mail({ messageId: '<v3@shop.example>', from: CAT }), at);
    const changed = await dovecot.uidValidity('box5', 'Replies');
    assert.notEqual(changed, before);
    assert.deepEqual(summaryOf(await pass(t)), {
      connectionId: 'conn_in',
      status: 'ok',
      error: null,
      fetched: 3,
      ...counts,
      matched: 1,
      duplicates: 2,
    });
    assert.deepEqual(await row(t, 'SELECT mailbox, uid_validity, last_uid FROM inbox_mailboxes'), {
      mailbox: `imap://box5@${dovecot.host}:${dovecot.port}/Replies`,
      uid_validity: changed,
      last_uid: 4,
    });
    assert.equal((await storedAs(t, '<old@blog.example>')).length, 0);
  });

  it('skips a message over maxBytes and an unparseable one, and reads HTML-only, encoded words, charsets and a message without Date', async () => {
    const t = await server({ user: 'box6' }, { config: { 'inbox.maxBytes': 4096 } });
    const receivedAt = Date.parse('2026-10-30T08:00:00.000Z');
    const at = { receivedAt };
    dovecot.deliver('box6', mail({ messageId: '<big@blog.example>', from: ANA, body: 'x'.repeat(5000) }), at);
    dovecot.deliver('box6', 'This is not a message at all, just some words.\r\n', at);
    dovecot.deliver(
      'box6',
      mail({
        messageId: '<html@blog.example>',
        from: ANA,
        contentType: 'text/html; charset=utf-8',
        body: '<html><body><p>Sounds <b>good</b>!</p><p>Send it over.</p></body></html>',
      }),
      at,
    );
    dovecot.deliver(
      'box6',
      mail({
        messageId: '<words@shop.example>',
        from: CAT,
        subject: '=?UTF-8?B?UmU6IETDqWrDoCB2dSDinJM=?=',
        contentType: 'text/plain; charset=iso-8859-1',
        transferEncoding: 'quoted-printable',
        body: 'Tr=E8s bien, merci.',
      }),
      at,
    );
    dovecot.deliver('box6', mail({ messageId: '<nodate@news.example>', from: DAN, date: null, body: 'Noted.' }), at);
    assert.deepEqual(summaryOf(await pass(t)), {
      connectionId: 'conn_in',
      status: 'ok',
      error: null,
      fetched: 5,
      ...counts,
      matched: 3,
      skipped: 2,
    });
    assert.equal((await storedAs(t, '<big@blog.example>')).length, 0);
    const [html] = await storedAs(t, '<html@blog.example>');
    assert.equal(html!.body, 'Sounds good!\n\nSend it over.');
    const [words] = await storedAs(t, '<words@shop.example>');
    assert.equal(words!.subject, 'Re: Déjà vu ✓');
    assert.equal(words!.body, 'Très bien, merci.');
    const [noDate] = await storedAs(t, '<nodate@news.example>');
    assert.equal(noDate!.sent_at, isoAt(receivedAt), "the server's internal date");
  });

  it('marks a connection whose login fails error, never logging its password, while another is read; a good pass makes it connected', async () => {
    const logger = recordingLogger();
    const t = await server({ user: 'box7' }, { logger });
    setPasswords({ me: PASSWORD, bob: 'a-wrong-password' });
    dovecot.deliver('box7', mail({ messageId: '<ok@blog.example>', inReplyTo: outboxId('msg_out_ana') }), {
      receivedAt: t.clock.now(),
    });
    const summaries = await pass(t);
    assert.equal(summaryOf(summaries).matched, 1);
    assert.deepEqual(summaryOf(summaries, 'conn_two'), {
      connectionId: 'conn_two',
      status: 'error',
      error: `the IMAP server refused the login of ${BOB}`,
      fetched: 0,
      ...counts,
    });
    const token = await t.mintToken('acct_in', ['outreach:read']);
    const accounts = async (site: string) =>
      (await t.get(`/projects/prj_in/sites/${site}/email-accounts`, token)).body.data.connections[0];
    const failed = await accounts('site_two');
    assert.equal(failed.status, 'error');
    assert.equal(failed.hasError, true);
    assert.equal(failed.lastTestedAt, null);
    const good = await accounts('site_in');
    assert.deepEqual(
      [good.status, good.hasError, good.lastTestedAt, good.connectedAt],
      ['connected', false, isoAt(t.clock.now()), isoAt(t.clock.now())],
      'connectedAt set, as it never was',
    );
    const logged = logger.lines.filter((l) => l.includes('conn_two'));
    assert.ok(
      logged.some((l) => l.includes('refused the login')),
      logged.join('\n'),
    );
    assert.ok(!logger.lines.some((l) => l.includes('a-wrong-password') || l.includes(PASSWORD)));

    setPasswords({ me: PASSWORD, bob: BOB_PASSWORD });
    t.clock.advance(60_000);
    assert.equal(summaryOf(await pass(t), 'conn_two').status, 'ok');
    const fixed = await accounts('site_two');
    assert.deepEqual([fixed.status, fixed.hasError, fixed.lastTestedAt], ['connected', false, isoAt(t.clock.now())]);
  });

  it('leaves the mailbox as it was: no flag set, nothing moved or deleted', async () => {
    const t = await server({ user: 'box8' });
    for (const n of [1, 2, 3])
      dovecot.deliver('box8', mail({ messageId: `<keep${n}@blog.example>`, from: ANA }), { receivedAt: t.clock.now() });
    await dovecot.append('box8', mail({ messageId: '<keep4@blog.example>', from: 'stranger@else.example' }), {
      receivedAt: t.clock.now(),
    });
    const flags = await dovecot.flags('box8');
    assert.equal(flags.length, 4);
    assert.equal(summaryOf(await pass(t)).fetched, 4);
    assert.deepEqual(await dovecot.flags('box8'), flags);
    assert.ok(
      flags.every((m) => m.flags.length === 0),
      'no \\Seen',
    );
  });

  it('leaves a connection to the instance that holds its lease, and takes it once that lease expired', async () => {
    const t = await server({ user: 'box9', two: false });
    dovecot.deliver('box9', mail({ messageId: '<leased@blog.example>', from: ANA }), { receivedAt: t.clock.now() });
    const until = isoAt(t.clock.now() + 60_000);
    await sqlRun(t.store, "INSERT INTO inbox_leases VALUES ('conn_in', 'inbox_other', ?)", until);
    assert.deepEqual(summaryOf(await pass(t)), {
      connectionId: 'conn_in',
      status: 'busy',
      error: null,
      fetched: 0,
      ...counts,
    });
    assert.equal((await row(t, 'SELECT holder FROM inbox_leases')).holder, 'inbox_other');
    t.clock.advance(60_000);
    assert.equal(summaryOf(await pass(t)).matched, 1);
    assert.equal((await row(t, 'SELECT count(*) AS n FROM inbox_leases')).n, 0, 'given up at the end of the pass');
  });

  it('stores each message once when two instances sync the same connection', async () => {
    const t = await server({ user: 'box10', two: false });
    for (let n = 0; n < 60; n++)
      dovecot.deliver('box10', mail({ messageId: `<both${n}@blog.example>`, from: ANA, body: `Reply ${n}?` }), {
        receivedAt: t.clock.now(),
      });
    // A second instance: its own connection to the same database, its own holder.
    const other = await openStore(t.location);
    try {
      const { config, logger } = t.server.app.deps;
      const [a, b] = await Promise.all([pass(t), runInboxPass({ store: other, clock: t.clock, config, logger }, {})]);
      const results = [a[0]!, b[0]!];
      assert.deepEqual(results.map((s) => s.status).sort(), ['busy', 'ok']);
      assert.equal(results[0]!.matched + results[1]!.matched, 60);
      // The lease expires (the other instance stopped mid-way, say), and both read it all again.
      await sqlRun(t.store, 'DELETE FROM inbox_mailboxes');
      const [c, d] = await Promise.all([
        pass(t, { holder: 'inbox_a' }),
        runInboxPass({ store: other, clock: t.clock, config, logger }, { holder: 'inbox_b' }),
      ]);
      assert.equal(c[0]!.matched + d[0]!.matched, 0);
    } finally {
      await other.close();
    }
    assert.equal((await row(t, "SELECT count(*) AS n FROM thread_messages WHERE direction = 'inbound'")).n, 60);
    assert.equal((await row(t, "SELECT inbound_count FROM threads WHERE id = 'thr_ana'")).inbound_count, 60);
  });

  it('keeps every count the API reports exact, and counts each message in outreach_inbox_messages_total', async () => {
    const t = await server({ user: 'box11', two: false }, { config: { 'metrics.enabled': true } });
    const at = { receivedAt: t.clock.now() };
    dovecot.deliver('box11', mail({ messageId: '<c1@blog.example>', inReplyTo: outboxId('msg_out_ana') }), at);
    dovecot.deliver('box11', mail({ messageId: '<c1@blog.example>', inReplyTo: outboxId('msg_out_ana') }), at);
    dovecot.deliver('box11', mail({ messageId: '<c2@blog.example>', from: 'x@unknown.example' }), at);
    dovecot.deliver(
      'box11',
      dsn({ original: outboxId('msg_out_dan'), recipient: DAN, action: 'delayed', status: '4.4.1' }),
      at,
    );
    dovecot.deliver(
      'box11',
      dsn({ original: outboxId('msg_out_dan'), recipient: DAN, action: 'failed', status: '5.2.2', embed: 'message' }),
      at,
    );
    dovecot.deliver('box11', 'garbage without headers\r\n', at);
    assert.deepEqual(summaryOf(await pass(t)), {
      connectionId: 'conn_in',
      status: 'ok',
      error: null,
      fetched: 6,
      matched: 1,
      unmatched: 1,
      duplicates: 1,
      bounces: 1,
      skipped: 2,
      errors: 0,
    });
    const token = await t.mintToken('acct_in', ['outreach:read']);
    for (const id of ['thr_ana', 'thr_dan']) {
      const listed = await t.get(`${API_THREADS}/${id}/messages?limit=100`, token);
      assert.equal(listed.body.data.pagination.total, listed.body.data.data.length, id);
      assert.equal(listed.body.data.data.length, 2, id);
    }
    const threads = await t.get(`${API_THREADS}?limit=100`, token);
    assert.equal(
      threads.body.data.pagination.total,
      (await row(t, "SELECT count(*) AS n FROM threads WHERE site_id = 'site_in'")).n,
    );
    assert.equal((await row(t, "SELECT status FROM contacts WHERE id = 'con_dan'")).status, 'bounced');
    const metrics = await t.server.metrics!.registry.getSingleMetricAsString('outreach_inbox_messages_total');
    for (const [result, n] of Object.entries({ matched: 1, unmatched: 1, duplicate: 1, bounce: 1, skipped: 2 }))
      assert.ok(metrics.includes(`outreach_inbox_messages_total{result="${result}"} ${n}`), `${result}\n${metrics}`);
  });

  it('matches the answer to the Message-ID the outbox really sent over SMTP', async () => {
    const smtp = await startSmtp();
    try {
      const t = await server(
        { user: 'box12', two: false },
        { config: { 'providers.mail': 'smtp', 'smtp.host': '127.0.0.1', 'smtp.port': smtp.port } },
      );
      const token = await t.mintToken('acct_in', ['outreach:send']);
      const sent = await t.request('POST', `${API_THREADS}/thr_cat/replies`, {
        token,
        body: { body: 'Would a guest post interest you?', idempotencyKey: 'smtp-reply-0001' },
      });
      assert.equal(sent.status, 202);
      await t.server.workers.outbox.drain();
      assert.equal(smtp.received.length, 1);
      const delivered = await read(smtp.received[0]!.raw);
      const queued = await row(
        t,
        "SELECT id FROM thread_messages WHERE thread_id = 'thr_cat' AND direction = 'outbound'",
      );
      assert.equal(delivered.messageId, outboxId(queued.id));
      // Answered from another address than the contact's (a colleague), so only the id can tell.
      dovecot.deliver(
        'box12',
        mail({
          from: 'colleague@shop.example',
          messageId: '<answer@shop.example>',
          inReplyTo: delivered.messageId!,
          references: delivered.messageId!,
          body: 'Happy to. What topic?',
        }),
        { receivedAt: t.clock.now() },
      );
      assert.equal(summaryOf(await pass(t)).matched, 1);
      assert.deepEqual(
        (await storedAs(t, '<answer@shop.example>')).map((m) => m.thread_id),
        ['thr_cat'],
      );
      assert.deepEqual(await row(t, "SELECT status, outcome, classification FROM threads WHERE id = 'thr_cat'"), {
        status: 'replied',
        outcome: 'positive',
        classification: 'interested',
      });
    } finally {
      await smtp.close();
    }
  });

  it('reads with the serve worker: the login defaults to the connection’s accountEmail, and the session is kept between passes', async () => {
    const t = await server({ two: false });
    dovecot.deliver(ME, mail({ messageId: '<w1@blog.example>', inReplyTo: outboxId('msg_out_ana') }), {
      receivedAt: t.clock.now(),
    });
    assert.equal(await t.server.workers.inbox.runOnce(), 1);
    assert.equal((await storedAs(t, '<w1@blog.example>')).length, 1);
    dovecot.deliver(ME, mail({ messageId: '<w2@blog.example>', from: ANA }), { receivedAt: t.clock.now() });
    assert.equal(await t.server.workers.inbox.runOnce(), 1);
    assert.equal(await t.server.workers.inbox.runOnce(), 0);
    assert.equal((await storedAs(t, '<w2@blog.example>')).length, 1);
    const logins = () =>
      dovecot
        .log()
        .split('\n')
        .filter((l) => l.includes(`Login: user=<${ME}>`)).length;
    assert.equal(logins(), 1, 'one login for three passes');
    // The server drops the session (a restart, an idle timeout): the next pass logs in again.
    await dovecot.kick(ME);
    dovecot.deliver(ME, mail({ messageId: '<w3@blog.example>', from: ANA }), { receivedAt: t.clock.now() });
    assert.equal(await t.server.workers.inbox.runOnce(), 1);
    assert.equal((await storedAs(t, '<w3@blog.example>')).length, 1);
    assert.equal(logins(), 2);
  });

  it('marks a connection error when its server cannot be reached or its mailbox does not exist, and stops nothing else', async () => {
    const t = await server({ user: 'box15', mailbox: 'Nope' });
    const { config, logger } = t.server.app.deps;
    const unreachable = { ...config.inbox.connections.conn_two!, port: 1 };
    const connections = { ...config.inbox.connections, conn_two: unreachable };
    const summaries = await runInboxPass(
      { store: t.store, clock: t.clock, logger, config: { ...config, inbox: { ...config.inbox, connections } } },
      {},
    );
    assert.deepEqual(
      summaries.map((s) => [s.connectionId, s.status, s.error]),
      [
        ['conn_in', 'error', 'the mailbox "Nope" does not exist'],
        ['conn_two', 'error', `the connection to ${dovecot.host}:1 was refused`],
      ],
    );
    assert.deepEqual(await rows(t, 'SELECT id, status, has_error FROM email_connections ORDER BY id'), [
      { id: 'conn_in', status: 'error', has_error: 1 },
      { id: 'conn_two', status: 'error', has_error: 1 },
    ]);
  });

  it('rolls back the group a failed write was in, ends the pass, and reads from there next pass', async () => {
    const t = await server({ user: 'box16', two: false });
    const at = { receivedAt: t.clock.now() };
    dovecot.deliver('box16', mail({ messageId: '<fine@blog.example>', from: ANA }), at);
    dovecot.deliver('box16', mail({ messageId: '<fails@blog.example>', from: CAT }), at);
    const allow = await refuseWrites(
      t.store,
      'INSERT',
      'thread_messages',
      "NEW.inbound_message_id = '<fails@blog.example>'",
      'disk full',
    );
    const failed = summaryOf(await pass(t));
    assert.deepEqual([failed.status, failed.error], ['error', 'the store failed']);
    assert.equal((await storedAs(t, '<fails@blog.example>')).length, 0, 'its transaction rolled back');
    // The first was recorded before (alone), or with it (rolled back too): either way with its position.
    const recorded = (await storedAs(t, '<fine@blog.example>')).length;
    assert.equal(failed.matched, recorded);
    const positions = await rows(t, 'SELECT last_uid FROM inbox_mailboxes');
    assert.deepEqual(
      positions.map((p) => p.last_uid),
      recorded ? [1] : [],
    );
    await allow();
    const again = summaryOf(await pass(t));
    assert.deepEqual([again.matched, again.duplicates], [2 - recorded, 0], 'read again from the first not recorded');
  });
});
