/**
 * Stopping the outbox worker mid-pass (decisions.md §15: at shutdown each worker finishes the
 * item in hand): a pass over three due replies, stopped while the first is with the mail
 * transport, delivers that one and leaves the other two queued, untouched, for the next start.
 * The transport's send is held by a gate and observed through a promise, never by sleeping.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { isoAt } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/logger.js';
import type { MailTransport, OutgoingMail } from '../../src/providers/types.js';
import { outboxMessages } from '../../src/repos/outbox.js';
import { createOutboxWorker } from '../../src/workers/outbox.js';
import type { TestServer } from '../helpers/harness.js';
import { gate, startWriteServer } from './helpers.js';
import { sqlGet } from '../helpers/sql.js';

let t: TestServer;
before(async () => {
  t = await startWriteServer();
});
after(() => t.close());

it('stop() during a pass: the reply in hand is delivered, the rest stay queued for the next start', async () => {
  // The server's own outbox worker makes a pass as it starts; on PostgreSQL that pass can still be
  // under way here and would lease the replies queued below. Its passes run one after another, so
  // this waits for it to end (the next one is an hour away: outbox.pollIntervalMs).
  await t.server.workers.outbox.runOnce();
  const ids: string[] = [];
  for (const body of ['first', 'second', 'third'])
    ids.push(
      await outboxMessages.enqueue(
        t.store.db,
        {
          threadId: 'thr_a1',
          sender: { id: 'snd_a1', email: 'me@trailgear.example' },
          to: ['ana@valid.test'],
          cc: [],
          subject: 'Re: Guest post idea',
          body: `The ${body} reply.`,
        },
        isoAt(t.clock.now()),
      ),
    );
  const sent: OutgoingMail[] = [];
  const release = gate();
  let inHand!: () => void;
  const firstInHand = new Promise<void>((resolve) => (inHand = resolve));
  const mail: MailTransport = {
    name: 'held',
    async send(message) {
      inHand();
      await release.promise;
      sent.push(message);
    },
    close() {},
  };
  const worker = createOutboxWorker({
    store: t.store,
    clock: t.clock,
    config: t.server.app.deps.config,
    mail,
    logger: silentLogger,
  });

  const pass = worker.runOnce();
  await firstInHand;
  const stopped = worker.stop();
  release.open();
  await Promise.all([pass, stopped]);

  assert.equal(sent.length, 1, 'only the reply in hand was sent');
  const rows: { status: string; attempts: number }[] = [];
  for (const id of ids)
    rows.push((await sqlGet(t.store, 'SELECT status, attempts FROM thread_messages WHERE id = ?', id)) as never);
  assert.deepEqual(
    rows.map((r) => r.status).sort(),
    ['queued', 'queued', 'sent'],
    'two replies wait for the next start',
  );
  assert.deepEqual(
    rows.filter((r) => r.status === 'queued').map((r) => r.attempts),
    [0, 0],
    'untouched: no attempt used',
  );
});
