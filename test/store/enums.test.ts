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
import * as enums from '../../src/domain/enums.js';

/** `table.column` → the enum list its CHECK must hold. */
const EXPECTED: Record<string, readonly string[]> = {
  'accounts.plan': enums.PLANS,
  'prospects.status': enums.PROSPECT_STATUSES,
  'contacts.status': enums.CONTACT_STATUSES,
  'contacts.verification_status': enums.VERIFICATION_STATUSES,
  'drafts.status': enums.DRAFT_STATUSES,
  'threads.status': enums.THREAD_STATUSES,
  'threads.outcome': enums.THREAD_OUTCOMES,
  'threads.classification': enums.THREAD_CLASSIFICATIONS,
  'thread_messages.direction': enums.MESSAGE_DIRECTIONS,
  'thread_messages.status': enums.MESSAGE_STATUSES,
  'email_connections.provider': enums.CONNECTION_PROVIDERS,
  'email_connections.status': enums.CONNECTION_STATUSES,
  'email_senders.status': enums.SENDER_STATUSES,
  'email_senders.health_status': enums.HEALTH_STATUSES,
  'email_senders.warmup_status': enums.WARMUP_STATUSES,
  'discovery_jobs.type': enums.JOB_TYPES,
  'discovery_jobs.status': enums.JOB_STATUSES,
  'discovery_queries.status': enums.QUERY_STATUSES,
  'leads.tier': enums.LEAD_TIERS,
  'leads.lead_type': enums.LEAD_TYPES,
  'leads.stage': enums.LEAD_STAGES,
  'backlinks.status': enums.BACKLINK_STATUSES,
  'idempotency_keys.state': enums.IDEMPOTENCY_STATES,
};

/** Every `column IN ('a', 'b', …)` of every table's CREATE statement, as `table.column` → values. */
function checkLists(store: Store): Map<string, string[]> {
  const tables = store.sqlite
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL")
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
    migrate(store);
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
