/**
 * `caseInsensitive` (src/db/collation.ts) on both stores, each chosen here (a SQLite file and a
 * PostgreSQL database of this file's own, migrated): an address matches in any case of its ASCII
 * letters on both, through the helper and through a repository that uses it (the latest thread of
 * a sender, the inbox's rule 3); a non-ASCII letter's case is folded on PostgreSQL only
 * (its ICU `nocase` collation), as sql/postgres/0001_init.sql says.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { caseInsensitive } from '../../src/db/collation.js';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { latestThreadOfContactEmail } from '../../src/repos/inbox.js';
import { seedDemo } from '../../src/seed/demo.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';
const pgSkip = await serviceSkip('postgres');

/**
 * The demo data, and two contacts of its own beside a demo contact (a copy of it with another id
 * and address): `Ann.Lee@Blog.Example`, with a thread, and `ÉLISE@blog.example`.
 */
async function load(store: Store): Promise<void> {
  await seedDemo(store);
  const contact = await store.db.selectFrom('contacts').selectAll().orderBy('id').limit(1).executeTakeFirstOrThrow();
  await store.db
    .insertInto('contacts')
    .values([
      { ...contact, id: 'con_nocase_ann', email: 'Ann.Lee@Blog.Example' },
      { ...contact, id: 'con_nocase_elise', email: 'ÉLISE@blog.example' },
    ])
    .execute();
  const thread = await store.db.selectFrom('threads').selectAll().orderBy('id').limit(1).executeTakeFirstOrThrow();
  await store.db
    .insertInto('threads')
    .values({
      ...thread,
      id: 'thr_nocase_ann',
      site_id: contact.site_id,
      prospect_id: contact.prospect_id,
      contact_id: 'con_nocase_ann',
      provider_thread_id: 'nocase-ann',
    })
    .execute();
  siteId = contact.site_id;
}

let siteId: string;

const emailsLike = async (store: Store, address: string) =>
  (
    await store.db
      .selectFrom('contacts')
      .select('email')
      .where(caseInsensitive('email'), '=', address)
      .orderBy('id')
      .execute()
  ).map((r) => r.email);

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`caseInsensitive on ${kind}`, { skip: kind === 'postgres' ? pgSkip : false }, () => {
    let store: Store;
    let dir: string | undefined;
    let database: TestDatabase | undefined;
    before(async () => {
      if (kind === 'sqlite') {
        dir = mkdtempSync(join(tmpdir(), 'outreach-nocase-'));
        store = await openStore(join(dir, 'nocase.db'));
      } else {
        database = await createTestDatabase('nocase');
        store = await openStore(database.url);
      }
      await migrate(store);
      await load(store);
    });
    after(async () => {
      await store?.close();
      await database?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('matches an address in any case of its ASCII letters, and no other', async () => {
      assert.deepEqual(await emailsLike(store, 'ann.lee@blog.example'), ['Ann.Lee@Blog.Example']);
      assert.deepEqual(await emailsLike(store, 'ANN.LEE@BLOG.EXAMPLE'), ['Ann.Lee@Blog.Example']);
      assert.deepEqual(await emailsLike(store, 'ann.lee@blog.example.org'), []);
      assert.deepEqual(await emailsLike(store, 'ÉLISE@BLOG.EXAMPLE'), ['ÉLISE@blog.example']);
    });

    it(`folds a non-ASCII letter's case ${kind === 'postgres' ? 'too (ICU)' : 'not (ASCII only)'}`, async () => {
      assert.deepEqual(
        await emailsLike(store, 'élise@blog.example'),
        kind === 'postgres' ? ['ÉLISE@blog.example'] : [],
      );
    });

    it("serves the repositories' lookups by address", async () => {
      const found = await latestThreadOfContactEmail(store.db, 'ANN.lee@blog.EXAMPLE', siteId);
      assert.deepEqual(found && { threadId: found.threadId, contactId: found.contactId }, {
        threadId: 'thr_nocase_ann',
        contactId: 'con_nocase_ann',
      });
      assert.equal(await latestThreadOfContactEmail(store.db, 'someone@blog.example', siteId), undefined);
    });
  });
}
