/**
 * Deep pages served from anchors (src/repos/page-anchors.ts) are exactly the pages a plain
 * OFFSET gives: at and around anchor boundaries, past the end, per filter, and after the data
 * changes, whether through this connection or another one (a second process importing); and
 * where no anchor can be kept (inside a transaction, as always on PostgreSQL), from one statement
 * that walks the offset instead of one per anchor.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { inTransaction, openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument } from '../../src/import/index.js';
import { listBacklinks, type BacklinkFilter } from '../../src/repos/backlinks.js';
import { ANCHOR_STRIDE } from '../../src/repos/page-anchors.js';
import { account, project, site } from '../helpers/fixture.js';
import { sqliteStore } from '../helpers/stores.js';

const ROWS = 2 * ANCHOR_STRIDE + 1500;
const STATUSES = ['live', 'lost', 'pending'] as const;
const DAY_MS = 86_400_000;

function backlink(i: number) {
  // Many rows share a createdAt, so the id tie-breaker decides the order across anchors too.
  const createdAt = new Date(Date.UTC(2026, 0, 1) + (Math.floor(i / 7) * DAY_MS) / 24).toISOString();
  return {
    id: `bl_${String(i).padStart(6, '0')}`,
    siteId: i % 3 === 0 ? 'site_2' : 'site_1',
    source: 'outreach',
    acquisitionOrigin: 'unknown',
    sourceUrl: `https://source${i}.example/page`,
    targetUrl: 'https://blog.example.test/',
    category: 'guest_post',
    status: STATUSES[i % STATUSES.length],
    createdAt,
    updatedAt: createdAt,
  };
}

const document = (from: number, to: number) => ({
  accounts: [account('acct_1', { email: 'owner@example.test', name: 'Owner', planExpiresAt: '2099-01-01T00:00:00Z' })],
  projects: [project('prj_1', 'acct_1', { name: 'Main' })],
  sites: ['site_1', 'site_2'].map((id) =>
    site(id, 'prj_1', { domain: `${id}.example.test`, url: `https://${id}.example.test/` }),
  ),
  backlinks: Array.from({ length: to - from }, (_, k) => backlink(from + k)),
});

describe('deep pages from anchors', () => {
  let dir: string;
  let store: Store;
  let other: Store;

  /** The page a plain LIMIT/OFFSET gives, the reference. */
  const plainPage = (filter: BacklinkFilter, limit: number, offset: number) => {
    const where = [
      filter.siteId ? 'site_id = @siteId' : 'project_id = @projectId',
      ...(filter.status ? ['status = @status'] : []),
    ].join(' AND ');
    return (
      sqliteStore(store)
        .sqlite.prepare(
          `SELECT id FROM backlinks WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset`,
        )
        .all({ ...filter, limit, offset }) as { id: string }[]
    ).map((r) => r.id);
  };
  const assertSame = async (filter: BacklinkFilter, limit: number, offset: number) => {
    const { items } = await listBacklinks(store.db, filter, limit, offset);
    assert.deepEqual(
      items.map((b) => (JSON.parse(b) as { id: string }).id),
      plainPage(filter, limit, offset),
      `${JSON.stringify(filter)} limit ${limit} offset ${offset}`,
    );
  };
  const offsets = [
    0,
    ANCHOR_STRIDE - 1,
    ANCHOR_STRIDE,
    ANCHOR_STRIDE + 1,
    2 * ANCHOR_STRIDE - 10,
    2 * ANCHOR_STRIDE,
    2 * ANCHOR_STRIDE + 1490,
    ROWS - 3,
    ROWS,
    ROWS + 5000,
  ];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-anchors-'));
    store = await openStore(join(dir, 'anchors.db'));
    await migrate(store);
    await importDocument(store, document(0, ROWS), { nowIso: '2026-06-01T00:00:00.000Z' });
    other = await openStore(join(dir, 'anchors.db'));
  });
  after(async () => {
    await other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the rows of a plain OFFSET at and around every anchor, and nothing past the end', async () => {
    for (const offset of offsets) await assertSame({ projectId: 'prj_1' }, 25, offset);
    for (const offset of offsets) await assertSame({ projectId: 'prj_1' }, 100, offset);
  });

  it('keeps the anchors of each filter apart', async () => {
    for (const filter of [
      { projectId: 'prj_1', status: 'live' as const },
      { projectId: 'prj_1', siteId: 'site_1' },
      { projectId: 'prj_1', siteId: 'site_1', status: 'lost' as const },
    ]) {
      for (const offset of [ANCHOR_STRIDE, ANCHOR_STRIDE + 7, 2 * ANCHOR_STRIDE + 3])
        await assertSame(filter, 25, offset);
    }
  });

  it('follows rows written through the same connection', async () => {
    await assertSame({ projectId: 'prj_1' }, 25, ANCHOR_STRIDE + 100);
    // Through the store, which counts its own writes (the raw handle is for `exclusive` only).
    await sql`DELETE FROM backlinks WHERE id IN ('bl_000005', 'bl_000006', 'bl_000007')`.execute(store.db);
    await sql`UPDATE backlinks SET created_at = '2030-01-01T00:00:00.000Z' WHERE id = 'bl_001000'`.execute(store.db);
    for (const offset of offsets) await assertSame({ projectId: 'prj_1' }, 25, offset);
  });

  it('follows rows another connection commits', async () => {
    await assertSame({ projectId: 'prj_1' }, 25, 2 * ANCHOR_STRIDE);
    await importDocument(other, document(ROWS, ROWS + 50), { nowIso: '2026-06-01T00:00:00.000Z' });
    sqliteStore(other).sqlite.prepare("DELETE FROM backlinks WHERE id = 'bl_000100'").run();
    for (const offset of offsets) await assertSame({ projectId: 'prj_1' }, 25, offset);
  });

  it('reads a deep page with one walk where nothing can be kept (in a transaction), the same rows', async () => {
    const statements: string[] = [];
    const stop = store.traceQueries((q) => statements.push(q.sql));
    try {
      for (const offset of offsets) {
        const filter = { projectId: 'prj_1' };
        statements.length = 0;
        const { items } = await inTransaction(store.db, (trx) => listBacklinks(trx, filter, 25, offset));
        assert.deepEqual(
          items.map((b) => (JSON.parse(b) as { id: string }).id),
          plainPage(filter, 25, offset),
          `offset ${offset}`,
        );
        const reads = statements.filter((sql) => /^select/i.test(sql.trim()));
        // The page, its total, and (deep, within the rows) the one key at the offset; past the end the walk of old.
        if (offset >= ANCHOR_STRIDE && offset < ROWS)
          assert.equal(reads.length, 3, `offset ${offset}: ${reads.join('; ')}`);
      }
    } finally {
      stop();
    }
  });
});
