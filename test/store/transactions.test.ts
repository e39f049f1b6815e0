/**
 * Transactions of the asynchronous store (`inTransaction`, src/db/store.ts): while one is open,
 * other code runs between its statements, and none of it may run on SQLite's one connection
 * inside that transaction (it would join it, or read its uncommitted rows). Every statement,
 * kysely's and the compiled hot paths' alike, waits for the transaction to end; a transaction
 * given to `inTransaction` runs the function in it, without a nested BEGIN.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { precompiledQuery } from '../../src/db/compiled.js';
import { inTransaction, openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { createAccount } from '../../src/repos/tokens.js';

const NOW = '2026-06-01T00:00:00.000Z';
const accountById = precompiledQuery((db, param) =>
  db.selectFrom('accounts').select(['id', 'name']).where('id', '=', param('id')),
);

/** Resolves after the event loop turned once: other requests' code runs meanwhile. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('transactions of the asynchronous store', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-trx-'));
    store = await openStore(join(dir, 'trx.db'));
    await migrate(store);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every other statement out of an open transaction until it commits', async () => {
    const order: string[] = [];
    let inside!: () => void;
    const opened = new Promise<void>((resolve) => (inside = resolve));
    const writer = inTransaction(store.db, async (trx) => {
      await createAccount(trx, { id: 'acct_t1', email: 't1@example.test', name: 'T1', plan: 'pro' }, NOW);
      inside();
      for (let i = 0; i < 5; i++) await turn();
      order.push('commit');
    });
    await opened;
    // A compiled statement (the hot path) and a kysely query, both started while the transaction is open.
    const compiled = accountById.first(store.db, { id: 'acct_t1' }).then((row) => {
      order.push('compiled');
      return row;
    });
    const built = store.db
      .selectFrom('accounts')
      .select('id')
      .where('id', '=', 'acct_t1')
      .executeTakeFirst()
      .then((row) => {
        order.push('built');
        return row;
      });
    await writer;
    assert.deepEqual(await compiled, { id: 'acct_t1', name: 'T1' }, 'read after the commit, not inside it');
    assert.deepEqual(await built, { id: 'acct_t1' });
    assert.deepEqual(order, ['commit', 'compiled', 'built'], 'both waited for the transaction, in the order they came');
  });

  it('never shows another statement the rows of a transaction that rolls back', async () => {
    let inside!: () => void;
    const opened = new Promise<void>((resolve) => (inside = resolve));
    const writer = inTransaction(store.db, async (trx) => {
      await createAccount(trx, { id: 'acct_t2', email: 't2@example.test', name: 'T2', plan: 'pro' }, NOW);
      inside();
      await turn();
      throw new Error('refused');
    });
    await opened;
    const seen = accountById.first(store.db, { id: 'acct_t2' });
    await assert.rejects(writer, /refused/);
    assert.equal(await seen, undefined);
    assert.equal(await accountById.first(store.db, { id: 'acct_t2' }), undefined);
  });

  it('runs a function given a transaction inside it: no nested BEGIN, one commit or rollback for all', async () => {
    await assert.rejects(
      inTransaction(store.db, async (trx) => {
        await createAccount(trx, { id: 'acct_t3', email: 't3@example.test', name: 'T3', plan: 'pro' }, NOW);
        await inTransaction(trx, async (inner) => {
          assert.equal(inner, trx, 'the same transaction');
          await createAccount(inner, { id: 'acct_t4', email: 't4@example.test', name: 'T4', plan: 'pro' }, NOW);
        });
        assert.deepEqual(await accountById.first(trx, { id: 'acct_t4' }), { id: 'acct_t4', name: 'T4' });
        throw new Error('undo both');
      }),
      /undo both/,
    );
    assert.equal(await accountById.first(store.db, { id: 'acct_t3' }), undefined);
    assert.equal(await accountById.first(store.db, { id: 'acct_t4' }), undefined);
  });

  it('serialises concurrent write transactions: each sees the committed work of the one before', async () => {
    await createAccount(store.db, { id: 'acct_n', email: 'n@example.test', name: '0', plan: 'pro' }, NOW);
    const increment = () =>
      inTransaction(store.db, async (trx) => {
        const row = await accountById.first(trx, { id: 'acct_n' });
        await turn();
        await trx
          .updateTable('accounts')
          .set({ name: String(Number(row!.name) + 1) })
          .where('id', '=', 'acct_n')
          .execute();
      });
    await Promise.all(Array.from({ length: 20 }, increment));
    assert.equal((await accountById.first(store.db, { id: 'acct_n' }))?.name, '20', 'no increment was lost');
  });
});
