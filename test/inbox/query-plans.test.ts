/**
 * The query plans of the inbox's lookups (decisions.md §17), on SQLite: each message costs a few
 * index searches that do not grow with the site's threads. Every statement `decide` runs is
 * captured (`Store.traceQueries`) and its `EXPLAIN QUERY PLAN` read: no table is scanned, and
 * each lookup starts where the message points (the outbox message's primary key, the sender's
 * address, the Message-ID), never at a walk of the site's threads (`threads_site_*`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../src/domain/clock.js';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument } from '../../src/import/index.js';
import { silentLogger } from '../../src/logger.js';
import { messageOfFields } from '../../src/workers/inbox/message.js';
import { decide } from '../../src/workers/inbox/record.js';
import { ANA, inboxFixture, outboxId } from './helpers.js';
import { sqliteStore } from '../helpers/stores.js';

describe('query plans of the inbox lookups', () => {
  let store: Store;
  before(async () => {
    store = await openStore(':memory:');
    await migrate(store);
    await importDocument(store, inboxFixture());
  });
  after(() => store.close());

  /** The plan lines (`SEARCH t USING INDEX …`) of every statement `decide` runs for `fields`. */
  async function plans(fields: Parameters<typeof messageOfFields>[0], siteId: string | null) {
    const queries: { sql: string; parameters: readonly unknown[] }[] = [];
    const stop = store.traceQueries((q) => queries.push(q));
    try {
      await decide(
        { db: store.db, clock: new FakeClock(), logger: silentLogger },
        messageOfFields(fields),
        siteId,
        null,
      );
    } finally {
      stop();
    }
    return queries.map((q) =>
      (
        sqliteStore(store)
          .sqlite.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
          .all(...q.parameters) as { detail: string }[]
      ).map((r) => r.detail),
    );
  }

  for (const siteId of ['site_in', null])
    it(`searches by what the message points to, never walking the threads${siteId ? ' of the site' : ''}`, async () => {
      const reply = {
        from: 'someone@else.example',
        subject: 'Re: idea',
        body: 'Sounds good.',
        inReplyTo: outboxId('msg_out_ana'),
      };
      const bySender = { from: ANA.toUpperCase(), subject: 'Hello', body: 'Any news?' };
      const unknown = { from: 'nobody@nowhere.example', subject: 'Hello', body: 'Hi' };
      const all = [
        ...(await plans(reply, siteId)),
        ...(await plans(bySender, siteId)),
        ...(await plans(unknown, siteId)),
      ];
      const lines = all.flat();
      assert.ok(
        lines.every((line) => !/^SCAN /.test(line)),
        lines.join('\n'),
      );
      assert.ok(
        lines.every((line) => !line.includes('threads_site_')),
        lines.join('\n'),
      );
      const firsts = all.map((plan) => plan[0]);
      assert.ok(firsts.includes('SEARCH m USING INDEX sqlite_autoindex_thread_messages_1 (id=?)'), firsts.join('\n'));
      assert.ok(
        firsts.some((f) => f?.startsWith('SEARCH c USING INDEX contacts_email_nocase (email=?')),
        firsts.join('\n'),
      );
      assert.ok(
        firsts.includes('SEARCH m USING INDEX thread_messages_inbound_id (inbound_message_id=?)'),
        firsts.join('\n'),
      );
      assert.ok(lines.includes('SEARCH t USING INDEX threads_contact (contact_id=?)'), lines.join('\n'));
    });
});
