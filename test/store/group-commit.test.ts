/**
 * Group commit (src/db/sqlite/group-commit.ts, issue #33 item 3): a commit's caller goes on only
 * after an fsync of the WAL that began after the commit; commits made while one fsync is in
 * flight share the next; a failed fsync fails the commits it was to cover. Then the store over a
 * real file: `synchronous = full` runs `NORMAL` with group commit and loses no concurrent
 * transaction's rows, and `:memory:` keeps `FULL`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { inTransaction, openStore } from '../../src/db/connection.js';
import type { SqliteStore } from '../../src/db/store.js';
import { GroupCommit, type SyncedFile } from '../../src/db/sqlite/group-commit.js';
import {
  Connection,
  ConnectionLock,
  LockedDialect,
  LockedDriver,
  openRaw,
  StatementCache,
} from '../../src/db/sqlite/driver.js';
import { type Generated, Kysely } from 'kysely';

/** A WAL whose syncs wait until the test lets them end (`finish`), or fail (`fail`). */
function heldFile() {
  const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const file: SyncedFile = {
    sync: () => new Promise((resolve, reject) => pending.push({ resolve, reject })),
    close: async () => {},
  };
  const next = async () => {
    for (let i = 0; i < 100 && pending.length === 0; i++) await new Promise((r) => setImmediate(r));
    const sync = pending.shift();
    assert.ok(sync, 'no fsync was started');
    return sync;
  };
  return {
    open: async () => file,
    /** How many syncs were started and not yet ended. */
    started: () => pending.length,
    finish: async () => (await next()).resolve(),
    fail: async (error: Error) => (await next()).reject(error),
  };
}

/** Whether `promise` has settled after the queued callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe('GroupCommit', () => {
  it('resolves at once when nothing was committed', async () => {
    const file = heldFile();
    const group = new GroupCommit('unused-wal', undefined, file.open);
    assert.equal(await settled(group.durable()), true);
    assert.equal(group.stats.syncs, 0);
  });

  it('answers a commit only after an fsync that began after it; later commits share the next fsync', async () => {
    const file = heldFile();
    const group = new GroupCommit('unused-wal', undefined, file.open);
    group.noteCommit();
    const first = group.durable();
    assert.equal(await settled(first), false, 'answered before its fsync');
    assert.equal(file.started(), 1);
    // Three commits while the first fsync is in flight: none of them is covered by it.
    const later = [1, 2, 3].map(() => {
      group.noteCommit();
      return group.durable();
    });
    await file.finish();
    assert.equal(await settled(first), true);
    for (const waiting of later) assert.equal(await settled(waiting), false, 'covered by an fsync begun before it');
    await file.finish();
    for (const waiting of later) assert.equal(await settled(waiting), true);
    assert.deepEqual(group.stats, { commits: 4, syncs: 2 });
    await group.close();
  });

  it('fails the commits a failed fsync was to cover, and syncs again for later ones', async () => {
    const file = heldFile();
    const failures: unknown[] = [];
    const group = new GroupCommit('unused-wal', (error) => failures.push(error), file.open);
    group.noteCommit();
    const first = group.durable();
    await file.fail(new Error('EIO: i/o error, fsync'));
    await assert.rejects(first, /EIO/);
    assert.equal(failures.length, 1);
    group.noteCommit();
    const second = group.durable();
    await file.finish();
    assert.equal(await settled(second), true);
    await second;
  });
});

describe('the SQLite store with group commit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-group-commit-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const pragma = async (store: SqliteStore, name: string) =>
    store.exclusive((sqlite) => Object.values(sqlite.prepare(`PRAGMA ${name}`).get() as object)[0]);

  it('runs synchronous=NORMAL on a WAL file and keeps every row of concurrent transactions', async () => {
    const store = (await openStore(join(dir, 'group.db'))) as SqliteStore;
    try {
      assert.equal(await pragma(store, 'journal_mode'), 'wal');
      assert.equal(await pragma(store, 'synchronous'), 1, 'NORMAL: the WAL is synced by the group');
      await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(store.db);
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          inTransaction(store.db, async (trx) => {
            await sql`INSERT INTO t (v) VALUES (${`row ${i}`})`.execute(trx);
          }),
        ),
      );
      // One that fails rolls back alone.
      await assert.rejects(
        inTransaction(store.db, async (trx) => {
          await sql`INSERT INTO t (v) VALUES ('rolled back')`.execute(trx);
          throw new Error('refused');
        }),
        /refused/,
      );
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(store.db);
      assert.equal(rows[0]!.n, 50);
    } finally {
      await store.close();
    }
  });

  it('syncs a transaction that changed something, not one whose statements changed no row (an idle poll)', async () => {
    const sqlite = await openRaw(join(dir, 'driver.db'), {});
    sqlite.exec('PRAGMA journal_mode = WAL');
    sqlite.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    const file = heldFile();
    const group = new GroupCommit('unused-wal', undefined, file.open);
    const statements = new StatementCache(sqlite, () => {});
    const db = new Kysely<{ t: { id: Generated<number>; v: string } }>({
      dialect: new LockedDialect(new LockedDriver(new Connection(statements), new ConnectionLock(), statements, group)),
    });
    try {
      const poll = () =>
        db.transaction().execute(async (trx) => {
          await trx.selectFrom('t').selectAll().execute();
          await trx.updateTable('t').set({ v: 'claimed' }).where('v', '=', 'due').execute();
          await trx.deleteFrom('t').where('id', '<', 0).execute();
          await sql`INSERT INTO t (id, v) SELECT 1, 'x' WHERE 0 RETURNING id`.execute(trx);
        });
      await poll();
      await poll();
      assert.deepEqual(group.stats, { commits: 0, syncs: 0 }, 'nothing changed: no fsync');
      const wrote = db.transaction().execute((trx) => trx.insertInto('t').values({ v: 'due' }).execute());
      await file.finish();
      await wrote;
      assert.deepEqual(group.stats, { commits: 1, syncs: 1 });
      const claimed = poll();
      await file.finish();
      await claimed;
      assert.deepEqual(group.stats, { commits: 2, syncs: 2 }, 'the poll that claimed a row is synced');
      const schema = db.transaction().execute((trx) => sql`CREATE INDEX t_v ON t (v)`.execute(trx));
      await file.finish();
      await schema;
      assert.deepEqual(group.stats, { commits: 3, syncs: 3 }, 'a schema change is synced');
    } finally {
      statements.close();
    }
  });

  it('keeps synchronous=FULL where there is no WAL file (:memory:), and NORMAL when asked', async () => {
    const memory = (await openStore(':memory:')) as SqliteStore;
    assert.equal(await pragma(memory, 'synchronous'), 2);
    await memory.close();
    const normal = (await openStore(join(dir, 'normal.db'), { synchronous: 'normal' })) as SqliteStore;
    assert.equal(await pragma(normal, 'synchronous'), 1);
    await normal.close();
  });
});
