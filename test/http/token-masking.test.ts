/**
 * A token put in the URL (issue #21 item 1, contract §5.4): the API ignores it and answers 401,
 * and wherever the request is recorded the token is masked as `oapi_[masked]`, whatever the
 * query parameter's name and however it is percent-encoded: the fixture journal's `query` and
 * `path`, the access log's `path`, error messages in the log, and the metrics' labels.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateToken, maskTokens } from '../../src/domain/tokens.js';
import { createLogger } from '../../src/logger.js';
import { DEMO_TOKEN } from '../../src/seed/demo.js';
import { API, type TestServer } from '../helpers/harness.js';
import { admin, startFixture } from '../fixture/helpers.js';

/** Every character percent-encoded, as an over-eager client encodes a value. */
const encodeEvery = (text: string) => [...text].map((ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`).join('');
/** `text` with every `%XX` decoded, three times over: what a reader of the record could recover. */
const decodeAll = (text: string) => {
  let out = text;
  for (let i = 0; i < 3; i++)
    out = out.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return out;
};

describe('a token in the URL', () => {
  let t: TestServer;
  const lines: string[] = [];
  const answers: string[] = [];
  const secret = generateToken();
  const secrets = [secret, DEMO_TOKEN];
  /** The part of each token that identifies it (past the shared `oapi_`). */
  const cores = secrets.map((s) => s.slice(5, 30));

  before(async () => {
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    t = await startFixture({ logger, config: { 'metrics.enabled': true } });
  });
  after(() => t.close());

  const send = async (pathAndQuery: string, token?: string) => {
    const res = await fetch(`${t.origin}${API}${pathAndQuery}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    answers.push(await res.text());
    return res.status;
  };

  it('is refused, and masked in the journal, the access log, error messages and the metrics', async () => {
    const underscoreEncoded = secret.replace('_', '%5F');
    const lowerHex = secret.replace('_', '%5f').replace(/a/g, '%61');
    // Under several parameter names, as a name, inside another URL, and percent-encoded.
    const queries = [
      `token=${secret}`,
      `access_token=${secret}`,
      `api_key=${DEMO_TOKEN}`,
      `x=${underscoreEncoded}`,
      `auth=${lowerHex}`,
      `t=${encodeEvery(secret)}`,
      `t2=${secret.replace('_', '%255F')}`,
      `${secret}=1`,
      `redirect=${encodeURIComponent(`https://app.example/cb?token=${secret}&x=1`)}`,
    ];
    for (const query of queries) assert.equal(await send(`/me?${query}`), 401, query);
    // A token in the URL never authenticates, with a valid one in the header or not.
    assert.equal(await send(`/me?token=${DEMO_TOKEN}`, DEMO_TOKEN), 200);
    assert.equal(await send(`/projects?limit=${secret}`, DEMO_TOKEN), 422);
    // In the path, plain and encoded.
    assert.equal(await send(`/projects/${secret}`, DEMO_TOKEN), 404);
    assert.equal(await send(`/projects/${underscoreEncoded}/sites`, DEMO_TOKEN), 404);
    assert.equal(await send(`/${encodeEvery(secret)}/nowhere`, DEMO_TOKEN), 404);

    const journal = (await admin(t, 'GET', '/requests')).body.data as any[];
    const byQuery = (name: string) => journal.find((e) => name in e.query)?.query[name];
    for (const name of ['token', 'access_token', 'api_key', 'x', 'auth', 't', 't2'])
      assert.equal(byQuery(name), 'oapi_[masked]', `query.${name} is masked`);
    assert.equal(byQuery('oapi_[masked]'), '1', 'a token as a parameter name is masked');
    assert.equal(byQuery('redirect'), 'https://app.example/cb?token=oapi_[masked]&x=1');
    assert.ok(journal.some((e) => e.path === `${API}/projects/oapi_[masked]`));
    assert.ok(journal.some((e) => e.path === `${API}/projects/oapi_[masked]/sites`));

    const accessPaths = lines
      .map((l) => JSON.parse(l))
      .filter((e) => e.msg === 'request')
      .map((e) => e.path);
    assert.ok(accessPaths.includes(`${API}/projects/oapi_[masked]`));
    assert.ok(accessPaths.includes(`${API}/projects/oapi_[masked]/sites`));

    const metrics = await (await fetch(`${t.origin}/metrics`)).text();
    assert.match(metrics, /http_requests_total\{[^}]*route="unmatched"/);

    const records = {
      journal: JSON.stringify(journal),
      'access log': lines.join(''),
      metrics,
      'error answers': answers.join('\n'),
    };
    for (const [where, text] of Object.entries(records))
      for (const core of cores) assert.ok(!decodeAll(text).includes(core), `${where} holds a token (${core}…)`);
  });

  it('is masked in any log line, e.g. an error message or a stack', async () => {
    const logged: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => void logged.push(line) } });
    logger.log('error', 'unexpected failure', {
      error: { message: `fetch https://api.example/?key=${secret} failed`, stack: `Error: at ${encodeEvery(secret)}` },
    });
    const entry = JSON.parse(logged[0]!);
    assert.equal(entry.error.message, 'fetch https://api.example/?key=oapi_[masked] failed');
    assert.ok(!decodeAll(logged[0]!).includes(cores[0]!));
  });

  it('leaves text without a token as it was', async () => {
    for (const text of ['/api/public/v1/projects/prj_1', '/a%20b/%41', 'oapi_…', 'curl/8.0'])
      assert.equal(maskTokens(text), text);
    assert.equal(maskTokens(`a ${secret} b ${DEMO_TOKEN}`), 'a oapi_[masked] b oapi_[masked]');
  });
});
