/**
 * `outreach-api/client` (issue #29 item 4) from its sources: the generated types match the
 * documents the server serves (regenerated here and compared with the committed files), and the
 * client talks to a real server. The built package's client is compiled against an example with
 * strict tsc in test/package/client-types.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLIENT_TYPE_FILES, generateClientTypes, staleClientTypeFiles } from '../../build/client-types.js';
import { createClient } from '../../src/client/index.js';
import { DEMO_TOKEN } from '../../src/seed/demo.js';
import { DEMO_TOKEN as TESTING_DEMO_TOKEN } from '../../src/testing/index.js';
import { API, startTestServer, type TestServer } from '../helpers/harness.js';

describe('client types', () => {
  it('are what openapi-typescript makes of the documents served now (else: npm run generate:types)', async () => {
    const generated = await generateClientTypes();
    assert.deepEqual(Object.keys(generated).sort(), Object.keys(CLIENT_TYPE_FILES).sort());
    assert.deepEqual(staleClientTypeFiles(generated), []);
    // The comparison can fail: a changed document is a stale file.
    const changed = {
      ...generated,
      '/__admin/openapi.json': generated['/__admin/openapi.json'].replace('reset', 'rest'),
    };
    assert.deepEqual(staleClientTypeFiles(changed), ['src/testing/admin-openapi.ts']);
  });
});

describe('createClient', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ fixture: 'demo' });
  });
  after(() => t.close());

  it('sends the token and answers the envelope', async () => {
    assert.equal(TESTING_DEMO_TOKEN, DEMO_TOKEN);
    const api = createClient({ baseUrl: t.origin + API, token: DEMO_TOKEN });
    const me = await api.GET('/me');
    assert.equal(me.response.status, 200);
    assert.equal(me.data?.data.owner.id, 'acct_demo');
    const page = await api.GET('/projects/{projectId}/backlinks', {
      params: { path: { projectId: 'prj_demo_main' }, query: { limit: 2 } },
    });
    assert.equal(page.data?.data.data.length, 2);
  });

  it('gives an error envelope as error, without a token 401', async () => {
    const api = createClient({ baseUrl: `${t.origin}${API}/` });
    const me = await api.GET('/me');
    assert.equal(me.response.status, 401);
    assert.equal(me.data, undefined);
    assert.equal(me.error?.error.code, 'UNAUTHORIZED');
  });

  it('refuses a base URL that is not absolute http(s)', () => {
    assert.throws(() => createClient({ baseUrl: '/api/public/v1' }), TypeError);
    assert.throws(() => createClient({ baseUrl: 'ftp://example.test/api' }), /http\(s\)/);
  });
});
