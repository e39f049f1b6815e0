/**
 * `outreach-api backup FILE` (decisions.md §15): run as a separate process against the database
 * of a running server while this process keeps writing to it. The copy must pass
 * `PRAGMA integrity_check`, hold a count at least the one read before the backup started and at
 * most the one read after it ended, and be one snapshot: the trigger-kept counters in the copy
 * equal the rows in the copy (each write transaction changes both).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { inTransaction } from '../../src/db/connection.js';
import { cli, cliProcess } from '../helpers/cli.js';
import type { TestServer } from '../helpers/harness.js';
import { startWriteServer } from '../writes/helpers.js';

describe('backup', () => {
  let t: TestServer;
  let db: string;
  before(async () => {
    t = await startWriteServer();
    db = join(t.dir, 'test.db');
  });
  after(() => t.close());

  // Through the store's queue: never inside the writer's open transaction.
  const count = async () =>
    Number(
      (
        await t.store.db
          .selectFrom('blocked_domains')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('project_id', '=', 'prj_a1')
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('copies the live database consistently while the server writes', async () => {
    const baseline = await count();
    let written = 0;
    let writing = true;
    // Write load: a transaction of 50 rows per turn of the event loop, until the backup is done.
    const writer = (async () => {
      while (writing) {
        await inTransaction(t.store.db, async (trx) => {
          for (let i = 0; i < 50; i++, written++)
            await trx
              .insertInto('blocked_domains')
              .values({
                id: `bd_load_${written}`,
                project_id: 'prj_a1',
                domain: `load-${written}.example`,
                reason: 'load',
                created_at: new Date().toISOString(),
              })
              .execute();
        });
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = await count();
    const copy = join(t.dir, 'copy.db');
    // A separate process, so this one keeps writing while it copies.
    const result = await cliProcess(['backup', copy, '--db', db], { OUTREACH_API_LOG_LEVEL: 'silent' });
    const after = await count();
    writing = false;
    await writer;

    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^backed up .+ to .+copy\.db: \d+\.\d\d MiB \(\d+ bytes\) in \d+\.\d\d s$/m);
    assert.ok(after > before, 'the writer wrote during the backup');
    const copied = new Database(copy, { readonly: true });
    try {
      assert.equal(copied.prepare('PRAGMA integrity_check').pluck().get(), 'ok');
      assert.equal(copied.prepare('PRAGMA foreign_key_check').all().length, 0);
      const n = copied
        .prepare("SELECT COUNT(*) FROM blocked_domains WHERE project_id = 'prj_a1'")
        .pluck()
        .get() as number;
      assert.ok(n >= before && n <= after, `copy holds ${n}, between ${before} and ${after}`);
      const counter = copied
        .prepare("SELECT n FROM row_counts WHERE tbl = 'blocked_domains' AND scope = 'prj_a1'")
        .pluck()
        .get() as number;
      assert.equal(counter, n, 'one snapshot: the counter matches the rows');
      assert.equal((n - baseline) % 50, 0, 'whole transactions only');
    } finally {
      copied.close();
    }
    assert.deepEqual(
      readdirSync(t.dir).filter((f) => f.includes('.partial-')),
      [],
      'no partial file left',
    );
  });

  it('refuses an existing file and a missing database, exit code 1', async () => {
    const existing = join(t.dir, 'exists.db');
    writeFileSync(existing, 'keep me');
    const refused = await cli(['backup', existing, '--db', db]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /already exists/);
    const missing = await cli(['backup', join(t.dir, 'x.db'), '--db', join(t.dir, 'nope.db')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no database at/);
    assert.ok(!existsSync(join(t.dir, 'nope.db')), 'no database created');
  });
});
