/**
 * The import document (spec/import-format.md): the small fixture, replacement on re-import,
 * all-or-nothing refusals that name collection, index, id and field, and the token rules.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { openStore, type Store } from '../src/db/connection.js';
import { migrate } from '../src/db/migrate.js';
import { ImportError, importDocument, importFile } from '../src/import/index.js';
import { hashToken, tokenNameProblem } from '../src/domain/tokens.js';
import { listLeads } from '../src/repos/leads.js';
import { listProspects } from '../src/repos/prospects.js';
import { sqlAll, sqlGet } from './helpers/sql.js';
import { type FreshStore, freshStore } from './helpers/stores.js';

const SMALL = new URL('./fixtures/small.json', import.meta.url).pathname;
const NOW = '2026-11-01T12:00:00.000Z';
const TABLES = [
  'accounts',
  'api_tokens',
  'projects',
  'sites',
  'keywords',
  'blocked_domains',
  'prospects',
  'contacts',
  'drafts',
  'draft_messages',
  'threads',
  'thread_messages',
  'email_connections',
  'email_senders',
  'discovery_jobs',
  'discovery_queries',
  'leads',
  'backlinks',
  'backlink_checks',
];

type Doc = Record<string, Record<string, any>[]>;
const small = (): Doc => JSON.parse(readFileSync(SMALL, 'utf8')) as Doc;

describe('import', () => {
  let dir: string;
  let store: Store;
  let n = 0;

  const counts = async () => {
    const out: Record<string, number> = {};
    for (const t of TABLES)
      out[t] = Number(((await sqlGet(store, `SELECT count(*) AS n FROM ${t}`)) as { n: number }).n);
    return out;
  };
  const row = async (sql: string, ...params: unknown[]) => (await sqlGet(store, sql, ...params)) as Record<string, any>;

  /** Runs `fn`, expects an ImportError, and checks that the database did not change. */
  async function refused(fn: () => Promise<unknown>): Promise<ImportError> {
    const before = await counts();
    let caught: unknown;
    try {
      await fn();
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof ImportError, `expected an ImportError, got ${String(caught)}`);
    assert.deepEqual(await counts(), before, 'a refused import writes nothing');
    return caught;
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-import-'));
  });
  let fresh: FreshStore | undefined;
  const closeStore = async () => {
    await store?.close();
    await fresh?.dispose();
  };
  beforeEach(async () => {
    await closeStore();
    // This process's store (test/helpers/stores.ts): an empty, migrated database per test.
    fresh = await freshStore(mkdtempSync(join(dir, `import-${++n}-`)), 'empty');
    store = await openStore(fresh.location);
    await migrate(store);
  });
  after(async () => {
    await closeStore();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('the small fixture', () => {
    it('imports, with one count per collection and per child collection', async () => {
      const doc = small();
      const summary = await importFile(store, SMALL, { nowIso: NOW });
      for (const [name, records] of Object.entries(doc)) assert.equal(summary.counts[name], records.length, name);
      assert.equal(
        summary.counts.backlinkChecks,
        doc.backlinks!.reduce((k, b) => k + (b.checks?.length ?? 0), 0),
      );
      assert.equal(
        summary.counts.threadMessages,
        doc.threads!.reduce((k, t) => k + t.messages.length, 0),
      );
      assert.equal(
        summary.counts.discoveryQueries,
        doc.discoveryJobs!.reduce((k, j) => k + j.queries.length, 0),
      );
      assert.equal(summary.counts.draftMessages, doc.drafts!.length);
      const c = await counts();
      assert.equal(c.backlinks, doc.backlinks!.length);
      assert.equal(c.backlink_checks, summary.counts.backlinkChecks);
      assert.equal(c.leads, doc.leads!.length);
      assert.equal(c.api_tokens, 0, 'the fixture declares no tokens');
    });

    it('fills the parent columns from the parent chain', async () => {
      await importFile(store, SMALL, { nowIso: NOW });
      assert.deepEqual(
        { ...(await row("SELECT site_id, project_id FROM contacts WHERE id = 'ct_a1_1'")) },
        { site_id: 'site_a1', project_id: 'prj_a1' },
      );
      assert.deepEqual(
        {
          ...(await row(
            "SELECT site_id, project_id, prospect_id, contact_id, message_id FROM drafts WHERE id = 'drf_a1_1'",
          )),
        },
        {
          site_id: 'site_a1',
          project_id: 'prj_a1',
          prospect_id: 'prs_a1_1',
          contact_id: 'ct_a1_1',
          message_id: 'dmsg_a1_1',
        },
      );
      assert.equal((await row("SELECT project_id FROM backlinks WHERE id = 'bl_a3_1'")).project_id, 'prj_a2');
      assert.equal((await row("SELECT project_id FROM keywords WHERE id = 'kw_b1_1'")).project_id, 'prj_b1');
      assert.equal(
        (await row("SELECT provider_thread_id FROM threads WHERE id = 'thr_a1_1'")).provider_thread_id,
        'gmail-thread-a1-1',
      );
      assert.equal((await row("SELECT project_id FROM email_senders WHERE id = 'snd_a1_1'")).project_id, 'prj_a1');
    });

    it('stores date-times in UTC with milliseconds, booleans as 0/1, arrays and objects as JSON', async () => {
      await importFile(store, SMALL, { nowIso: NOW });
      // "2026-03-07T15:00:00+01:00" in the document.
      assert.equal(
        (await row("SELECT sent_at FROM thread_messages WHERE id = 'tm_a1_2'")).sent_at,
        '2026-03-07T14:00:00.000Z',
      );
      assert.equal(
        (await row("SELECT last_crawled_at FROM prospects WHERE id = 'prs_a1_1'")).last_crawled_at,
        '2026-03-03T09:30:00.000Z',
      );
      assert.equal((await row("SELECT has_error FROM backlink_checks WHERE id = 'chk_a1_4'")).has_error, 1);
      assert.deepEqual(
        JSON.parse((await row("SELECT observed_rel FROM backlink_checks WHERE id = 'chk_a1_2'")).observed_rel),
        ['nofollow'],
      );
      assert.deepEqual(
        JSON.parse((await row("SELECT personalization FROM draft_messages WHERE id = 'dmsg_a1_1'")).personalization),
        {
          firstName: 'Ana',
          article: 'The Best Hiking Boots of 2026',
        },
      );
      assert.equal(
        (await row("SELECT cc_emails FROM thread_messages WHERE id = 'tm_a1_2'")).cc_emails,
        '["ben@trailblog.example"]',
      );
    });

    it('gives left-out fields null, empty or their default, and counts thread messages when counts are left out', async () => {
      await importFile(store, SMALL, { nowIso: NOW });
      const prospect = await row("SELECT * FROM prospects WHERE id = 'prs_b1_1'");
      assert.equal(prospect.title, "A beginner's guide to gravel riding");
      assert.equal(prospect.description, null);
      assert.equal(prospect.relevance_score, null);
      assert.equal(prospect.contact_paths, '[]');
      assert.equal(prospect.match_reasons, '[]');
      assert.equal(
        (await row("SELECT personalization FROM draft_messages WHERE id = 'dmsg_a1_3'")).personalization,
        '{}',
      );
      assert.equal((await row("SELECT plan_expires_at FROM accounts WHERE id = 'acct_b'")).plan_expires_at, null);
      // thr_b1_1 gives no counts: they come from its messages.
      assert.deepEqual(
        {
          ...(await row(
            "SELECT inbound_count, outbound_count, last_inbound_at, last_outbound_at FROM threads WHERE id = 'thr_b1_1'",
          )),
        },
        {
          inbound_count: 1,
          outbound_count: 1,
          last_inbound_at: '2026-03-06T11:00:00.000Z',
          last_outbound_at: '2026-03-06T09:00:00.000Z',
        },
      );
      const message = await row("SELECT status, attempts, next_attempt_at FROM thread_messages WHERE id = 'tm_b1_1'");
      assert.deepEqual({ ...message }, { status: 'sent', attempts: 0, next_attempt_at: null });
    });

    it('keeps the text of a redacted lead in the store (the API hides it) and the dismissed flag', async () => {
      await importFile(store, SMALL, { nowIso: NOW });
      const lead = await row("SELECT title, body, evidence_quote, redacted FROM leads WHERE id = 'ld_a1_3'");
      assert.equal(lead.redacted, 1);
      assert.ok(lead.title && lead.body && lead.evidence_quote);
      assert.equal((await row("SELECT dismissed FROM leads WHERE id = 'ld_a1_4'")).dismissed, 1);
    });

    it('defaults createdAt/updatedAt to each other, then to the import time', async () => {
      await importDocument(
        store,
        {
          accounts: [{ id: 'acct_x', email: 'x@x.test', name: 'X', plan: 'free' }],
          projects: [{ id: 'prj_x', accountId: 'acct_x', name: 'X', updatedAt: '2026-05-01T00:00:00Z' }],
        },
        { nowIso: NOW },
      );
      assert.deepEqual(
        { ...(await row("SELECT created_at, updated_at FROM accounts WHERE id = 'acct_x'")) },
        { created_at: NOW, updated_at: NOW },
      );
      const project = await row("SELECT created_at, updated_at FROM projects WHERE id = 'prj_x'");
      assert.deepEqual(
        { ...project },
        { created_at: '2026-05-01T00:00:00.000Z', updated_at: '2026-05-01T00:00:00.000Z' },
      );
    });

    it('takes parents from the database when the document does not have them', async () => {
      await importFile(store, SMALL, { nowIso: NOW });
      const summary = await importDocument(store, {
        backlinks: [
          {
            id: 'bl_new',
            siteId: 'site_a2',
            source: 'outreach',
            acquisitionOrigin: 'unknown',
            sourceUrl: 'https://x.example/',
            targetUrl: 'https://shop.acme.test/',
            status: 'live',
          },
        ],
        contacts: [
          {
            id: 'ct_new',
            prospectId: 'prs_a1_2',
            email: 'new@campingtips.example',
            status: 'active',
            verificationStatus: 'unverified',
          },
        ],
        drafts: [{ id: 'drf_new', siteId: 'site_a1', prospectId: 'prs_a1_2', contactId: 'ct_new', status: 'draft' }],
      });
      assert.deepEqual(summary.counts, { contacts: 1, drafts: 1, backlinks: 1 });
      assert.equal((await row("SELECT project_id FROM backlinks WHERE id = 'bl_new'")).project_id, 'prj_a1');
      assert.equal((await row("SELECT message_id FROM drafts WHERE id = 'drf_new'")).message_id, null);
    });
  });

  describe('re-import', () => {
    it('is idempotent: the same document twice leaves the same rows', async () => {
      await importFile(store, SMALL, { nowIso: NOW });
      const once = await counts();
      const dump = async () => await sqlAll(store, 'SELECT * FROM backlink_checks ORDER BY id');
      const checks = await dump();
      await importFile(store, SMALL, { nowIso: NOW });
      assert.deepEqual(await counts(), once);
      assert.deepEqual(await dump(), checks);
      // The search index follows the replaced rows: a search finds each lead once.
      const handle = small().leads![0]!.authorHandle as string;
      const found = await listLeads(store.db, { projectId: 'prj_a1', view: 'all', search: handle }, 100, 0);
      assert.equal(new Set(found.items.map((l) => l.id)).size, found.items.length);
      assert.ok(found.total >= 1 && found.total === found.items.length);
    });

    it('replaces a record and its checks, messages and queries with the document’s', async () => {
      await importFile(store, SMALL, { nowIso: NOW });
      const doc = small();
      const bl = doc.backlinks!.find((b) => b.id === 'bl_a1_1')!;
      bl.status = 'lost';
      bl.checks = [bl.checks[0]];
      const thread = doc.threads!.find((t) => t.id === 'thr_a1_1')!;
      thread.messages = thread.messages.slice(0, 1);
      const job = doc.discoveryJobs!.find((j) => j.id === 'job_a1_1')!;
      job.queries = [];
      const draft = doc.drafts!.find((d) => d.id === 'drf_a1_1')!;
      draft.message = { ...draft.message, id: 'dmsg_a1_1_v2', subject: 'A new subject' };
      await importDocument(store, { backlinks: [bl], threads: [thread], discoveryJobs: [job], drafts: [draft] });
      assert.equal((await row("SELECT status FROM backlinks WHERE id = 'bl_a1_1'")).status, 'lost');
      assert.deepEqual(await sqlAll(store, "SELECT id FROM backlink_checks WHERE backlink_id = 'bl_a1_1'"), [
        { id: 'chk_a1_1' },
      ]);
      assert.deepEqual(await sqlAll(store, "SELECT id FROM thread_messages WHERE thread_id = 'thr_a1_1'"), [
        { id: 'tm_a1_1' },
      ]);
      assert.equal((await row("SELECT count(*) AS n FROM discovery_queries WHERE job_id = 'job_a1_1'")).n, 0);
      assert.deepEqual(await sqlAll(store, "SELECT id, subject FROM draft_messages WHERE draft_id = 'drf_a1_1'"), [
        { id: 'dmsg_a1_1_v2', subject: 'A new subject' },
      ]);
      assert.equal((await row("SELECT message_id FROM drafts WHERE id = 'drf_a1_1'")).message_id, 'dmsg_a1_1_v2');
    });

    it('replaces a parent in place, without deleting the records below it', async () => {
      await importFile(store, SMALL, { nowIso: NOW });
      const before = await counts();
      const doc = small();
      await importDocument(store, {
        accounts: doc.accounts!.map((a) => ({ ...a, name: `${a.name} (renamed)` })),
        projects: doc.projects,
        sites: doc.sites!.map((s) => ({ ...s, name: `${s.name} (renamed)` })),
        prospects: doc.prospects,
      });
      assert.deepEqual(await counts(), before);
      assert.equal((await row("SELECT name FROM sites WHERE id = 'site_a1'")).name, 'Acme Blog (renamed)');
      // The prospect search index follows the replaced rows.
      const hits = await listProspects(store.db, { projectId: 'prj_a1', search: 'hiking boots' }, 25, 0);
      assert.equal(hits.total, 1);
    });
  });

  describe('refusals', () => {
    beforeEach(async () => {
      await importFile(store, SMALL, { nowIso: NOW });
    });

    /** The small fixture plus a new account first, so a refusal must also undo earlier writes. */
    const withBad = (mutate: (doc: Doc) => void): Doc => {
      const doc = small();
      doc.accounts!.push({ id: 'acct_new', email: 'new@new.test', name: 'New', plan: 'free' });
      mutate(doc);
      return doc;
    };

    it('a bad enum value deep in the document', async () => {
      const doc = withBad((d) => {
        d.discoveryJobs![0]!.queries[2].status = 'exploded';
      });
      const error = await refused(() => importDocument(store, doc));
      assert.equal(error.collection, 'discoveryJobs');
      assert.equal(error.index, 0);
      assert.equal(error.id, 'job_a1_1');
      assert.equal(error.field, 'queries[2].status');
      assert.match(
        error.message,
        /^discoveryJobs\[0\] \(id "job_a1_1"\): queries\[2\]\.status: Invalid option: expected one of "pending"\|"running"\|"completed"\|"failed"$/,
      );
      assert.equal((await row("SELECT count(*) AS n FROM accounts WHERE id = 'acct_new'")).n, 0);
    });

    it('a bad backlink status, named as the contract example', async () => {
      const doc = withBad((d) => {
        d.backlinks![3]!.status = 'gone';
      });
      const error = await refused(() => importDocument(store, doc));
      assert.match(
        error.message,
        /^backlinks\[3\] \(id "bl_a1_4"\): status: Invalid option: expected one of "pending"\|"live"/,
      );
    });

    it('a missing parent', async () => {
      const doc = withBad((d) => {
        d.leads![2]!.siteId = 'site_nope';
      });
      const error = await refused(() => importDocument(store, doc));
      assert.deepEqual([error.collection, error.index, error.id, error.field], ['leads', 2, 'ld_a1_3', 'siteId']);
      assert.match(error.message, /no site with id "site_nope"/);
    });

    it('a cross-account chain: a draft of site_a1 for a prospect of site_b1', async () => {
      const doc = withBad((d) => {
        Object.assign(d.drafts![1]!, { prospectId: 'prs_b1_1', contactId: 'ct_b1_1' });
      });
      const error = await refused(() => importDocument(store, doc));
      assert.deepEqual([error.collection, error.index, error.id, error.field], ['drafts', 1, 'drf_a1_2', 'prospectId']);
      assert.match(error.message, /prospect "prs_b1_1" belongs to site "site_b1", not to site "site_a1"/);
    });

    it('a thread whose contact is of another prospect', async () => {
      const doc = withBad((d) => {
        d.threads![0]!.contactId = 'ct_a1_3';
      });
      const error = await refused(() => importDocument(store, doc));
      assert.deepEqual([error.collection, error.index, error.field], ['threads', 0, 'contactId']);
    });

    it("a sender on another site's connection", async () => {
      const doc = withBad((d) => {
        d.emailSenders![2]!.connectionId = 'conn_a1_1';
      });
      const error = await refused(() => importDocument(store, doc));
      assert.deepEqual(
        [error.collection, error.index, error.id, error.field],
        ['emailSenders', 2, 'snd_b1_1', 'connectionId'],
      );
    });

    it('a bad date-time, and one without an offset', async () => {
      for (const value of ['2026-02-30T10:00:00Z', 'yesterday', '2026-03-01T10:00:00']) {
        const doc = withBad((d) => {
          d.backlinks![0]!.checks[1].checkedAt = value;
        });
        const error = await refused(() => importDocument(store, doc));
        assert.deepEqual(
          [error.collection, error.index, error.id, error.field],
          ['backlinks', 0, 'bl_a1_1', 'checks[1].checkedAt'],
          value,
        );
        assert.match(error.message, /ISO 8601/);
      }
    });

    it('a bad email, in a field and in a list', async () => {
      let error = await refused(() =>
        importDocument(
          store,
          withBad((d) => void (d.contacts![1]!.email = 'not-an-email')),
        ),
      );
      assert.deepEqual([error.collection, error.index, error.id, error.field], ['contacts', 1, 'ct_a1_2', 'email']);
      error = await refused(() =>
        importDocument(
          store,
          withBad((d) => void (d.threads![0]!.messages[1].ccEmails = ['ok@x.test', 'nope'])),
        ),
      );
      assert.equal(error.field, 'messages[1].ccEmails[1]');
      assert.match(error.message, /must be an email address/);
    });

    it('a URL that is not http(s)', async () => {
      const error = await refused(() =>
        importDocument(
          store,
          withBad((d) => void (d.leads![0]!.permalink = 'javascript:alert(1)')),
        ),
      );
      assert.deepEqual([error.collection, error.field], ['leads', 'permalink']);
    });

    it('a missing required field, and a record that is not an object', async () => {
      let error = await refused(() =>
        importDocument(
          store,
          withBad((d) => void delete d.backlinks![1]!.sourceUrl),
        ),
      );
      assert.equal(error.message, 'backlinks[1] (id "bl_a1_2"): sourceUrl: is required');
      error = await refused(() =>
        importDocument(
          store,
          withBad((d) => void d.keywords!.push('kw' as never)),
        ),
      );
      assert.deepEqual([error.collection, error.index, error.id, error.field], ['keywords', 3, null, null]);
    });

    it('an unknown field, named with the known field it resembles (issue #21)', async () => {
      // A typo that used to drop a value in silence: a pro plan that never expires.
      let error = await refused(() =>
        importDocument(
          store,
          withBad((d) => {
            const account = d.accounts!.at(-1)!;
            account.plan = 'pro';
            account.planExpireAt = '2027-01-01T00:00:00Z';
          }),
        ),
      );
      assert.deepEqual([error.collection, error.id, error.field], ['accounts', 'acct_new', 'planExpireAt']);
      assert.match(
        error.message,
        /^accounts\[\d+\] \(id "acct_new"\): planExpireAt: unknown field \(did you mean "planExpiresAt"\?\)$/,
      );
      // Reported as the typo it is, not as the field it left missing.
      error = await refused(() =>
        importDocument(
          store,
          withBad((d) => {
            const lead = d.leads![1]!;
            lead.siteid = lead.siteId;
            delete lead.siteId;
          }),
        ),
      );
      assert.match(error.message, /^leads\[1\] \(id "[^"]+"\): siteid: unknown field \(did you mean "siteId"\?\)$/);
      // Deep in a record, and with nothing it resembles.
      error = await refused(() =>
        importDocument(
          store,
          withBad((d) => {
            const backlink = d.backlinks!.find((b) => b.checks?.length)!;
            backlink.checks[0].chekedAt = backlink.checks[0].checkedAt;
          }),
        ),
      );
      assert.match(error.message, /: checks\[0\]\.chekedAt: unknown field \(did you mean "checkedAt"\?\)$/);
      error = await refused(() =>
        importDocument(
          store,
          withBad((d) => void (d.sites![0]!.colour = 'red')),
        ),
      );
      assert.match(error.message, /^sites\[0\] \(id "[^"]+"\): colour: unknown field$/);
      assert.equal((await row("SELECT count(*) AS n FROM accounts WHERE id = 'acct_new'")).n, 0);
    });

    it('takes an API response back: the objects built from ids are accepted and ignored', async () => {
      const tables = ['projects', 'prospects', 'contacts', 'drafts', 'threads'];
      const dump = async () => {
        const out: Record<string, unknown[]> = {};
        for (const table of tables) out[table] = await sqlAll(store, `SELECT * FROM ${table} ORDER BY id`);
        return out;
      };
      await importDocument(store, small());
      const plain = await dump();

      const doc = small();
      const draft = doc.drafts![0]!;
      const thread = doc.threads![0]!;
      draft.prospect = { id: draft.prospectId, domain: 'ignored.example' };
      draft.contact = { id: draft.contactId, email: 'ignored@example.com' };
      thread.contact = { id: 'x' };
      thread.prospect = { id: 'y' };
      doc.projects![0]!.siteCount = 99;
      await importDocument(store, doc);

      // Ignored: not one row differs from the same document without them.
      assert.deepEqual(await dump(), plain);
      const { domain } = doc.prospects!.find((p) => p.id === draft.prospectId)!;
      assert.equal((await row(`SELECT domain FROM prospects WHERE id = '${draft.prospectId}'`)).domain, domain);
      assert.equal(Number((await row("SELECT count(*) AS n FROM prospects WHERE domain = 'ignored.example'")).n), 0);
      assert.equal(Number((await row("SELECT count(*) AS n FROM contacts WHERE email = 'ignored@example.com'")).n), 0);
      assert.deepEqual(
        { ...(await row(`SELECT contact_id, prospect_id FROM threads WHERE id = '${thread.id}'`)) },
        { contact_id: thread.contactId, prospect_id: thread.prospectId },
      );
      const sites = doc.sites!.filter((site) => site.projectId === doc.projects![0]!.id).length;
      assert.notEqual(sites, 99);
      const projectId = doc.projects![0]!.id;
      assert.equal(Number((await row(`SELECT count(*) AS n FROM sites WHERE project_id = '${projectId}'`)).n), sites);
    });

    it('an unknown top-level key, a collection that is not an array, a document that is not an object', async () => {
      let error = await refused(() => importDocument(store, { ...small(), backlink: [] }));
      assert.match(error.message, /unknown collection "backlink"; known: accounts, tokens/);
      error = await refused(() => importDocument(store, { leads: {} }));
      assert.equal(error.message, 'leads: must be an array of records');
      await refused(() => importDocument(store, []));
      await refused(() => importDocument(store, null));
    });

    it('an unreadable or non-JSON file', async () => {
      const missing = await refused(() => importFile(store, join(dir, 'missing.json')));
      assert.match(missing.message, /cannot read .*missing\.json/);
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, '{ "accounts": [');
      assert.match((await refused(() => importFile(store, bad))).message, /bad\.json is not valid JSON/);
    });
  });

  describe('tokens', () => {
    const token = (i: number, extra: Record<string, unknown> = {}) => ({
      accountId: 'acct_a',
      name: `fixture token ${i}`,
      scopes: ['backlinks:read'],
      token: `fixture-token-for-ci-${String(i).padStart(12, '0')}`,
      ...extra,
    });

    beforeEach(async () => {
      await importFile(store, SMALL, { nowIso: NOW });
    });

    it('stores only the hash of a declared token, and a re-import does not duplicate it', async () => {
      const doc = { tokens: [token(1, { expiresAt: '2027-01-01T00:00:00+01:00' })] };
      await importDocument(store, doc, { nowIso: NOW });
      await importDocument(store, doc, { nowIso: NOW });
      const rows = (await sqlAll(store, 'SELECT * FROM api_tokens')) as Record<string, unknown>[];
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.token_hash, hashToken(token(1).token));
      assert.equal(rows[0]!.expires_at, '2026-12-31T23:00:00.000Z');
      assert.equal(rows[0]!.created_at, NOW);
      assert.ok(!JSON.stringify(rows).includes(token(1).token), 'the raw token is not stored');
    });

    it('refuses the 11th active token of an account, and counts neither revoked nor expired ones', async () => {
      const ten = Array.from({ length: 10 }, (_, i) => token(i));
      const inactive = [
        token(20, { revokedAt: '2026-10-01T00:00:00Z' }),
        token(21, { expiresAt: '2026-10-01T00:00:00Z' }),
      ];
      await importDocument(store, { tokens: [...ten, ...inactive] }, { nowIso: NOW });
      const error = await refused(() =>
        importDocument(
          store,
          { accounts: [{ id: 'acct_new', email: 'n@n.test', name: 'N', plan: 'free' }], tokens: [token(10)] },
          { nowIso: NOW },
        ),
      );
      assert.equal(error.collection, 'tokens');
      assert.equal(error.index, 0);
      assert.match(error.message, /^tokens\[0\]: account acct_a already has 10 active tokens/);
    });

    it('refuses the 11th active token within one document', async () => {
      const error = await refused(() =>
        importDocument(store, { tokens: Array.from({ length: 11 }, (_, i) => token(i)) }, { nowIso: NOW }),
      );
      assert.equal(error.index, 10);
    });

    it('refuses a short token, an unknown scope and an unknown account', async () => {
      let error = await refused(() => importDocument(store, { tokens: [token(1, { token: 'short' })] }));
      assert.deepEqual([error.field, error.message], ['token', 'tokens[0]: token: must be at least 32 characters']);
      error = await refused(() => importDocument(store, { tokens: [token(1, { scopes: ['everything'] })] }));
      assert.equal(error.field, 'scopes[0]');
      error = await refused(() => importDocument(store, { tokens: [token(1, { accountId: 'acct_nobody' })] }));
      assert.equal(error.field, 'accountId');
    });

    it('refuses a name the API access page and `tokens create` would refuse, naming the record and the rule', async () => {
      for (const name of ['ci\u009b31m', 'ci\u009d0;x\u0007', 'deploy\u202egnp.exe', 'x'.repeat(101), ' '])
        for (const extra of [{ name }, { name, id: 'tok_named' }]) {
          const error = await refused(() => importDocument(store, { tokens: [token(1), token(2, extra)] }));
          assert.deepEqual([error.collection, error.index, error.field], ['tokens', 1, 'name'], JSON.stringify(name));
          assert.equal(
            error.message,
            `tokens[1]${'id' in extra ? ' (id "tok_named")' : ''}: name: ${tokenNameProblem(name)}`,
          );
        }
      assert.equal((await sqlAll(store, 'SELECT id FROM api_tokens')).length, 0, 'all or nothing: no token written');
    });
  });
});
