/**
 * The shared access suite: for every operation of the served OpenAPI document, driven by its
 * `x-required-scope` extension — 401 without a token, 403 without the scope, not 403 with only
 * that scope, 404 for another account's ids, and identical payloads in both path forms.
 * A new route is covered by existing, with nothing to add here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_SCOPES, startTestServer, type TestServer } from '../helpers/harness.js';
import { sqlGet, sqlRun } from '../helpers/sql.js';

interface Operation {
  method: string;
  template: string;
  scope: string | undefined;
}

/** The first record under site_a1 / acct_a for each path parameter of the small fixture. */
async function pathIds(t: TestServer): Promise<Record<string, string | undefined>> {
  const one = async (sql: string) => ((await sqlGet(t.store, sql)) as { id: string } | undefined)?.id;
  return {
    projectId: 'prj_a1',
    workspaceId: 'prj_a1',
    siteId: 'site_a1',
    backlinkId: await one("SELECT id FROM backlinks WHERE site_id = 'site_a1' ORDER BY id LIMIT 1"),
    prospectId: await one("SELECT id FROM prospects WHERE site_id = 'site_a1' ORDER BY id LIMIT 1"),
    contactId: await one("SELECT id FROM contacts WHERE site_id = 'site_a1' ORDER BY id LIMIT 1"),
    leadId: await one("SELECT id FROM leads WHERE site_id = 'site_a1' ORDER BY id LIMIT 1"),
    draftId: await one("SELECT id FROM drafts WHERE site_id = 'site_a1' ORDER BY id LIMIT 1"),
    threadId: await one("SELECT id FROM threads WHERE site_id = 'site_a1' ORDER BY id LIMIT 1"),
    jobId: await one("SELECT id FROM discovery_jobs WHERE site_id = 'site_a1' ORDER BY id LIMIT 1"),
  };
}

const fill = (template: string, ids: Record<string, string | undefined>) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const id = ids[name];
    assert.ok(id, `the small fixture has no record for {${name}}`);
    return id;
  });

describe('access rules of every operation', () => {
  let t: TestServer;
  let operations: Operation[];
  let ids: Record<string, string | undefined>;
  before(async () => {
    t = await startTestServer({ fixture: 'small', config: { 'limits.requestsPerMinute': 0 } });
    ids = await pathIds(t);
    const doc = t.server.app.openapi as { paths: Record<string, Record<string, { 'x-required-scope'?: string }>> };
    operations = Object.entries(doc.paths).flatMap(([template, item]) =>
      Object.entries(item).map(([method, op]) => ({
        method: method.toUpperCase(),
        template,
        scope: op['x-required-scope'],
      })),
    );
  });
  after(() => t.close());

  it('documents a required scope for every operation but GET /me', async () => {
    assert.ok(operations.length > 10);
    for (const op of operations) {
      if (op.template === '/me') assert.equal(op.scope, undefined);
      else
        assert.ok(
          op.scope && (ALL_SCOPES as readonly string[]).includes(op.scope),
          `${op.method} ${op.template}: x-required-scope`,
        );
    }
  });

  it('answers 401 without a token', async () => {
    for (const op of operations) {
      const res = await t.request(op.method, fill(op.template, ids), { body: op.method === 'GET' ? undefined : {} });
      assert.equal(res.status, 401, `${op.method} ${op.template}`);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="outreach-api"', `${op.method} ${op.template}`);
    }
  });

  it('answers 403 SCOPE_REQUIRED with every scope but the required one, and not with only that one', async () => {
    for (const op of operations.filter((o) => o.scope)) {
      const path = fill(op.template, ids);
      const body = op.method === 'GET' ? undefined : {};
      const without = await t.mintToken(
        'acct_a',
        ALL_SCOPES.filter((s) => s !== op.scope),
      );
      const refused = await t.request(op.method, path, { token: without, body });
      assert.equal(refused.status, 403, `${op.method} ${op.template} without ${op.scope}`);
      assert.equal(refused.body.error.code, 'SCOPE_REQUIRED');
      const only = await t.mintToken('acct_a', [op.scope!]);
      const served = await t.request(op.method, path, { token: only, body });
      if (op.method === 'GET')
        assert.equal(
          served.status,
          200,
          `${op.method} ${op.template} with only ${op.scope}: ${JSON.stringify(served.body)}`,
        );
      else
        assert.equal(
          served.status,
          422,
          `${op.method} ${op.template}: an empty body is invalid (validation runs before lookups)`,
        );
      await revokeAll(t);
    }
  });

  it("answers 404 NOT_FOUND for another account's records, exactly as for missing ones", async () => {
    const other = await t.mintToken('acct_b', ALL_SCOPES);
    for (const op of operations.filter((o) => o.method === 'GET' && o.template.includes('{'))) {
      const res = await t.request(op.method, fill(op.template, ids), { token: other });
      assert.equal(res.status, 404, `${op.method} ${op.template} as acct_b`);
      assert.equal(res.body.error.code, 'NOT_FOUND');
      const missing = await t.request(
        op.method,
        fill(op.template, { ...ids, projectId: 'prj_missing', workspaceId: 'prj_missing' }),
        { token: other },
      );
      assert.deepEqual(res.body, missing.body);
    }
  });

  it('answers identically in the /projects and /workspaces forms', async () => {
    const token = await t.mintToken('acct_a', ALL_SCOPES);
    const projectForms = operations.filter((o) => o.method === 'GET' && o.template.startsWith('/projects/'));
    assert.ok(projectForms.length > 5);
    for (const op of projectForms) {
      const twin = op.template.replace('/projects/{projectId}', '/workspaces/{workspaceId}');
      assert.ok(
        operations.some((o) => o.method === op.method && o.template === twin),
        `${twin} exists`,
      );
      const a = await t.get(fill(op.template, ids), token);
      const b = await t.get(fill(twin, ids), token);
      assert.equal(a.status, 200, `${op.template}: ${JSON.stringify(a.body)}`);
      assert.deepEqual(a.body, b.body, op.template);
    }
    await revokeAll(t);
  });
});

/** Keeps the account under the 10-active-token limit between checks. */
async function revokeAll(t: TestServer) {
  await sqlRun(t.store, "UPDATE api_tokens SET revoked_at = '2000-01-01T00:00:00.000Z' WHERE revoked_at IS NULL");
}
