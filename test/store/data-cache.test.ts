/**
 * Values derived from the data (search totals, counted once per search) are served from the
 * store's data cache (src/repos/data-cache.ts) until a table they were read from changes: a write
 * through this connection or a commit by another one gives the new exact value at once, a write
 * to another table of this connection leaves it be once requests are served. The cache follows
 * `Store.stamps`, so `Store.stamps.markChanged()` empties it too.
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
import { STAMPED_TABLES } from '../../src/db/change-stamps.js';
import { cachedValue } from '../../src/repos/data-cache.js';
import { listLeads } from '../../src/repos/leads.js';
import { listProspects } from '../../src/repos/prospects.js';
import { SMALL } from '../helpers/fixture.js';
import { sqlRun } from '../helpers/sql.js';
import { sqliteStore } from '../helpers/stores.js';

const NOW = '2026-03-10T12:00:00.000Z';
/** `sql`'s one row's `n`, read straight on `store`'s connection. */
const countIn = (store: Store, sql: string) => (sqliteStore(store).sqlite.prepare(sql).get() as { n: number }).n;
/** A turn of the event loop: the triggers are put in place in one of their own. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the data cache', () => {
  let dir: string;
  let store: Store;
  let other: Store;
  /** A write of this process: through the store, which counts its own writes (not the raw handle). */
  const write = (query: string, parameters: unknown[] = []) =>
    store.db.executeQuery(CompiledQuery.raw(query, parameters));
  const count = (sql: string) => countIn(store, sql);

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

  it('answers a repeated count from the cache and recounts after any write to a table it read', async () => {
    let counted = 0;
    const counter = async () => ++counted;
    const cached = () => cachedValue(store.db, ['accounts'], 'k', counter);
    assert.equal(await cached(), 1);
    assert.equal(await cached(), 1, 'cached');
    await write("UPDATE accounts SET name = 'Renamed' WHERE id = 'acct_a'");
    assert.equal(await cached(), 2, 'own write');
    sqliteStore(other).sqlite.prepare("UPDATE accounts SET name = 'Renamed again' WHERE id = 'acct_a'").run();
    assert.equal(await cached(), 3, "another connection's commit");
    store.stamps.markChanged();
    assert.equal(await cached(), 4, 'Store.markChanged() (a change SQLite does not count)');
    const untrace = store.traceQueries(() => undefined);
    try {
      assert.equal(await cached(), 4, 'the traced query builder shares the cache');
    } finally {
      untrace();
    }
  });

  // From the first stamp a cache asks for, the connection's TEMP triggers tell which table a write
  // changed (src/db/sqlite/change-tracking.ts); before that, every write counts for every table.
  /** A store of its own (once a request started, a store keeps its stamp's read until the next one). */
  const served = async (name: string) => {
    const path = join(dir, `${name}.db`);
    const opened = await openStore(path);
    await migrate(opened);
    await importDocument(opened, SMALL, { nowIso: NOW });
    return { served: opened, second: await openStore(path) };
  };

  it('keeps a value through writes to other tables, and through none to its own', async (t) => {
    const { served: store, second: other } = await served('tables');
    const count = (sql: string) => countIn(store, sql);
    t.after(async () => {
      await other.close();
      await store.close();
    });
    let counted = 0;
    const counter = async () => ++counted;
    const cached = () => cachedValue(store.db, ['backlinks'], 'backlinks-k', counter);
    const triggers = () => count("SELECT count(*) AS n FROM temp.sqlite_master WHERE type = 'trigger'");
    assert.equal(triggers(), 0, 'nothing in place before a cache asks');
    await cached();
    assert.equal(triggers(), 0, 'not on the request that asked');
    await nextTurn();
    assert.equal(triggers(), STAMPED_TABLES.length * 3, 'one trigger per stamped table and kind of write');
    store.stamps.requestStarts();
    const kept = await cached();
    await sqlRun(store, "UPDATE drafts SET purpose = 'A third purpose' WHERE id = (SELECT min(id) FROM drafts)");
    await sqlRun(
      store,
      "UPDATE api_tokens SET last_used_at = '2026-03-10T12:01:00.000Z' WHERE id = (SELECT min(id) FROM api_tokens)",
    );
    store.stamps.requestStarts();
    assert.equal(await cached(), kept, 'a draft and a token written: the backlinks value is kept');

    await sqlRun(store, "UPDATE backlinks SET observed_anchor = 'changed' WHERE id = (SELECT min(id) FROM backlinks)");
    store.stamps.requestStarts();
    assert.equal(await cached(), kept + 1, 'a backlink written: counted again');

    // A cascade names no backlink: deleting a site deletes its backlinks through the foreign key.
    const site = (
      sqliteStore(store).sqlite.prepare('SELECT site_id FROM backlinks GROUP BY site_id LIMIT 1').get() as {
        site_id: string;
      }
    ).site_id;
    const now = await cached();
    await sqlRun(store, 'DELETE FROM sites WHERE id = ?', site);
    store.stamps.requestStarts();
    assert.equal(count(`SELECT count(*) AS n FROM backlinks WHERE site_id = '${site}'`), 0, 'the cascade ran');
    assert.equal(await cached(), now + 1, "a site's deletion, cascading to its backlinks: counted again");

    // A write inside a transaction counts as it runs; nothing is kept while the transaction is open.
    const before = await cached();
    await store.db.transaction().execute(async (trx) => {
      await trx.executeQuery(
        CompiledQuery.raw(
          "UPDATE backlinks SET observed_anchor = 'in a transaction' WHERE id = (SELECT min(id) FROM backlinks)",
        ),
      );
      assert.equal(await cachedValue(trx, ['backlinks'], 'backlinks-k', counter), before + 1, 'not kept inside');
    });
    store.stamps.requestStarts();
    assert.equal(await cached(), before + 2, 'counted after the commit');

    // Another connection's commit to any table counts for every table (PRAGMA data_version).
    const again = await cached();
    sqliteStore(other)
      .sqlite.prepare("UPDATE drafts SET purpose = 'From elsewhere' WHERE id = (SELECT min(id) FROM drafts)")
      .run();
    store.stamps.requestStarts();
    assert.equal(await cached(), again + 1, "another connection's write to another table");
  });

  it('puts the triggers back after a migration or a restore (`exclusive`) that dropped a table with them', async (t) => {
    const { served: store, second: other } = await served('rebuilt');
    await other.close();
    t.after(() => store.close());
    const count = (sql: string) => countIn(store, sql);
    let counted = 0;
    const counter = async () => ++counted;
    const cached = () => cachedValue(store.db, ['leads'], 'leads-k', counter);
    store.stamps.requestStarts();
    await cached();
    await nextTurn();
    const triggers = () =>
      count(
        "SELECT count(*) AS n FROM temp.sqlite_master WHERE type = 'trigger' AND name LIKE 'stamp\\_leads\\_%' ESCAPE '\\'",
      );
    assert.equal(triggers(), 3, 'one trigger per kind of write');
    // A table rebuilt as a migration would (copy, drop, rename) loses its triggers.
    await sqliteStore(store).exclusive((sqlite) => {
      sqlite.exec('PRAGMA foreign_keys = OFF');
      sqlite.exec('CREATE TABLE leads_copy AS SELECT * FROM leads');
      sqlite.exec('DROP TABLE leads');
      sqlite.exec('ALTER TABLE leads_copy RENAME TO leads');
      sqlite.exec('PRAGMA foreign_keys = ON');
    });
    assert.equal(triggers(), 0, 'dropped with the table');
    store.stamps.requestStarts();
    await cached();
    await nextTurn();
    assert.equal(triggers(), 3, 'in place again after the next stamp asked for');
    store.stamps.requestStarts();
    const kept = await cached();
    await sqlRun(store, "UPDATE leads SET title = 'Tracked again' WHERE id = (SELECT min(id) FROM leads)");
    store.stamps.requestStarts();
    assert.equal(await cached(), kept + 1, 'a write to the rebuilt table is counted');
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
