/**
 * The NUL character (U+0000) in what comes from outside (issue #28 item 5's follow-up), on both
 * stores, each chosen here (a SQLite file and a PostgreSQL database of this file's own, migrated):
 * PostgreSQL cannot hold a NUL in text, so before this a mail with one (quoted-printable `=00`, or
 * an encoded word) failed its write there and was stored on SQLite. Now a message keeps its text
 * with each NUL replaced by U+FFFD, alike on both; an import document with a NUL is refused,
 * naming the record and the field, and nothing is written.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { FakeClock } from '../../src/domain/clock.js';
import { ImportError, importDocument } from '../../src/import/index.js';
import { silentLogger } from '../../src/logger.js';
import { receiveMessage } from '../../src/workers/inbox/receive.js';
import { inboxFixture, mail, outboxId, read, T0 } from '../inbox/helpers.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';

const pgSkip = await serviceSkip('postgres');

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`NUL from outside on ${kind}`, { skip: kind === 'postgres' ? pgSkip : false }, () => {
    let store: Store;
    let dir: string | undefined;
    let database: TestDatabase | undefined;
    before(async () => {
      if (kind === 'sqlite') {
        dir = mkdtempSync(join(tmpdir(), 'outreach-nul-'));
        store = await openStore(join(dir, 'nul.db'));
      } else {
        database = await createTestDatabase('nul_outside');
        store = await openStore(database.url);
      }
      await migrate(store);
      await importDocument(store, inboxFixture(), { nowIso: T0 });
    });
    after(async () => {
      await store?.close();
      await database?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('stores a reply whose subject and body decode to a NUL, with U+FFFD in its place', async () => {
      const message = await read(
        mail({
          subject: '=?utf-8?Q?Re:_A_guest=00post?=',
          inReplyTo: outboxId('msg_out_ana'),
          transferEncoding: 'quoted-printable',
          body: 'Sounds good=00 to me.',
        }),
      );
      const decision = await receiveMessage({ store, clock: new FakeClock(), logger: silentLogger }, message);
      assert.deepEqual([decision.result, decision.threadId], ['matched', 'thr_ana']);
      const stored = await store.db
        .selectFrom('thread_messages')
        .select(['subject', 'body'])
        .where('id', '=', decision.messageId!)
        .executeTakeFirstOrThrow();
      assert.deepEqual(stored, { subject: 'Re: A guest\uFFFDpost', body: 'Sounds good\uFFFD to me.' });
    });

    it('refuses an import document with a NUL, naming the record and the field; nothing is written', async () => {
      const doc = inboxFixture();
      doc.prospects![1] = { ...doc.prospects![1]!, id: 'pr_nul', title: 'A\u0000title' };
      await assert.rejects(
        importDocument(store, { prospects: doc.prospects }),
        (e) =>
          e instanceof ImportError &&
          e.message === 'prospects[1] (id "pr_nul"): title: must not contain the NUL character (U+0000)',
      );
      const written = await store.db.selectFrom('prospects').select('id').where('id', '=', 'pr_nul').execute();
      assert.deepEqual(written, []);
    });
  });
}
