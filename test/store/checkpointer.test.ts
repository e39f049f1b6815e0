/**
 * WAL checkpoints run in a worker thread (src/db/sqlite/checkpointer.ts): the store's own connection no
 * longer checkpoints inside a commit, and the pages written still reach the database file. The
 * store's first search reader is that same thread (src/db/sqlite/store-thread.ts): a search starts
 * no second one, and the checkpoints go on after it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { startBackgroundCheckpoints } from '../../src/db/sqlite/checkpointer.js';
import { importDocument } from '../../src/import/index.js';
import type { Logger } from '../../src/logger.js';
import { listProspects } from '../../src/repos/prospects.js';
import { SMALL } from '../helpers/fixture.js';
import { sqliteStore } from '../helpers/stores.js';

/** Worker threads of this process now (Node's diagnostic report lists each). */
const workerThreads = () => (process.report.getReport() as { workers: unknown[] }).workers.length;

const autocheckpoint = (store: Store) =>
  (sqliteStore(store).sqlite.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number })
    .wal_autocheckpoint;

describe('background WAL checkpoints', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-checkpoint-'));
    // synchronous = NORMAL: in WAL mode a commit then waits for no fsync, and the 1,500 commits
    // below take milliseconds instead of seconds; checkpoints work the same.
    store = await openStore(join(dir, 'c.db'), { synchronous: 'normal' });
    sqliteStore(store).sqlite.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, data BLOB)');
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies the WAL into the database file from a worker, never from a commit', async () => {
    const lines: { message: string; fields?: Record<string, unknown> }[] = [];
    const logger: Logger = { log: (_level, message, fields) => lines.push({ message, fields }) };
    const checkpointer = startBackgroundCheckpoints(sqliteStore(store), { logger, intervalMs: 20 });
    assert.ok(checkpointer, 'a file store under Node gets one');
    assert.equal(autocheckpoint(store), 0, 'no checkpoint inside a commit');
    const before = statSync(sqliteStore(store).path).size;
    const insert = sqliteStore(store).sqlite.prepare('INSERT INTO filler (data) VALUES (?)');
    // ~1,500 pages, one commit each: past SQLite's default threshold of 1,000.
    for (let i = 0; i < 1500; i++) insert.run(Buffer.alloc(3000, i % 256));
    const deadline = Date.now() + 10_000;
    while (
      (statSync(sqliteStore(store).path).size <= before + 3000 * 1000 || checkpointer.stats.count === 0) &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(statSync(sqliteStore(store).path).size > before + 3000 * 1000, 'the pages reached the database file');
    assert.ok(checkpointer.stats.count > 0);
    assert.ok(
      lines.some((l) => l.message === 'wal checkpoint' && typeof l.fields?.ms === 'number'),
      'each checkpoint is logged with its duration',
    );
    await checkpointer.stop();
    assert.equal(autocheckpoint(store), 1000, 'stopping turns the automatic checkpoint back on');
    assert.ok(lines.some((l) => l.message === 'wal checkpoints in the background'));
  });
});

describe('one worker thread for the checkpoints and the first search reader', () => {
  let dir: string;
  let store: Store;
  /** Worker threads before the store opened. */
  let baseline: number;
  before(async () => {
    baseline = workerThreads();
    dir = mkdtempSync(join(tmpdir(), 'outreach-store-thread-'));
    store = await openStore(join(dir, 's.db'), { synchronous: 'normal', searchConnections: 2 });
    await migrate(store);
    await importDocument(store, SMALL, { nowIso: '2026-03-10T12:00:00.000Z' });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('searches on the checkpoints’ thread, a second thread only for a second search at once', async () => {
    const logger: Logger = { log: () => {} };
    const checkpointer = startBackgroundCheckpoints(sqliteStore(store), { logger, intervalMs: 20 });
    assert.ok(checkpointer);
    const search = () => listProspects(store.db, { projectId: 'prj_a1', search: 'bo' }, 25, 0);
    const first = await search();
    assert.ok(first.total > 0, 'the search found rows');
    assert.equal(workerThreads(), baseline + 1, 'the checkpoints and the first search: one thread');
    const [a, b] = await Promise.all([search(), search()]);
    assert.deepEqual([a.total, b.total], [first.total, first.total]);
    assert.equal(workerThreads(), baseline + 2, 'two searches at once: one more thread');

    // The checkpoints go on beside the searches: pages written now reach the database file.
    const path = sqliteStore(store).path;
    sqliteStore(store).sqlite.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, data BLOB)');
    const size = statSync(path).size;
    const insert = sqliteStore(store).sqlite.prepare('INSERT INTO filler (data) VALUES (?)');
    for (let i = 0; i < 300; i++) insert.run(Buffer.alloc(3000, i % 256));
    const deadline = Date.now() + 10_000;
    while (statSync(path).size <= size + 3000 * 250 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(statSync(path).size > size + 3000 * 250, 'the pages reached the database file');
    assert.equal((await search()).total, first.total);
    await checkpointer.stop();
    assert.equal((await search()).total, first.total, 'the thread still searches once the checkpoints stopped');
  });
});
