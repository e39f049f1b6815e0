/**
 * The caches are exact across processes (decisions.md §16 "Caches", issue #32 item 4): real
 * `serve` processes (three on one PostgreSQL database, two on one SQLite file), each keeping
 * tokens, `GET /me`'s counts, search totals and deep-page anchors in memory, and commands run as
 * processes of their own beside them.
 * - A token revoked by `outreach-api tokens revoke` is refused by the very next request of every
 *   instance, after each served it from its cache.
 * - A write through one instance (the token's `last_used_at`, written by its authentication) is
 *   in the next `GET /me` of another; an `outreach-api import` is in every instance's next list
 *   total, search total and deep page (past the first anchor), each equal to what the database
 *   answers then.
 * On PostgreSQL, the change stamp's bump is in the writing transaction: seen by that transaction,
 * by no other until it commits, and gone with a rollback or a connection killed mid-transaction
 * (a crash between a write and its bump cannot happen: there is no between).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument } from '../../src/import/index.js';
import { ANCHOR_STRIDE } from '../../src/repos/page-anchors.js';
import { createToken } from '../../src/repos/tokens.js';
import { cliProcess, serveProcess, type ServeProcess } from '../helpers/cli.js';
import { account, backlink, project, prospect, site } from '../helpers/fixture.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';
import { sqlAll, sqlGet } from '../helpers/sql.js';

const API = '/api/public/v1';
const NOW = '2026-03-10T12:00:00.000Z';
/** Backlinks at first: the deep page below is past the first anchor. */
const ROWS = ANCHOR_STRIDE + 300;
const LIMIT = 25;
/** A page whose offset (page - 1) * LIMIT is past the first anchor. */
const DEEP_PAGE = Math.floor(ANCHOR_STRIDE / LIMIT) + 5;

/** An import document: the account, its project and site, backlinks [from, to) and prospects [from, to) (every third titled "Trail …"). */
const documentOf = (from: number, to: number, prospects: [number, number]) => ({
  accounts: [account('acct_1', { planExpiresAt: '2099-01-01T00:00:00Z' })],
  projects: [project('prj_1', 'acct_1')],
  sites: [site('site_1', 'prj_1')],
  backlinks: Array.from({ length: to - from }, (_, k) => {
    const i = from + k;
    // Seven rows share a createdAt, so the id breaks ties across anchors too.
    const at = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 7) * 3_600_000).toISOString();
    return backlink(`bl_${String(i).padStart(6, '0')}`, 'site_1', { createdAt: at, updatedAt: at });
  }),
  prospects: Array.from({ length: prospects[1] - prospects[0] }, (_, k) => {
    const i = prospects[0] + k;
    return prospect(`pr_${String(i).padStart(5, '0')}`, 'site_1', { title: i % 3 === 0 ? `Trail ${i}` : `Road ${i}` });
  }),
});

async function get(origin: string, path: string, token: string) {
  const res = await fetch(`${origin}${API}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as any };
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`caches across processes on ${kind === 'sqlite' ? 'one SQLite file' : 'one PostgreSQL database'}`, () => {
    let skip: string | false = false;
    let dir: string;
    let database: TestDatabase | undefined;
    let location: string;
    let store: Store;
    let instances: ServeProcess[] = [];
    const tokens: Record<string, { token: string; id: string }> = {};

    /** What the database answers now: the backlinks of the deep page, their total, the prospects matching "trail". */
    const truth = async () => {
      const page = await sqlAll<{ id: string }>(
        store,
        `SELECT id FROM backlinks WHERE project_id = 'prj_1' ORDER BY created_at DESC, id DESC LIMIT ${LIMIT} OFFSET ${(DEEP_PAGE - 1) * LIMIT}`,
      );
      const total = await sqlGet<{ n: number }>(
        store,
        "SELECT count(*) AS n FROM backlinks WHERE project_id = 'prj_1'",
      );
      const matches = await sqlGet<{ n: number }>(
        store,
        "SELECT count(*) AS n FROM prospects WHERE project_id = 'prj_1' AND title LIKE 'Trail%'",
      );
      return { page: page.map((r) => r.id), total: Number(total!.n), matches: Number(matches!.n) };
    };
    /** What `instance` serves now, with the token named `name`. */
    const served = async (instance: ServeProcess, name: string) => {
      const { token } = tokens[name]!;
      const deep = await get(instance.origin, `/projects/prj_1/backlinks?page=${DEEP_PAGE}&limit=${LIMIT}`, token);
      const search = await get(instance.origin, '/projects/prj_1/prospects?search=trail&limit=1', token);
      assert.equal(deep.status, 200);
      assert.equal(search.status, 200);
      return {
        page: (deep.body.data.data as { id: string }[]).map((b) => b.id),
        total: deep.body.data.pagination.total as number,
        matches: search.body.data.pagination.total as number,
      };
    };

    before(async () => {
      skip = kind === 'postgres' ? await serviceSkip('postgres') : false;
      if (skip) return;
      dir = mkdtempSync(join(tmpdir(), 'outreach-caches-'));
      if (kind === 'postgres') {
        database = await createTestDatabase('caches');
        location = database.url;
      } else location = join(dir, 'caches.db');
      store = await openStore(location);
      await migrate(store);
      await importDocument(store, documentOf(0, ROWS, [0, 300]), { nowIso: NOW });
      for (const name of ['revoked', 'reader']) {
        const { row, token } = await createToken(
          store.db,
          { accountId: 'acct_1', name, scopes: ['projects:read', 'backlinks:read', 'prospects:read'], expiresAt: null },
          NOW,
        );
        tokens[name] = { token, id: row.id };
      }
      const count = kind === 'postgres' ? 3 : 2;
      instances = await Promise.all(
        Array.from({ length: count }, () => serveProcess(['--db', location, 'serve', '--port', '0'])),
      );
    });
    after(async () => {
      await Promise.all(instances.map((instance) => instance.close()));
      await store?.close();
      await database?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('refuses a token revoked by `tokens revoke` (another process) on the very next request of every instance', async (t) => {
      if (skip) return t.skip(skip);
      const { token, id } = tokens.revoked!;
      for (const instance of instances) {
        assert.equal((await get(instance.origin, '/me', token)).status, 200);
        assert.equal((await get(instance.origin, '/me', token)).status, 200, 'served from its cache');
      }
      const revoked = await cliProcess(['--db', location, 'tokens', 'revoke', id]);
      assert.equal(revoked.code, 0, revoked.stderr);
      for (const instance of instances) assert.equal((await get(instance.origin, '/me', token)).status, 401);
    });

    it("shows one instance's write in another's next GET /me", async (t) => {
      if (skip) return t.skip(skip);
      const { token } = tokens.reader!;
      const [a, b] = instances as [ServeProcess, ServeProcess];
      // B authenticates first (writing last_used_at) and keeps its /me; then A's first request writes it again.
      const first = await get(b.origin, '/me', token);
      assert.equal((await get(b.origin, '/me', token)).body.data.token.lastUsedAt, first.body.data.token.lastUsedAt);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const written = (await get(a.origin, '/me', token)).body.data.token.lastUsedAt as string;
      assert.ok(written > first.body.data.token.lastUsedAt, 'A wrote a later last_used_at');
      assert.equal((await get(b.origin, '/me', token)).body.data.token.lastUsedAt, written);
    });

    it("gives every instance's next total, search total and deep page the database's answer after an import", async (t) => {
      if (skip) return t.skip(skip);
      const before = await truth();
      for (const instance of instances) {
        assert.deepEqual(await served(instance, 'reader'), before);
        assert.deepEqual(await served(instance, 'reader'), before, 'from its caches');
      }
      // Newer backlinks (they move every deep page) and more matching prospects, by another process.
      const file = join(dir, `more-${kind}.json`);
      writeFileSync(file, JSON.stringify(documentOf(ROWS, ROWS + 40, [300, 330])));
      const imported = await cliProcess(['--db', location, 'import', file]);
      assert.equal(imported.code, 0, imported.stderr);
      const after = await truth();
      assert.equal(after.total, before.total + 40);
      assert.equal(after.matches, before.matches + 10);
      assert.notDeepEqual(after.page, before.page);
      for (const instance of instances) assert.deepEqual(await served(instance, 'reader'), after);
    });

    it('bumps the stamp in the writing transaction only (PostgreSQL): a rollback or a killed connection leaves none', async (t) => {
      if (skip) return t.skip(skip);
      if (kind === 'sqlite') return t.skip('PostgreSQL only: SQLite counts commits itself (PRAGMA data_version)');
      const stamp = async (client: pg.Client) =>
        Number((await client.query<{ n: string }>('SELECT sum(n) AS n FROM change_stamps')).rows[0]!.n);
      const writer = new pg.Client({ connectionString: location });
      const reader = new pg.Client({ connectionString: location });
      // The terminated backend's connection reports its end as an event.
      writer.on('error', () => {});
      await writer.connect();
      await reader.connect();
      try {
        const start = await stamp(reader);
        await writer.query('BEGIN');
        await writer.query("UPDATE prospects SET title = 'Trail moved' WHERE id = 'pr_00001'");
        assert.equal(await stamp(writer), start + 1, 'the writing transaction sees its bump');
        assert.equal(await stamp(reader), start, 'no other connection does before the commit');
        await writer.query('ROLLBACK');
        assert.equal(await stamp(reader), start, 'a rollback takes the bump back with the write');

        await writer.query('BEGIN');
        await writer.query("UPDATE prospects SET title = 'Trail moved' WHERE id = 'pr_00001'");
        const pid = (await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        // The crash: the connection's backend ends mid-transaction.
        await reader.query('SELECT pg_terminate_backend($1)', [pid]);
        await assert.rejects(writer.query('COMMIT'));
        assert.equal(await stamp(reader), start, 'the write and its bump went together');
        const row = await reader.query<{ title: string }>("SELECT title FROM prospects WHERE id = 'pr_00001'");
        assert.notEqual(row.rows[0]!.title, 'Trail moved');

        await reader.query("UPDATE prospects SET title = title WHERE id = 'pr_00001'");
        assert.equal(await stamp(reader), start + 1, 'a committed write bumps it once');
      } finally {
        await writer.end().catch(() => {});
        await reader.end();
      }
    });

    // sql/postgres/0010_change_stamps_by_table.sql: a cache read from some tables outlives writes to others.
    it('counts each table apart (PostgreSQL): a token written leaves the backlinks, a cascade counts its table', async (t) => {
      if (skip) return t.skip(skip);
      if (kind === 'sqlite')
        return t.skip(
          'PostgreSQL only: the SQLite store tells tables apart by TEMP triggers (test/store/data-cache.test.ts)',
        );
      const byTable = async (client: pg.Client) =>
        (
          await client.query<Record<string, string>>(
            'SELECT sum(api_tokens) AS api_tokens, sum(backlinks) AS backlinks, sum(sites) AS sites, sum(projects) AS projects FROM change_stamps',
          )
        ).rows[0]!;
      const client = new pg.Client({ connectionString: location });
      await client.connect();
      try {
        const stampOf = async (tables: Parameters<Store['stamps']['current']>[0]) => {
          store.stamps.requestStarts();
          return store.stamps.current(tables);
        };
        const backlinks = await stampOf(['backlinks']);
        const projectLookup = await stampOf(['projects', 'sites']);
        const start = await byTable(client);
        await client.query('UPDATE api_tokens SET last_used_at = now()::text WHERE id = $1', [tokens.reader!.id]);
        const afterToken = await byTable(client);
        assert.equal(Number(afterToken.api_tokens), Number(start.api_tokens) + 1);
        assert.equal(afterToken.backlinks, start.backlinks, "a token's write is not the backlinks'");
        assert.equal(await stampOf(['backlinks']), backlinks, 'so the backlinks stamp holds');
        assert.equal(await stampOf(['projects', 'sites']), projectLookup);
        assert.notEqual(await stampOf(['api_tokens']), null, 'and the tokens have one');

        // A site deleted: its backlinks go by the foreign key's cascade, whose statement fires
        // the backlinks' trigger too (seen inside the transaction, then rolled back).
        await client.query('BEGIN');
        await client.query("DELETE FROM sites WHERE id = 'site_1'");
        const inside = await byTable(client);
        assert.equal(Number(inside.sites), Number(start.sites) + 1);
        assert.equal(Number(inside.backlinks), Number(start.backlinks) + 1, 'the cascade counted');
        await client.query('ROLLBACK');
        assert.equal(await stampOf(['projects', 'sites']), projectLookup, 'rolled back: nothing counted');
      } finally {
        await client.end();
      }
    });
  });
}
