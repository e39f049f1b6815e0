/**
 * Deep pages of a list are exactly the pages a plain OFFSET gives, on the store of this process
 * (test/helpers/stores.ts: SQLite, and PostgreSQL in the unit suite's second pass). SQLite seeks
 * from anchors it keeps until the data changes; PostgreSQL keeps none (decisions.md §16) and reads
 * the page's first key with one walk of the offset (src/repos/page-anchors.ts). Both are checked
 * at and around the anchor boundaries, past the end, with a filter, and after rows change.
 * test/store/page-anchors.test.ts has SQLite's anchors in detail.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../../src/db/connection.js';
import { importDocument } from '../../src/import/index.js';
import { type BacklinkFilter, listBacklinks } from '../../src/repos/backlinks.js';
import { ANCHOR_STRIDE } from '../../src/repos/page-anchors.js';
import { account, project, site } from '../helpers/fixture.js';
import { type FreshStore, freshStore } from '../helpers/stores.js';

const ROWS = 2 * ANCHOR_STRIDE + 700;
const STATUSES = ['live', 'lost', 'pending'] as const;

const backlink = (i: number) => {
  // Groups of 7 rows share a createdAt, so the id tie-breaker decides the order across anchors too.
  const createdAt = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 7) * 3_600_000).toISOString();
  return {
    id: `bl_${String(i).padStart(6, '0')}`,
    siteId: 'site_1',
    source: 'outreach',
    acquisitionOrigin: 'unknown',
    sourceUrl: `https://source${i}.example/page`,
    targetUrl: 'https://blog.example.test/',
    category: 'guest_post',
    status: STATUSES[i % STATUSES.length],
    createdAt,
    updatedAt: createdAt,
  };
};

describe('deep pages on the store of this process', () => {
  let dir: string;
  let fresh: FreshStore;
  let store: Store;

  /** The ids a plain LIMIT/OFFSET gives, the reference. */
  const plainPage = async (filter: BacklinkFilter, limit: number, offset: number) => {
    let query = store.db.selectFrom('backlinks').select('id').where('project_id', '=', filter.projectId);
    if (filter.status) query = query.where('status', '=', filter.status);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
    return rows.map((r) => r.id);
  };
  const assertSame = async (filter: BacklinkFilter, offset: number) => {
    const { items } = await listBacklinks(store.db, filter, 25, offset);
    assert.deepEqual(
      items.map((b) => (JSON.parse(b) as { id: string }).id),
      await plainPage(filter, 25, offset),
      `${JSON.stringify(filter)} offset ${offset}`,
    );
  };
  const offsets = [
    ANCHOR_STRIDE - 1,
    ANCHOR_STRIDE,
    ANCHOR_STRIDE + 3,
    2 * ANCHOR_STRIDE - 10,
    2 * ANCHOR_STRIDE,
    2 * ANCHOR_STRIDE + 690,
    ROWS - 3,
    ROWS,
    ROWS + 5000,
  ];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-deep-pages-'));
    fresh = await freshStore(dir, 'deep-pages', async (s) => {
      await importDocument(
        s,
        {
          accounts: [account('acct_1', { email: 'owner@example.test', name: 'Owner' })],
          projects: [project('prj_1', 'acct_1', { name: 'Main' })],
          sites: [site('site_1', 'prj_1', { domain: 'site_1.example.test', url: 'https://site_1.example.test/' })],
          backlinks: Array.from({ length: ROWS }, (_, i) => backlink(i)),
        },
        { nowIso: '2026-06-01T00:00:00.000Z' },
      );
    });
    store = await openStore(fresh.location);
  });
  after(async () => {
    await store.close();
    await fresh.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the rows of a plain OFFSET at and around every anchor, with a filter, and nothing past the end', async () => {
    for (const offset of offsets) await assertSame({ projectId: 'prj_1' }, offset);
    for (const offset of [ANCHOR_STRIDE, ANCHOR_STRIDE + 11])
      await assertSame({ projectId: 'prj_1', status: 'lost' }, offset);
  });

  it('follows rows deleted and moved since the last page', async () => {
    await assertSame({ projectId: 'prj_1' }, 2 * ANCHOR_STRIDE);
    await store.db.deleteFrom('backlinks').where('id', 'in', ['bl_000005', 'bl_000006', 'bl_000007']).execute();
    await store.db
      .updateTable('backlinks')
      .set({ created_at: '2030-01-01T00:00:00.000Z' })
      .where('id', '=', 'bl_001000')
      .execute();
    for (const offset of offsets) await assertSame({ projectId: 'prj_1' }, offset);
  });
});
