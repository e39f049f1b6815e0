/**
 * The PostgreSQL test helper (test/helpers/services.ts): a test file's database is its own,
 * created empty and gone after `drop()`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { PG_URL, createTestDatabase, serviceSkip } from '../helpers/services.js';

const skip = await serviceSkip('postgres');

describe('a test file’s own PostgreSQL database', { skip }, () => {
  it('is created empty, is unique per call, and is gone after drop()', async () => {
    const a = await createTestDatabase('helper');
    const b = await createTestDatabase('helper');
    assert.notEqual(a.name, b.name);
    const client = new pg.Client({ connectionString: a.url });
    await client.connect();
    const tables = await client.query(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
    );
    assert.equal(tables.rows[0].n, 0);
    await client.end();
    await a.drop();
    await b.drop();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    const left = await admin.query('SELECT count(*)::int AS n FROM pg_database WHERE datname = ANY($1)', [
      [a.name, b.name],
    ]);
    await admin.end();
    assert.equal(left.rows[0].n, 0);
  });
});
