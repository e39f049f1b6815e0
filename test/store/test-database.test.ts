/**
 * The PostgreSQL test helpers (test/helpers/services.ts): a test file's database is its own,
 * created empty and gone after `drop()`; a throwaway cluster stops and starts again with its data.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { PG_URL, createTestDatabase, serviceSkip, startThrowawayPostgres } from '../helpers/services.js';

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

describe('a throwaway PostgreSQL cluster', { skip }, () => {
  it('answers, refuses connections while stopped, keeps its data across a restart, and is gone after destroy()', async () => {
    const cluster = await startThrowawayPostgres();
    const query = async (text: string) => {
      const client = new pg.Client({ connectionString: cluster.url, connectionTimeoutMillis: 5000 });
      await client.connect();
      try {
        return (await client.query(text)).rows;
      } finally {
        await client.end();
      }
    };
    try {
      assert.notEqual(new URL(cluster.url).port, new URL(PG_URL).port || '5432', 'never the shared server');
      await query('CREATE TABLE kept (n integer); INSERT INTO kept VALUES (7)');
      const [ctype] = await query("SELECT datctype FROM pg_database WHERE datname = 'postgres'");
      assert.equal(ctype.datctype, 'C.UTF-8', 'the shared server’s locale');
      await cluster.stop();
      await assert.rejects(query('SELECT 1'), /ECONNREFUSED/);
      await cluster.start();
      assert.deepEqual(await query('SELECT n FROM kept'), [{ n: 7 }]);
    } finally {
      await cluster.destroy();
    }
    await assert.rejects(query('SELECT 1'), /ECONNREFUSED/);
  });
});
