/**
 * PostgreSQL's prepared statements (src/db/postgres/prepared.ts):
 * - which texts are named: a statement that returns or changes rows, the second time it is seen,
 *   at most `namesMax` of them, never `BEGIN` or `COMMIT` nor a text kept as text; the texts seen
 *   once are forgotten past `seenMax`;
 * - on a real PostgreSQL server, through the store: a statement run twice is prepared on its
 *   connection (`pg_prepared_statements`) and gives the same rows as text; a search's statement
 *   (run within the share) never is; when another client
 *   adds a column to the table a prepared `SELECT *` reads, the next run answers with the new
 *   column (sent again as text) on a new connection; inside a transaction the failure is the
 *   transaction's (a store failure: 503), and the next statement runs on a new connection; with
 *   `db.preparedStatements` false nothing is prepared.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { openStore, type Store } from '../../src/db/connection.js';
import { storeFailureOf } from '../../src/db/failures.js';
import { StatementNames } from '../../src/db/postgres/prepared.js';
import { longReaderOf } from '../../src/db/store.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';

describe('which statements are named', () => {
  it('names a statement that returns or changes rows the second time it is seen, and keeps its name', () => {
    const names = new StatementNames();
    const select = 'select * from "backlinks" where "project_id" = $1 limit $2';
    assert.equal(names.nameOf(select), undefined);
    const name = names.nameOf(select);
    assert.equal(name, 'oa_1');
    assert.equal(names.nameOf(select), name);
    for (const text of [
      'insert into t values ($1)',
      'UPDATE t SET a = $1',
      ' delete from t',
      'WITH x AS (select 1) select * from x',
    ]) {
      names.nameOf(text);
      assert.match(names.nameOf(text) ?? '', /^oa_\d+$/, text);
    }
  });

  it('never names a transaction statement or a setting', () => {
    const names = new StatementNames();
    for (const text of [
      'begin',
      'commit',
      'rollback',
      'start transaction isolation level serializable',
      'SET LOCAL x = 1',
    ])
      for (let i = 0; i < 3; i++) assert.equal(names.nameOf(text), undefined, text);
    assert.equal(names.size, 0);
  });

  it('names namesMax texts at most; later ones go as text', () => {
    const names = new StatementNames({ namesMax: 2, seenMax: 100 });
    for (const text of ['select 1', 'select 2', 'select 3']) {
      names.nameOf(text);
      names.nameOf(text);
    }
    assert.equal(names.size, 2);
    assert.equal(names.nameOf('select 3'), undefined);
    assert.equal(names.nameOf('select 1'), 'oa_1');
  });

  it('never names a text kept as text', () => {
    const names = new StatementNames();
    names.keepAsText('select * from leads where folded like $1');
    for (let i = 0; i < 3; i++) assert.equal(names.nameOf('select * from leads where folded like $1'), undefined);
    names.nameOf('select 1');
    assert.equal(names.nameOf('select 1'), 'oa_1');
  });

  it('forgets the texts seen once when seenMax of them are kept', () => {
    const names = new StatementNames({ namesMax: 10, seenMax: 2 });
    names.nameOf('select 1');
    names.nameOf('select 2');
    names.nameOf('select 3'); // forgets 1 and 2
    assert.equal(names.nameOf('select 1'), undefined);
    assert.equal(names.nameOf('select 3'), 'oa_1');
  });
});

describe('prepared statements on PostgreSQL', async () => {
  const skip = await serviceSkip('postgres');
  let database: TestDatabase;
  let store: Store;
  let admin: pg.Client;

  const run = async <T = Record<string, unknown>>(text: string, ...values: unknown[]) =>
    (await store.db.executeQuery<T>(CompiledQuery.raw(text, values))).rows;
  const backend = async () => (await run<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;

  before(async () => {
    if (skip) return;
    database = await createTestDatabase('prepared');
    // One connection: every statement below runs on it until it is dropped.
    store = await openStore(database.url, { poolSize: 1 });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query('CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2)');
  });
  after(async () => {
    if (skip) return;
    await admin.end();
    await store.close();
    await database.drop();
  });

  it('prepares a statement run twice on its connection, with the same rows', { skip }, async () => {
    const text = 'SELECT a FROM t WHERE a >= $1 ORDER BY a';
    assert.deepEqual(await run(text, 1), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(await run(text, 2), [{ a: 2 }]);
    assert.deepEqual(await run(text, 1), [{ a: 1 }, { a: 2 }]);
    const prepared = await run<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
    assert.deepEqual(
      prepared.map((p) => p.statement),
      [text],
    );
  });

  it("never prepares a search's statement", { skip }, async () => {
    const search = 'SELECT a FROM t WHERE a::text LIKE $1';
    for (const term of ['1', '%', '2'])
      assert.ok(Array.isArray(await longReaderOf(store.db)!((read) => read(CompiledQuery.raw(search, [term])))));
    const prepared = await run<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
    assert.ok(!prepared.some((p) => p.statement === search));
  });

  it('answers with a column added meanwhile, on a new connection', { skip }, async () => {
    const text = 'SELECT * FROM t ORDER BY a';
    await run(text);
    assert.deepEqual(await run(text), [{ a: 1 }, { a: 2 }]);
    const before = await backend();
    await admin.query('ALTER TABLE t ADD COLUMN b int DEFAULT 7');
    assert.deepEqual(await run(text), [
      { a: 1, b: 7 },
      { a: 2, b: 7 },
    ]);
    assert.notEqual(await backend(), before);
    assert.deepEqual(await run(text), [
      { a: 1, b: 7 },
      { a: 2, b: 7 },
    ]);
  });

  it('inside a transaction, fails the transaction; the next statement has a new connection', { skip }, async () => {
    const text = 'SELECT * FROM t WHERE a = $1';
    await run(text, 1);
    await run(text, 1);
    const before = await backend();
    await admin.query('ALTER TABLE t ADD COLUMN c int');
    await assert.rejects(
      store.db.transaction().execute(async (tx) => {
        await tx.executeQuery(CompiledQuery.raw(text, [1]));
      }),
      (error) => {
        assert.equal((error as { code?: string }).code, '0A000');
        // Answered 503 with Retry-After, the store still ready.
        assert.equal(storeFailureOf(error), 'busy');
        return true;
      },
    );
    assert.notEqual(await backend(), before);
    assert.deepEqual(await run(text, 2), [{ a: 2, b: 7, c: null }]);
  });

  it('prepares nothing with db.preparedStatements false', { skip }, async () => {
    const plain = await openStore(database.url, { poolSize: 1, preparedStatements: false });
    try {
      for (let i = 0; i < 3; i++) await plain.db.executeQuery(CompiledQuery.raw('SELECT a FROM t WHERE a = $1', [1]));
      const { rows } = await plain.db.executeQuery<{ n: number }>(
        CompiledQuery.raw('SELECT count(*)::int AS n FROM pg_prepared_statements'),
      );
      assert.deepEqual(rows, [{ n: 0 }]);
    } finally {
      await plain.close();
    }
  });
});
