/**
 * The store's SQL `CHECK (column IN (…))` lists, read back from `sqlite_master` after every
 * migration, are the lists of `src/domain/enums.ts`: one enum module, and a migration that
 * changes a list without it (or the module without a migration) fails here.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { ENUM_CHECKS as EXPECTED } from '../helpers/check-lists.js';
import { sqliteStore } from '../helpers/stores.js';

/** Every `column IN ('a', 'b', …)` of every table's CREATE statement, as `table.column` → values. */
function checkLists(store: Store): Map<string, string[]> {
  const tables = sqliteStore(store)
    .sqlite.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL")
    .all() as {
    name: string;
    sql: string;
  }[];
  const lists = new Map<string, string[]>();
  for (const { name, sql } of tables) {
    for (const match of sql.matchAll(/CHECK\s*\(\s*(\w+)\s+IN\s*\(([^)]*)\)\s*\)/gi)) {
      const values = [...match[2]!.matchAll(/'((?:[^']|'')*)'/g)].map((m) => m[1]!.replace(/''/g, "'"));
      lists.set(`${name}.${match[1]}`, values);
    }
  }
  return lists;
}

describe('SQL CHECK lists and the enum module', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-enums-'));
    store = await openStore(join(dir, 'enums.db'));
    await migrate(store);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every CHECK list of the migrated store is its enum, in the same order', () => {
    const lists = checkLists(store);
    assert.deepEqual([...lists.keys()].sort(), Object.keys(EXPECTED).sort(), 'the CHECKed columns');
    for (const [column, values] of lists) assert.deepEqual(values, [...EXPECTED[column]!], column);
  });
});
