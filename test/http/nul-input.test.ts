/**
 * The NUL character (U+0000) in input (issue #28 item 5): PostgreSQL cannot hold it in text, so
 * before this a NUL in a path id, a query value, a JSON body or the sign-in form answered 500 on
 * PostgreSQL and logged a stack. Every surface refuses it at input, on both stores, before
 * anything is looked up: the API with 422 `VALIDATION_ERROR` naming the field (decisions.md §4,
 * after 401, 429 and 403 as §3 orders), the settings area with a 400 page. Nothing is logged at
 * `error` and nothing reaches the database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/logger.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { DEMO_EMAIL, DEMO_PASSWORD, SettingsClient, giveDemoPasswords } from '../helpers/settings.js';

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

describe('NUL in input', () => {
  let t: TestServer;
  let token: string;
  const lines: string[] = [];
  const errors = () =>
    lines.map((l) => JSON.parse(l) as { level: string; msg: string }).filter((l) => l.level === 'error');
  before(async () => {
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    t = await startTestServer({ fixture: 'demo', logger, config: { 'limits.requestsPerMinute': 0 } });
    await giveDemoPasswords(t.store.db, t.clock.now());
    token = await t.mintToken('acct_demo');
  });
  after(() => t?.close());

  const refused = (res: { status: number; body: any }, paths: string[]) => {
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'VALIDATION_ERROR');
    assert.deepEqual(
      res.body.error.details,
      paths.map((path) => ({ path, message: NUL_MESSAGE })),
    );
  };

  it('refuses a NUL in a path parameter with 422 naming it', async () => {
    refused(await t.get('/projects/a%00b/sites', token), ['path.projectId']);
    refused(await t.get('/workspaces/prj_demo_main/sites/s%00/keywords', token), ['path.siteId']);
  });

  it('refuses a NUL in a query value with 422 naming it', async () => {
    refused(await t.get('/projects/prj_demo_main/prospects?search=a%00b', token), ['query.search']);
    refused(await t.get('/projects/prj_demo_main/leads?search=%00&view=all', token), ['query.search']);
    refused(await t.get('/projects/prj_demo_main/backlinks?siteId=%00', token), ['query.siteId']);
    // A parameter no operation reads is ignored (decisions.md §5), NUL or not.
    assert.equal((await t.get('/projects/prj_demo_main/prospects?unknown=%00', token)).status, 200);
  });

  it('refuses a NUL in a JSON body with 422 naming each field; nothing is written', async () => {
    const drafts = await t.get('/projects/prj_demo_main/sites/site_demo_blog/drafts?limit=1', token);
    const draft = drafts.body.data.data[0];
    assert.ok(draft, 'the demo has a draft');
    const path = `/projects/prj_demo_main/sites/site_demo_blog/drafts/${draft.id}`;
    const body = {
      subject: 'Hello\u0000there, a subject',
      body: 'A body long enough for the rule, with a NUL: \u0000.',
    };
    refused(await t.request('PATCH', path, { token, body }), ['body.subject', 'body.body']);
    const before = await t.get(path, token);
    assert.equal(before.body.data.subject, draft.subject, 'nothing was written');
  });

  it('checks the order of §3 first: 401 without a token, 403 without the scope', async () => {
    const res = await t.get('/projects/a%00b/sites');
    assert.equal(res.status, 401);
    const narrow = await t.mintToken('acct_demo', ['projects:read']);
    assert.equal((await t.get('/projects/prj_demo_main/prospects?search=%00', narrow)).status, 403);
  });

  it('answers the settings area with a 400 page: the sign-in form, a path, a query', async () => {
    const browser = new SettingsClient(t.origin);
    for (const fields of [
      { email: `owner\u0000@trailhead.test`, password: DEMO_PASSWORD },
      { email: DEMO_EMAIL, password: `${DEMO_PASSWORD}\u0000` },
    ]) {
      const res = await browser.post('/settings/sign-in', fields);
      assert.equal(res.status, 400, res.html.slice(0, 300));
      assert.match(res.html, /NUL character/);
    }
    await browser.signIn(DEMO_EMAIL, DEMO_PASSWORD);
    for (const path of ['/settings/api-access/tokens/a%00b/revoke', '/settings/api-access?revoked=%00']) {
      const res = await browser.get(path);
      assert.equal(res.status, 400, path);
      assert.match(res.html, /NUL character/);
    }
    assert.equal((await browser.get('/settings/api-access')).status, 200, 'the session is still good');
  });

  it('logged no failure', () => {
    assert.deepEqual(errors(), []);
  });
});
