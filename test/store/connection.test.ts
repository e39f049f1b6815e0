/**
 * `Store.close()` closes the SQLite connection however the store was used: before, a store that
 * ran no query through the query builder (kysely opens its connection lazily) kept the file open
 * after `close()`, with its write-ahead log never checkpointed into the database file.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { sqliteStore } from '../helpers/stores.js';

describe('closing a store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-close-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('closes the connection and checkpoints the log when only synchronous statements ran', async () => {
    const path = join(dir, 'migrated.db');
    const store = await openStore(path);
    await migrate(store);
    assert.ok(existsSync(`${path}-wal`), 'the migration wrote through the write-ahead log');
    await store.close();
    assert.throws(() => sqliteStore(store).sqlite.prepare('SELECT 1'), /not open/);
    assert.ok(!existsSync(`${path}-wal`), 'the last connection to close checkpoints and removes the log');
  });

  it('closes it once when a query builder query ran too', async () => {
    const store = await openStore(join(dir, 'queried.db'));
    await migrate(store);
    await store.db.selectFrom('accounts').select('id').execute();
    await store.close();
    assert.throws(() => sqliteStore(store).sqlite.prepare('SELECT 1'), /not open/);
  });
});
