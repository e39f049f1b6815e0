/**
 * WAL checkpoints run in a worker thread (src/db/sqlite/checkpointer.ts): the store's own connection no
 * longer checkpoints inside a commit, and the pages written still reach the database file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startBackgroundCheckpoints } from '../../src/db/sqlite/checkpointer.js';
import { openStore, type Store } from '../../src/db/connection.js';
import type { Logger } from '../../src/logger.js';
import { sqliteStore } from '../helpers/stores.js';

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
