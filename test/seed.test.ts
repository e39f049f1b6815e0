/**
 * The deterministic demo dataset (src/seed/demo.ts): same seed, same bytes; it imports; it holds
 * every state the API can show; its tokens work as documented.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../src/db/connection.js';
import { migrate } from '../src/db/migrate.js';
import { SCOPES } from '../src/domain/scopes.js';
import {
  BACKLINK_STATUSES,
  CONNECTION_PROVIDERS,
  CONNECTION_STATUSES,
  CONTACT_STATUSES,
  DRAFT_STATUSES,
  JOB_STATUSES,
  JOB_TYPES,
  LEAD_STAGES,
  LEAD_TIERS,
  LEAD_TYPES,
  PROSPECT_STATUSES,
  QUERY_STATUSES,
  SENDER_STATUSES,
  THREAD_CLASSIFICATIONS,
  THREAD_OUTCOMES,
  THREAD_STATUSES,
  VERIFICATION_STATUSES,
} from '../src/domain/enums.js';
import {
  DEMO_ACCOUNT_ID,
  DEMO_PROJECT_ID,
  DEMO_SITE_ID,
  DEMO_TOKEN,
  OTHER_ACCOUNT_ID,
  OTHER_PROJECT_ID,
  OTHER_SITE_ID,
  OTHER_TOKEN,
  buildDemoDocument,
  seedDemo,
} from '../src/seed/demo.js';
import { hashToken, isWellFormedToken } from '../src/domain/tokens.js';
import { sqlAll } from './helpers/sql.js';
import { type FreshStore, freshStore } from './helpers/stores.js';

const NOW = '2026-11-01T12:00:00.000Z';

describe('demo seed', () => {
  let dir: string;
  let store: Store;
  let summary: Record<string, number>;
  const all = <T = Record<string, any>>(sql: string, ...params: unknown[]) => sqlAll<T>(store, sql, ...params);
  const values = async (sql: string) => new Set((await all<{ v: string }>(sql)).map((r) => r.v));
  const demo = "project_id IN (SELECT id FROM projects WHERE account_id = 'acct_demo')";

  let fresh: FreshStore;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-seed-'));
    fresh = await freshStore(dir, 'empty');
    store = await openStore(fresh.location);
    await migrate(store);
    const seeded = await seedDemo(store, { nowIso: NOW });
    summary = seeded.summary.counts;
    assert.equal(seeded.token, DEMO_TOKEN);
  });
  after(async () => {
    await store.close();
    await fresh.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds the same document, byte for byte, on every call; another seed gives another', async () => {
    const first = JSON.stringify(buildDemoDocument());
    assert.equal(JSON.stringify(buildDemoDocument()), first);
    assert.notEqual(JSON.stringify(buildDemoDocument(7)), first);
    assert.equal(JSON.stringify(buildDemoDocument(7)), JSON.stringify(buildDemoDocument(7)));
  });

  it('builds exactly the published demo data: ids, tokens and counts are a fixture contract (checksum pinned)', async () => {
    // Other projects build their CI on these records: a deliberate change updates the pins below.
    const sha256 = createHash('sha256').update(JSON.stringify(buildDemoDocument())).digest('hex');
    assert.equal(sha256, 'f6d7e604d0ebe456518f9893c39b0ad5778828ff8686cba5f81643c42ba1e5a2');
    assert.deepEqual(summary, {
      accounts: 2,
      tokens: 2,
      projects: 4,
      sites: 9,
      keywords: 41,
      blockedDomains: 15,
      prospects: 173,
      contacts: 353,
      drafts: 46,
      threads: 32,
      emailConnections: 13,
      emailSenders: 13,
      discoveryJobs: 15,
      leads: 220,
      backlinks: 440,
      draftMessages: 46,
      threadMessages: 78,
      discoveryQueries: 47,
      backlinkChecks: 1558,
    });
  });

  it('imports every collection', async () => {
    const doc = buildDemoDocument();
    for (const [name, records] of Object.entries(doc)) assert.equal(summary[name], (records as unknown[]).length, name);
    assert.ok(summary.backlinkChecks! > summary.backlinks!);
    assert.ok(summary.threadMessages! > summary.threads!);
    assert.ok(summary.discoveryQueries! > 0);
  });

  it('has the two accounts, their plans and the well-known ids', async () => {
    const accounts = await all('SELECT id, plan, plan_expires_at FROM accounts ORDER BY id');
    assert.deepEqual(accounts, [
      { id: DEMO_ACCOUNT_ID, plan: 'pro', plan_expires_at: '2030-01-01T00:00:00.000Z' },
      { id: OTHER_ACCOUNT_ID, plan: 'free', plan_expires_at: null },
    ]);
    assert.equal((await all("SELECT id FROM projects WHERE account_id = 'acct_demo'")).length, 3);
    assert.equal((await all("SELECT id FROM projects WHERE account_id = 'acct_other'")).length, 1);
    assert.equal(
      (await all('SELECT id FROM sites WHERE id = ? AND project_id = ?', DEMO_SITE_ID, DEMO_PROJECT_ID)).length,
      1,
    );
    assert.equal(
      (await all('SELECT id FROM sites WHERE id = ? AND project_id = ?', OTHER_SITE_ID, OTHER_PROJECT_ID)).length,
      1,
    );
    for (const s of await all<{ n: number }>('SELECT count(*) AS n FROM sites GROUP BY project_id'))
      assert.ok(s.n >= 2 && s.n <= 3);
  });

  it('declares one all-scope token per account with its fixed raw value, stored as a hash', async () => {
    for (const [token, account] of [
      [DEMO_TOKEN, DEMO_ACCOUNT_ID],
      [OTHER_TOKEN, OTHER_ACCOUNT_ID],
    ] as const) {
      assert.ok(isWellFormedToken(token));
      const row = (
        await all(
          'SELECT account_id, scopes, expires_at, revoked_at FROM api_tokens WHERE token_hash = ?',
          hashToken(token),
        )
      )[0];
      assert.deepEqual(row, {
        account_id: account,
        scopes: JSON.stringify(SCOPES),
        expires_at: null,
        revoked_at: null,
      });
    }
  });

  it('holds the sizes the demo promises for acct_demo', async () => {
    const count = async (table: string) =>
      (await all<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${demo}`))[0]!.n;
    assert.equal(await count('backlinks'), 400);
    assert.equal(await count('prospects'), 153, '150 generated and 3 with magic domains');
    assert.equal(await count('leads'), 200);
    assert.ok((await count('drafts')) >= 30);
    assert.ok((await count('threads')) >= 20);
    assert.ok((await count('keywords')) > 0 && (await count('blocked_domains')) > 0);
    const checks = (await all<{ n: number }>('SELECT count(*) AS n FROM backlink_checks GROUP BY backlink_id')).map(
      (r) => r.n,
    );
    assert.ok(Math.min(...checks) >= 1 && Math.max(...checks) <= 6);
    const contacts = (await all<{ n: number }>('SELECT count(*) AS n FROM contacts GROUP BY prospect_id')).map(
      (r) => r.n,
    );
    assert.equal(contacts.length, 171, 'every generated prospect has contacts, and prs_demo_verify');
    assert.ok(Math.min(...contacts) >= 1 && Math.max(...contacts) <= 4);
  });

  it('shows every state: statuses, outcomes, classifications, tiers, stages, types and providers', async () => {
    const expect = async (sql: string, list: readonly string[], what: string) =>
      assert.deepEqual([...(await values(sql))].sort(), [...list].sort(), what);
    await expect(`SELECT DISTINCT status AS v FROM backlinks WHERE ${demo}`, BACKLINK_STATUSES, 'backlink status');
    await expect(`SELECT DISTINCT status AS v FROM prospects WHERE ${demo}`, PROSPECT_STATUSES, 'prospect status');
    await expect(`SELECT DISTINCT status AS v FROM contacts WHERE ${demo}`, CONTACT_STATUSES, 'contact status');
    await expect(
      `SELECT DISTINCT verification_status AS v FROM contacts WHERE ${demo}`,
      VERIFICATION_STATUSES,
      'verification status',
    );
    await expect(`SELECT DISTINCT status AS v FROM drafts WHERE ${demo}`, DRAFT_STATUSES, 'draft status');
    await expect(`SELECT DISTINCT status AS v FROM threads WHERE ${demo}`, THREAD_STATUSES, 'thread status');
    await expect(`SELECT DISTINCT outcome AS v FROM threads WHERE ${demo}`, THREAD_OUTCOMES, 'thread outcome');
    await expect(
      `SELECT DISTINCT classification AS v FROM threads WHERE ${demo}`,
      THREAD_CLASSIFICATIONS,
      'thread classification',
    );
    await expect(
      `SELECT DISTINCT provider AS v FROM email_connections WHERE ${demo}`,
      CONNECTION_PROVIDERS,
      'connection provider',
    );
    await expect(
      `SELECT DISTINCT status AS v FROM email_connections WHERE ${demo}`,
      CONNECTION_STATUSES,
      'connection status',
    );
    await expect(`SELECT DISTINCT status AS v FROM email_senders WHERE ${demo}`, SENDER_STATUSES, 'sender status');
    await expect(`SELECT DISTINCT type AS v FROM discovery_jobs WHERE ${demo}`, JOB_TYPES, 'job type');
    await expect(`SELECT DISTINCT status AS v FROM discovery_jobs WHERE ${demo}`, JOB_STATUSES, 'job status');
    await expect(
      `SELECT DISTINCT q.status AS v FROM discovery_queries q JOIN discovery_jobs j ON j.id = q.job_id WHERE j.${demo}`,
      QUERY_STATUSES,
      'query status',
    );
    await expect(`SELECT DISTINCT tier AS v FROM leads WHERE ${demo}`, LEAD_TIERS, 'lead tier');
    await expect(`SELECT DISTINCT stage AS v FROM leads WHERE ${demo}`, LEAD_STAGES, 'lead stage');
    await expect(`SELECT DISTINCT lead_type AS v FROM leads WHERE ${demo}`, LEAD_TYPES, 'lead type');
    assert.ok((await values(`SELECT DISTINCT platform AS v FROM leads WHERE ${demo}`)).size >= 3, 'several platforms');
    assert.deepEqual([...(await values('SELECT DISTINCT direction AS v FROM thread_messages'))].sort(), [
      'inbound',
      'outbound',
    ]);
  });

  it('has redacted leads with their text in the store, dismissed leads, and checks with errors', async () => {
    const redacted = await all(`SELECT title, body, evidence_quote FROM leads WHERE redacted = 1 AND ${demo}`);
    assert.ok(redacted.length > 0);
    for (const lead of redacted) assert.ok(lead.title && lead.body && lead.evidence_quote);
    assert.ok((await all(`SELECT id FROM leads WHERE dismissed = 1 AND ${demo}`)).length > 0);
    assert.ok((await all('SELECT id FROM backlink_checks WHERE has_error = 1')).length > 0);
    // Some backlinks whose newest check failed, some whose newest is fine.
    const newest = await all<{ has_error: number }>(
      'SELECT c.has_error FROM backlink_checks c WHERE c.checked_at = (SELECT max(checked_at) FROM backlink_checks WHERE backlink_id = c.backlink_id)',
    );
    assert.ok(newest.some((c) => c.has_error === 1) && newest.some((c) => c.has_error === 0));
  });

  it('gives every site with threads an active sender, and every draft and thread one prospect–contact chain', async () => {
    assert.deepEqual(
      await all(
        "SELECT id FROM threads t WHERE NOT EXISTS (SELECT 1 FROM email_senders s WHERE s.site_id = t.site_id AND s.status = 'active')",
      ),
      [],
    );
    for (const table of ['drafts', 'threads']) {
      assert.deepEqual(
        await all(
          `SELECT x.id FROM ${table} x JOIN contacts c ON c.id = x.contact_id WHERE c.prospect_id <> x.prospect_id OR c.site_id <> x.site_id`,
        ),
        [],
      );
    }
    assert.deepEqual(
      await all(
        'SELECT s.id FROM email_senders s JOIN email_connections c ON c.id = s.connection_id WHERE c.site_id <> s.site_id',
      ),
      [],
    );
  });

  it('uses reserved test domains only', async () => {
    const hosts = (
      await all<{ v: string }>(
        `SELECT domain AS v FROM sites UNION SELECT domain FROM prospects UNION SELECT url FROM prospects UNION SELECT source_url FROM backlinks
       UNION SELECT target_url FROM backlinks UNION SELECT permalink FROM leads UNION SELECT email FROM contacts UNION SELECT email FROM email_senders`,
      )
    ).map((r) => (r.v.includes('://') ? new URL(r.v).hostname : r.v.split('@').pop()!));
    for (const host of hosts) assert.match(host, /\.(test|example)$/, host);
  });

  it('seeds again without duplicating anything', async () => {
    const tables = [
      'backlinks',
      'backlink_checks',
      'contacts',
      'thread_messages',
      'draft_messages',
      'discovery_queries',
      'api_tokens',
      'leads',
    ];
    const count = async () => {
      const out: number[] = [];
      for (const t of tables) out.push((await all<{ n: number }>(`SELECT count(*) AS n FROM ${t}`))[0]!.n);
      return out;
    };
    const before = await count();
    await seedDemo(store, { nowIso: NOW });
    assert.deepEqual(await count(), before);
  });
});

describe('the demo password', () => {
  it('DEMO_PASSWORD_HASH is a hash of DEMO_PASSWORD, at the cost hashPassword uses now', async () => {
    const { DEMO_PASSWORD, DEMO_PASSWORD_HASH } = await import('../src/seed/demo.js');
    const { hashPassword, verifyPassword } = await import('../src/domain/passwords.js');
    assert.equal(await verifyPassword(DEMO_PASSWORD, DEMO_PASSWORD_HASH), true);
    assert.equal(await verifyPassword('another-password', DEMO_PASSWORD_HASH), false);
    const cost = (hash: string) => hash.split('$').slice(0, 2).join('$');
    assert.equal(cost(DEMO_PASSWORD_HASH), cost(await hashPassword(DEMO_PASSWORD)));
  });
});
