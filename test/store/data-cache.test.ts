/**
 * Search totals are counted once per search and served from the store's data cache
 * (src/repos/data-cache.ts) until the data changes: a write through this connection or a commit
 * by another one gives the new exact total at once (a write through the raw handle, which the
 * store's code never makes outside `exclusive`, is not counted). The cache follows `Store.stamps`, so
 * `Store.stamps.markChanged()` empties it too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument } from '../../src/import/index.js';
import { cachedCount } from '../../src/repos/data-cache.js';
import { listLeads } from '../../src/repos/leads.js';
import { listProspects } from '../../src/repos/prospects.js';
import { SMALL } from '../helpers/fixture.js';
import { sqliteStore } from '../helpers/stores.js';

const NOW = '2026-03-10T12:00:00.000Z';

describe('the data cache', () => {
  let dir: string;
  let store: Store;
  let other: Store;
  /** A write of this process: through the store, which counts its own writes (not the raw handle). */
  const write = (query: string, parameters: unknown[] = []) =>
    store.db.executeQuery(CompiledQuery.raw(query, parameters));
  const count = (sql: string) => (sqliteStore(store).sqlite.prepare(sql).get() as { n: number }).n;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-cache-'));
    store = await openStore(join(dir, 'cache.db'));
    await migrate(store);
    await importDocument(store, SMALL, { nowIso: NOW });
    other = await openStore(join(dir, 'cache.db'));
  });
  after(async () => {
    await other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a repeated count from the cache and recounts after any write', async () => {
    let counted = 0;
    const counter = async () => ++counted;
    assert.equal(await cachedCount(store.db, 'k', counter), 1);
    assert.equal(await cachedCount(store.db, 'k', counter), 1, 'cached');
    await write("UPDATE accounts SET name = 'Renamed' WHERE id = 'acct_a'");
    assert.equal(await cachedCount(store.db, 'k', counter), 2, 'own write');
    sqliteStore(other).sqlite.prepare("UPDATE accounts SET name = 'Renamed again' WHERE id = 'acct_a'").run();
    assert.equal(await cachedCount(store.db, 'k', counter), 3, "another connection's commit");
    store.stamps.markChanged();
    assert.equal(await cachedCount(store.db, 'k', counter), 4, 'Store.markChanged() (a change SQLite does not count)');
    const untrace = store.traceQueries(() => undefined);
    try {
      assert.equal(await cachedCount(store.db, 'k', counter), 4, 'the traced query builder shares the cache');
    } finally {
      untrace();
    }
  });

  it('keeps prospect and lead search totals exact through writes on either connection', async () => {
    const prospectTotal = async () =>
      (await listProspects(store.db, { projectId: 'prj_a1', search: 'trail' }, 1, 0)).total;
    const leadTotal = async () =>
      (await listLeads(store.db, { projectId: 'prj_a1', view: 'all', search: 'boot' }, 1, 0)).total;
    const prospectMatches = () =>
      count(
        "SELECT count(*) AS n FROM prospects WHERE project_id = 'prj_a1' AND (title || ' ' || domain || ' ' || url || ' ' || coalesce(description, '')) LIKE '%trail%'",
      );
    const before = prospectMatches();
    assert.ok(before > 0, 'the fixture has matches');
    assert.equal(await prospectTotal(), before);
    const leadsBefore = await leadTotal();

    const matching = (
      sqliteStore(store)
        .sqlite.prepare(
          "SELECT id FROM prospects WHERE project_id = 'prj_a1' AND (title || ' ' || domain || ' ' || url || ' ' || coalesce(description, '')) LIKE '%trail%' LIMIT 1",
        )
        .get() as { id: string }
    ).id;
    await write(
      "UPDATE prospects SET title = 'Nothing here', domain = 'x.example', url = 'https://x.example/', description = NULL WHERE id = ?",
      [matching],
    );
    assert.equal(await prospectTotal(), prospectMatches());
    assert.equal(prospectMatches(), before - 1);

    sqliteStore(other).sqlite.prepare("UPDATE prospects SET title = 'Trail again' WHERE id = ?").run(matching);
    assert.equal(await prospectTotal(), before);

    sqliteStore(other)
      .sqlite.prepare(
        "UPDATE leads SET title = 'Boots wanted', redacted = 0, dismissed = 0 WHERE id = (SELECT id FROM leads WHERE project_id = 'prj_a1' AND title NOT LIKE '%boot%' AND body NOT LIKE '%boot%' AND redacted = 0 LIMIT 1)",
      )
      .run();
    assert.equal(await leadTotal(), leadsBefore + 1);
  });
});
