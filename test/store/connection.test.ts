/**
 * `Store.close()` closes the SQLite connection however the store was used: before, a store that
 * ran no query through the query builder (kysely opens its connection lazily) kept the file open
 * after `close()`, with its write-ahead log never checkpointed into the database file. What a
 * store can do is known from its location before it opens (`capabilitiesAt`), and a query builder
 * of no store has no dialect to assume: `db/`'s pieces refuse it (before, `dialectOf` answered
 * `sqlite` for it).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { capabilitiesAt, openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { textSearch } from '../../src/db/search.js';
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

describe('what a store can do, and a builder of no store', () => {
  it('knows the capabilities of a location before it opens, the same as the opened store', async () => {
    assert.deepEqual(capabilitiesAt('postgres://someone@db.example/outreach'), {
      product: 'PostgreSQL',
      canSnapshot: false,
      sharedByInstances: true,
    });
    assert.deepEqual(capabilitiesAt('POSTGRESQL://db.example/outreach').product, 'PostgreSQL');
    const store = await openStore(':memory:');
    try {
      const { product, canSnapshot, sharedByInstances } = store;
      assert.deepEqual({ product, canSnapshot, sharedByInstances }, capabilitiesAt(':memory:'));
      assert.deepEqual(capabilitiesAt(':memory:'), { product: 'SQLite', canSnapshot: true, sharedByInstances: false });
    } finally {
      await store.close();
    }
  });

  it('refuses a query builder that belongs to no open store instead of assuming a dialect', () => {
    const foreign = new Kysely<Database>({ dialect: new SqliteDialect({ database: {} as never }) });
    assert.throws(
      () => textSearch(foreign, 'abc', { table: 'prospects', fts: 'prospects_fts' }, () => sql`1 = 1`),
      /belongs to no open store/,
    );
  });
});
