/**
 * The fixture's `POST /__admin/inbound` (decisions.md §17 "For CI users"), over real HTTP: the
 * worked example of docs/inbox.md (send a reply, answer the Message-ID captured mail shows, see
 * the thread change), each outcome, the connection's site, bad input, and every answer checked
 * against the admin API's own OpenAPI document. Then human replies classified by a model (an
 * OpenAI-compatible server on loopback), and a failing model; and hostile mail handed in whole
 * while `/healthz` is asked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../helpers/harness.js';
import { startTestServer } from '../helpers/harness.js';
import { OpenApiValidator } from '../helpers/openapi-validator.js';
import { sendJson, startHttp, type TestHttp } from '../writes/helpers.js';
import { DEMO_TOKEN, startFixture } from '../fixture/helpers.js';
import {
  ANA,
  DAN,
  HEALTHZ_BOUND_MS,
  boundaryMaze,
  dsn,
  hostileHtmlMail,
  inboxFixture,
  mail,
  outboxId,
  row,
  whileAskingHealth,
} from './helpers.js';

const SITE = '/projects/prj_in/sites/site_in';

/** A fixture server over `inboxFixture()`. */
const startInboxFixture = (config: Record<string, unknown> = {}) =>
  startTestServer({
    fixture: inboxFixture() as Record<string, unknown>,
    config: { 'fixture.enabled': true, 'limits.requestsPerMinute': 0, 'outbox.pollIntervalMs': 3_600_000, ...config },
  });

describe('POST /__admin/inbound', () => {
  let t: TestServer;
  let validator: OpenApiValidator;
  /** Calls the admin API and checks the answer against its OpenAPI document. */
  const admin = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${t.origin}/__admin${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const json = (await res.json()) as {
      ok: boolean;
      data: any;
      error?: { code: string; details?: { path: string }[] };
    };
    validator.check(method, path, res.status, json);
    return { status: res.status, body: json };
  };
  const inbound = (body: unknown) => admin('POST', '/inbound', body);
  before(async () => {
    t = await startInboxFixture();
    validator = new OpenApiValidator(
      (await (await fetch(`${t.origin}/__admin/openapi.json`)).json()) as Record<string, unknown>,
    );
  });
  after(() => t.close());

  it('answers the Message-ID of a reply the outbox sent, and the thread changes (the worked example)', async () => {
    const token = await t.mintToken('acct_in', ['outreach:send', 'outreach:read']);
    const sent = await t.request('POST', `${SITE}/threads/thr_cat/replies`, {
      token,
      body: { body: 'Would a guest post interest you?', idempotencyKey: 'inbound-example-1' },
    });
    assert.equal(sent.status, 202);
    await t.server.workers.outbox.drain();
    const [captured] = (await admin('GET', '/mail')).body.data;
    assert.match(captured.messageId, /^<msg_[^@]+@trailgear\.example>$/);

    const answer = await inbound({
      from: 'zoe@elsewhere.example',
      subject: 'Re: A guest post idea',
      body: 'Sounds good, send it over.',
      inReplyTo: captured.messageId,
    });
    assert.equal(answer.status, 200);
    assert.deepEqual(
      { ...answer.body.data, messageId: undefined },
      {
        outcome: 'matched',
        threadId: 'thr_cat',
        messageId: undefined,
        classification: 'interested',
      },
    );
    assert.match(answer.body.data.messageId, /^msg_/);
    const threadOf = async (id: string) =>
      (await t.get(`${SITE}/threads?limit=100`, token)).body.data.data.find((th: { id: string }) => th.id === id);
    const thread = await threadOf('thr_cat');
    assert.deepEqual(
      [thread.status, thread.outcome, thread.classification, thread.inboundCount, thread.lastInboundAt],
      ['replied', 'positive', 'interested', 1, '2026-11-01T12:00:00.000Z'],
    );
    const messages = (await t.get(`${SITE}/threads/thr_cat/messages`, token)).body.data;
    assert.equal(messages.pagination.total, 2);
    assert.equal(
      messages.data.find((m: { id: string }) => m.id === answer.body.data.messageId).body,
      'Sounds good, send it over.',
    );

    // The same fields again (no Message-ID: the same From, Date, Subject and body) are a duplicate.
    const again = await inbound({
      from: 'zoe@elsewhere.example',
      subject: 'Re: A guest post idea',
      body: 'Sounds good, send it over.',
      inReplyTo: captured.messageId,
    });
    assert.deepEqual(again.body.data, {
      outcome: 'duplicate',
      threadId: 'thr_cat',
      messageId: answer.body.data.messageId,
      classification: null,
    });
    assert.equal((await threadOf('thr_cat')).inboundCount, 1);
  });

  it('skips a copy of a message the outbox sent', async () => {
    const own = await inbound({
      from: 'me@trailgear.example',
      subject: 'A guest post idea',
      body: 'Would you be interested in a guest post?',
      headers: { 'Message-ID': outboxId('msg_out_dan') },
    });
    assert.deepEqual(own.body.data, { outcome: 'skipped', threadId: null, messageId: null, classification: null });
  });

  it('takes a raw message, a notification and headers; answers unmatched and skipped', async () => {
    const bounce = await inbound({
      raw: dsn({ original: outboxId('msg_out_dan'), recipient: DAN, action: 'failed', status: '5.1.1' }),
    });
    assert.deepEqual(bounce.body.data.outcome, 'matched');
    assert.deepEqual([bounce.body.data.threadId, bounce.body.data.classification], ['thr_dan', 'bounce']);
    assert.equal((await row(t, "SELECT status FROM contacts WHERE id = 'con_dan'")).status, 'bounced');
    // A bounce for another recipient (a colleague in copy) leaves the thread's contact as it was.
    const other = await inbound({
      raw: dsn({
        original: outboxId('msg_out_r3'),
        recipient: 'colleague@rows.example',
        action: 'failed',
        status: '5.1.1',
      }),
    });
    assert.deepEqual([other.body.data.threadId, other.body.data.classification], ['thr_r3', 'bounce']);
    assert.equal((await row(t, "SELECT status FROM contacts WHERE id = 'con_r3'")).status, 'active');

    const ooo = await inbound({
      from: 'r2@rows.example',
      subject: 'Out of office',
      body: 'Back next week.',
      headers: { 'Auto-Submitted': 'auto-replied', 'Message-ID': '<ooo@rows.example>' },
      date: '2026-10-30T10:00:00Z',
    });
    assert.deepEqual([ooo.body.data.threadId, ooo.body.data.classification], ['thr_r2', 'out_of_office']);
    assert.equal(
      (await row(t, "SELECT last_inbound_at FROM threads WHERE id = 'thr_r2'")).last_inbound_at,
      '2026-10-30T10:00:00.000Z',
    );

    assert.deepEqual((await inbound({ raw: mail({ from: 'nobody@nowhere.example' }) })).body.data, {
      outcome: 'unmatched',
      threadId: null,
      messageId: null,
      classification: null,
    });
    const delayed = await inbound({
      raw: dsn({ original: outboxId('msg_out_dan'), recipient: DAN, action: 'delayed', status: '4.4.1' }),
    });
    assert.equal(delayed.body.data.outcome, 'skipped');
  });

  it('looks for the sender among the threads of the connection’s site, or of every site without one', async () => {
    const from = { from: ANA, subject: 'Hello again', body: 'Any news?' };
    const inTwo = await inbound({ ...from, connectionId: 'conn_two' });
    assert.equal(inTwo.body.data.threadId, 'thr_two');
    t.clock.advance(1000);
    const inOne = await inbound({ ...from, body: 'Any news at all?', connectionId: 'conn_in' });
    assert.equal(inOne.body.data.threadId, 'thr_ana');
    // Every site: the most recently updated thread of that sender, now thr_ana (just updated).
    const anywhere = await inbound({ ...from, body: 'Hello?' });
    assert.equal(anywhere.body.data.threadId, 'thr_ana');
    const missing = await inbound({ ...from, connectionId: 'conn_nope' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error?.code, 'NOT_FOUND');
  });

  it('refuses bad input with 422, and a body that is not JSON with 403 as every changing admin call, storing nothing', async () => {
    const before = (await row(t, "SELECT count(*) AS n FROM thread_messages WHERE direction = 'inbound'")).n;
    const paths = async (body: unknown) => {
      const res = await inbound(body);
      assert.equal(res.status, 422, JSON.stringify(res.body));
      return (res.body.error?.details ?? []).map((d) => d.path).sort();
    };
    assert.deepEqual(await paths({}), ['body.body', 'body.from', 'body.subject']);
    assert.deepEqual(await paths({ raw: mail(), from: ANA }), ['body.from']);
    assert.deepEqual(await paths({ raw: 'no headers here' }), ['body.raw']);
    assert.deepEqual(await paths({ from: 'not an address', subject: 's', body: 'b' }), ['body.from']);
    assert.deepEqual(await paths({ from: ANA, subject: 's', body: 'b', date: 'yesterday' }), ['body.date']);
    assert.deepEqual(await paths({ from: ANA, subject: 's', body: 'b', extra: 1 }), ['body']);
    const text = await fetch(`${t.origin}/__admin/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: mail(),
    });
    assert.equal(text.status, 403);
    assert.equal((await row(t, "SELECT count(*) AS n FROM thread_messages WHERE direction = 'inbound'")).n, before);
  });
});

describe('the worked example of docs/inbox.md, on the demo data', () => {
  it('replies, answers the captured Message-ID, and sees the thread change; the same answer again is a duplicate', async () => {
    const t = await startFixture();
    try {
      const S = '/projects/prj_demo_main/sites/site_demo_blog';
      const post = (path: string, body: unknown) =>
        fetch(`${t.origin}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${DEMO_TOKEN}` },
          body: JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
      const reply = await post(`/api/public/v1${S}/threads/thr_demo_012/replies`, {
        body: 'Would a guest post interest you?',
        idempotencyKey: 'example-reply-1',
      });
      assert.equal(reply.status, 202);
      await t.server.workers.outbox.drain();
      const mail = (await (await fetch(`${t.origin}/__admin/mail`)).json()) as any;
      const id = mail.data[0].messageId;
      const answer = {
        from: 'someone@example.org',
        subject: 'Re: your idea',
        body: 'Sounds good, send it over.',
        inReplyTo: id,
      };
      const first = await post('/__admin/inbound', answer);
      assert.deepEqual(
        { ...first.body.data, messageId: undefined },
        {
          outcome: 'matched',
          threadId: 'thr_demo_012',
          messageId: undefined,
          classification: 'interested',
        },
      );
      const threads = await t.get(`${S}/threads?limit=100`, DEMO_TOKEN);
      const thread = threads.body.data.data.find((th: { id: string }) => th.id === 'thr_demo_012');
      assert.deepEqual([thread.status, thread.outcome], ['replied', 'positive']);
      assert.equal((await post('/__admin/inbound', answer)).body.data.outcome, 'duplicate');
    } finally {
      await t.close();
    }
  });
});

describe('human replies classified by the model (providers.generator: openai)', () => {
  let model: TestHttp;
  let answer: (res: Parameters<typeof sendJson>[0]) => void;
  let t: TestServer;
  before(async () => {
    model = await startHttp((_req, res) => answer(res));
    process.env.OUTREACH_TEST_INBOX_OPENAI = 'sk-inbox-test';
    t = await startInboxFixture({
      'providers.generator': 'openai',
      'openai.baseUrl': model.url,
      'openai.apiKeyEnv': 'OUTREACH_TEST_INBOX_OPENAI',
      'openai.timeoutMs': 5000,
      'inbox.maxBytes': 2048,
    });
  });
  after(async () => {
    await t.close();
    await model.close();
  });
  const post = (body: unknown) =>
    fetch(`${t.origin}/__admin/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<{ data: { classification: string; threadId: string } }>);

  it('asks the model for a human reply, sending its own text, and keeps its answer', async () => {
    answer = (res) => sendJson(res, 200, { model: 'test-model', choices: [{ message: { content: 'question' } }] });
    const reply = await post({
      from: 'r5@rows.example',
      subject: 'Re: A guest post idea',
      body: 'Sounds good.\n\nOn Mon, Mia wrote:\n> Would you be interested?',
    });
    assert.equal(reply.data.classification, 'question', 'the model, not the phrases');
    const request = JSON.parse(model.requests.at(-1)!.body);
    assert.equal(model.requests.at(-1)!.headers.authorization, 'Bearer sk-inbox-test');
    assert.deepEqual(JSON.parse(request.messages[1].content), {
      subject: 'Re: A guest post idea',
      reply: 'Sounds good.',
    });
    assert.equal((await row(t, "SELECT outcome FROM threads WHERE id = 'thr_r5'")).outcome, 'neutral');
  });

  it('refuses a raw message over inbox.maxBytes with 422, as the sync skips it', async () => {
    const res = await fetch(`${t.origin}/__admin/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ raw: mail({ from: 'r8@rows.example', body: 'x'.repeat(3000) }) }),
    });
    assert.equal(res.status, 422);
    const body = (await res.json()) as { error: { details: { path: string; message: string }[] } };
    assert.deepEqual(body.error.details, [{ path: 'body.raw', message: 'larger than inbox.maxBytes (2048 bytes)' }]);
  });

  it('gives unclassified when the model fails, and never asks it about automatic replies or notifications', async () => {
    answer = (res) => sendJson(res, 500, { error: 'down' });
    const failed = await post({ from: 'r6@rows.example', subject: 'Re: idea', body: 'Yes please!' });
    assert.equal(failed.data.classification, 'unclassified');
    answer = (res) => sendJson(res, 200, { choices: [{ message: { content: 'Maybe, hard to say.' } }] });
    const vague = await post({ from: 'r8@rows.example', subject: 'Re: idea', body: 'Yes please!' });
    assert.equal(vague.data.classification, 'unclassified', 'an answer that is none of the four');
    const asked = model.requests.length;
    const auto = await post({
      from: 'r7@rows.example',
      subject: 'Automatic reply',
      body: 'Thanks, we got it.',
      headers: { 'X-Autorespond': 'yes' },
    });
    assert.equal(auto.data.classification, 'auto_reply');
    assert.equal(model.requests.length, asked);
  });
});

describe('hostile mail handed in through POST /__admin/inbound', () => {
  /** A server with the default inbox.parseTimeoutMs, and one with 250 ms. */
  let t: TestServer;
  let strict: TestServer;
  before(async () => {
    [t, strict] = await Promise.all([startInboxFixture(), startInboxFixture({ 'inbox.parseTimeoutMs': 250 })]);
  });
  after(() => Promise.all([t.close(), strict.close()]));
  const inbound = (server: TestServer, raw: string) =>
    fetch(`${server.origin}/__admin/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ raw }),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, any> }));

  it('reads an 8 MB message of hostile HTML while /healthz keeps answering', async (ctx) => {
    const raw = hostileHtmlMail(4, 2_000_000);
    const { result, worstMs, answers } = await whileAskingHealth(t.origin, () => inbound(t, raw));
    ctx.diagnostic(`the slowest of ${answers} /healthz answers: ${worstMs.toFixed(1)} ms`);
    assert.deepEqual([result.status, result.body.data?.outcome], [200, 'unmatched'], JSON.stringify(result.body));
    assert.ok(worstMs < HEALTHZ_BOUND_MS, `/healthz waited ${worstMs.toFixed(0)} ms`);
  });

  it('refuses with 422 a message not read within inbox.parseTimeoutMs, while /healthz keeps answering', async (ctx) => {
    const raw = boundaryMaze(126, 8_000_000);
    const { result, worstMs, answers } = await whileAskingHealth(strict.origin, () => inbound(strict, raw));
    ctx.diagnostic(`the slowest of ${answers} /healthz answers: ${worstMs.toFixed(1)} ms`);
    assert.equal(result.status, 422);
    assert.deepEqual(result.body.error.details, [
      { path: 'body.raw', message: 'the message was not read within inbox.parseTimeoutMs (250 ms)' },
    ]);
    assert.ok(worstMs < HEALTHZ_BOUND_MS, `/healthz waited ${worstMs.toFixed(0)} ms`);
  });
});
