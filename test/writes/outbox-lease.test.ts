/**
 * How long the outbox leases a delivery attempt (src/workers/outbox.ts, decisions.md §7, §16):
 * while an attempt is with the mail transport, its reply is due again only when the lease ends.
 * - Alone on its store (SQLite), the lease is the retry's delay (`outbox.backoffMs` × 2^(attempt − 1)):
 *   a process killed mid-send leaves its reply to be retried then, once.
 * - Among instances sharing a PostgreSQL store, at least `workers.leaseMs`: no other instance
 *   takes a send that is still running, even after the retry's delay.
 * A first worker's send is held by a gate (a process stopped mid-send, or a slow relay); a second
 * worker over another connection to the same database runs passes on a fake clock. Both stores
 * run in every process (a SQLite file and a PostgreSQL database of the test's own).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import { importDocument } from '../../src/import/index.js';
import { silentLogger } from '../../src/logger.js';
import type { MailTransport } from '../../src/providers/types.js';
import { outboxMessages } from '../../src/repos/outbox.js';
import { createOutboxWorker } from '../../src/workers/outbox.js';
import { createTestDatabase, serviceSkip } from '../helpers/services.js';
import { gate, writesFixture } from './helpers.js';

const BACKOFF_MS = 1000;
const LEASE_MS = 60_000;

/** A mail transport that records each attempt and holds the first one until `release`. */
function heldMail() {
  const attempts: (number | undefined)[] = [];
  const release = gate();
  const first = gate();
  const mail: MailTransport = {
    name: 'held',
    async send(message) {
      attempts.push(message.attempt);
      if (attempts.length === 1) {
        first.open();
        await release.promise;
      }
    },
    close() {},
  };
  return { mail, attempts, release: release.open, firstInHand: first.promise };
}

/**
 * Two outbox workers, each over a connection of its own to the database at `location`, holding
 * one queued reply; the first worker's pass has the reply in hand, held. Returns when it is.
 */
async function heldAttempt(location: string) {
  const clock = new FakeClock(Date.parse('2026-03-02T10:00:00.000Z'));
  const config = loadConfig(
    undefined,
    {},
    { db: location, 'outbox.backoffMs': BACKOFF_MS, 'workers.leaseMs': LEASE_MS, 'outbox.maxAttempts': 3 },
  );
  const stores: Store[] = [await openStore(location)];
  await migrate(stores[0]!);
  await importDocument(stores[0]!, writesFixture(), { nowIso: isoAt(clock.now()) });
  stores.push(await openStore(location));
  const id = await outboxMessages.enqueue(
    stores[0]!.db,
    {
      threadId: 'thr_a1',
      sender: { id: 'snd_a1', email: 'me@trailgear.example' },
      to: ['ana@valid.test'],
      cc: [],
      subject: 'Re: Guest post idea',
      body: 'A reply whose first attempt is held.',
    },
    isoAt(clock.now()),
  );
  const held = heldMail();
  const [first, second] = stores.map((store) =>
    createOutboxWorker({ store, clock, config, mail: held.mail, logger: silentLogger }),
  );
  const pass = first!.runOnce();
  await held.firstInHand;
  const nextAttemptAt = async () =>
    (
      await stores[1]!.db
        .selectFrom('thread_messages')
        .select('next_attempt_at')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).next_attempt_at;
  return {
    clock,
    held,
    second: second!,
    nextAttemptAt,
    async close() {
      held.release();
      await pass;
      await first!.stop();
      await second!.stop();
      for (const store of stores) await store.close();
    },
  };
}

describe('the lease of an outbox delivery attempt', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('alone on its store (SQLite): ends after the retry delay, when another pass takes the reply again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outreach-api-outbox-lease-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const run = await heldAttempt(join(dir, 'lease.db'));
    cleanups.push(() => run.close());
    const start = run.clock.now();
    assert.equal(await run.nextAttemptAt(), isoAt(start + BACKOFF_MS));
    run.clock.advance(BACKOFF_MS - 1);
    assert.equal(await run.second.runOnce(), 0, 'leased until the retry delay');
    assert.deepEqual(run.held.attempts, [1]);
    run.clock.advance(1);
    assert.equal(await run.second.runOnce(), 1);
    assert.deepEqual(run.held.attempts, [1, 2], 'taken again once its lease ended: the second attempt');
  });

  it('among instances on one PostgreSQL: at least workers.leaseMs, so a running send is never taken', async (t) => {
    const skip = await serviceSkip('postgres');
    if (skip) return t.skip(skip);
    const database = await createTestDatabase('outbox_lease');
    cleanups.push(() => database.drop());
    const run = await heldAttempt(database.url);
    cleanups.push(() => run.close());
    const start = run.clock.now();
    assert.equal(await run.nextAttemptAt(), isoAt(start + LEASE_MS));
    run.clock.advance(BACKOFF_MS);
    assert.equal(await run.second.runOnce(), 0, 'not taken after the retry delay');
    run.clock.advance(LEASE_MS - BACKOFF_MS - 1);
    assert.equal(await run.second.runOnce(), 0, 'nor 1 ms before the lease ends');
    assert.deepEqual(run.held.attempts, [1]);
    run.clock.advance(1);
    assert.equal(await run.second.runOnce(), 1);
    assert.deepEqual(run.held.attempts, [1, 2], 'taken once the lease ended');
  });
});
