/**
 * Rows as JSON text (src/db/json-rows.ts): on both stores, the items of a backlinks page, written
 * by the store, are byte for byte what `JSON.stringify(toBacklink(row))` gives for the same rows:
 * every control character, quotes and backslashes, `/`, U+2028 and U+2029, DEL, accents, CJK and
 * an emoji in a text column, and SQL NULL, in the members' order.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument } from '../../src/import/index.js';
import { listBacklinks, toBacklink } from '../../src/repos/backlinks.js';
import { account, project, site } from '../helpers/fixture.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';

/** Every character JSON escapes or that a store might write differently. */
const CONTROL = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
const AWKWARD = [
  `${CONTROL}\u007f`,
  'a "quoted" \\ back\\slash / slash',
  'line\u2028para\u2029end',
  'café, 日本語, 🔗 emoji',
  '',
];

const document = {
  accounts: [account('acct_1', { email: 'owner@example.test', name: 'Owner', planExpiresAt: '2099-01-01T00:00:00Z' })],
  projects: [project('prj_1', 'acct_1', { name: 'Main' })],
  sites: [site('site_1', 'prj_1', { domain: 'site.example.test', url: 'https://site.example.test/' })],
};

/** Backlinks whose text columns hold `AWKWARD`, and one with every nullable column NULL. */
async function load(store: Store): Promise<void> {
  await migrate(store);
  await importDocument(store, document, { nowIso: '2026-11-01T00:00:00.000Z' });
  const rows = AWKWARD.map((text, i) => ({
    id: `bl_${i}`,
    site_id: 'site_1',
    project_id: 'prj_1',
    source: text,
    acquisition_origin: 'unknown',
    source_url: `https://source${i}.example/${text}`,
    target_url: 'https://site.example.test/',
    category: text,
    status: 'live' as const,
    observed_anchor: text,
    last_checked_at: '2026-11-02T00:00:00.000Z',
    created_at: `2026-11-01T00:00:0${i}.000Z`,
    updated_at: `2026-11-01T00:00:0${i}.000Z`,
  }));
  rows.push({
    ...rows[0]!,
    id: 'bl_nulls',
    category: null as unknown as string,
    observed_anchor: null as unknown as string,
    last_checked_at: null as unknown as string,
  });
  await store.db.insertInto('backlinks').values(rows).execute();
}

/** The page as the store writes it against `toBacklink` of the same rows, in the page's order. */
async function assertSameBytes(store: Store): Promise<void> {
  const { items, total } = await listBacklinks(store.db, { projectId: 'prj_1' }, 25, 0);
  assert.equal(total, AWKWARD.length + 1);
  const rows = await store.db
    .selectFrom('backlinks')
    .selectAll()
    .where('project_id', '=', 'prj_1')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  assert.deepEqual(
    items,
    rows.map((row) => JSON.stringify(toBacklink(row))),
  );
  // The awkward text came back whole (not only as the same bytes as a wrong mapping would give).
  const anchors = items.map((item) => (JSON.parse(item) as { observedAnchor: string | null }).observedAnchor);
  for (const text of AWKWARD) assert.ok(anchors.includes(text), JSON.stringify(text));
  assert.ok(anchors.includes(null));
}

describe('rows as JSON text, SQLite', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-json-rows-'));
    store = await openStore(join(dir, 'test.db'));
    await load(store);
  });
  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the bytes JSON.stringify gives for the same record', () => assertSameBytes(store));
});

describe('rows as JSON text, PostgreSQL', async () => {
  const skip = await serviceSkip('postgres');
  let database: TestDatabase;
  let store: Store;
  before(async () => {
    if (skip) return;
    database = await createTestDatabase('json_rows');
    store = await openStore(database.url);
    await load(store);
  });
  after(async () => {
    await store?.close();
    await database?.drop();
  });

  it('gives the bytes JSON.stringify gives for the same record', { skip }, () => assertSameBytes(store));
});
