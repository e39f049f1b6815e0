/**
 * Hostile mail read by the sync from a real Dovecot (issue 28, decisions.md §17, docs/security.md
 * "Reading other people's mail"): an 8 MB message of HTML that mailparser's own HTML to text took
 * seconds over, on the event loop, and a message mailparser's splitter takes seconds over in
 * slices, which misses `inbox.parseTimeoutMs`. While either is read, `/healthz` keeps answering;
 * the one that misses the deadline is skipped, its UID saved, and never read again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDovecot, type TestDovecot } from '../helpers/dovecot.js';
import type { TestServer } from '../helpers/harness.js';
import { serviceSkip } from '../helpers/services.js';
import { runInboxPass } from '../../src/workers/inbox/pass.js';
import {
  HEALTHZ_BOUND_MS,
  USERS,
  boundaryMaze,
  hostileHtmlMail,
  mail,
  outboxId,
  pass,
  recordingLogger,
  row,
  startInboxServer,
  storedAs,
  summaryOf,
  whileAskingHealth,
} from './helpers.js';

const skip = await serviceSkip('dovecot');

describe('hostile mail read by the sync', { skip }, () => {
  let dovecot: TestDovecot;
  const servers: TestServer[] = [];
  before(async () => {
    dovecot = await startDovecot(USERS);
  });
  after(async () => {
    for (const t of servers) await t.close();
    await dovecot?.stop();
  });

  it('reads an 8 MB message of hostile HTML from an unknown sender while /healthz keeps answering', async (ctx) => {
    const t = await startInboxServer(dovecot, { user: 'box18', two: false });
    servers.push(t);
    const at = { receivedAt: t.clock.now() };
    const hostile = hostileHtmlMail(4, 2_000_000);
    assert.ok(hostile.length > 8_000_000);
    dovecot.deliver('box18', hostile, at);
    dovecot.deliver(
      'box18',
      mail({ messageId: '<after-hostile@blog.example>', inReplyTo: outboxId('msg_out_ana') }),
      at,
    );
    const { result, worstMs, answers } = await whileAskingHealth(t.origin, () => pass(t));
    ctx.diagnostic(`the slowest of ${answers} /healthz answers: ${worstMs.toFixed(1)} ms`);
    const summary = summaryOf(result);
    assert.deepEqual([summary.fetched, summary.unmatched, summary.matched], [2, 1, 1]);
    assert.equal((await storedAs(t, '<after-hostile@blog.example>')).length, 1);
    assert.ok(answers > 0);
    assert.ok(worstMs < HEALTHZ_BOUND_MS, `/healthz waited ${worstMs.toFixed(0)} ms`);
  });

  it('skips a message not read within inbox.parseTimeoutMs, saves its UID, and never reads it again', async (ctx) => {
    const logger = recordingLogger();
    const t = await startInboxServer(
      dovecot,
      { user: 'box19', two: false },
      { logger, config: { 'inbox.parseTimeoutMs': 250 } },
    );
    servers.push(t);
    const at = { receivedAt: t.clock.now() };
    dovecot.deliver('box19', boundaryMaze(126, 8_000_000), at);
    const { result, worstMs, answers } = await whileAskingHealth(t.origin, () => pass(t));
    ctx.diagnostic(`the slowest of ${answers} /healthz answers: ${worstMs.toFixed(1)} ms`);
    assert.deepEqual([summaryOf(result).fetched, summaryOf(result).skipped], [1, 1]);
    const skipped = logger.lines
      .map((line) => JSON.parse(line))
      .filter((l) => l.message === 'an inbound message was skipped');
    assert.deepEqual(
      skipped.map((l) => [l.uid, l.reason]),
      [[1, 'the message was not read within inbox.parseTimeoutMs (250 ms)']],
    );
    assert.equal((await row(t, 'SELECT last_uid FROM inbox_mailboxes')).last_uid, 1, 'its UID saved');
    assert.ok(worstMs < HEALTHZ_BOUND_MS, `/healthz waited ${worstMs.toFixed(0)} ms`);
    // The next pass (with the default deadline, which a small message never comes near, even in a
    // busy test process) reads what came after it, and not it.
    dovecot.deliver('box19', mail({ messageId: '<after-maze@blog.example>', inReplyTo: outboxId('msg_out_dan') }), at);
    const { config, logger: quiet, metrics } = t.server.app.deps;
    const [next] = await runInboxPass({
      store: t.store,
      clock: t.clock,
      logger: quiet,
      metrics,
      config: { ...config, inbox: { ...config.inbox, parseTimeoutMs: 10_000 } },
    });
    assert.deepEqual([next!.fetched, next!.matched, next!.skipped], [1, 1, 0], 'never read again');
    assert.equal((await storedAs(t, '<after-maze@blog.example>')).length, 1);
  });
});
