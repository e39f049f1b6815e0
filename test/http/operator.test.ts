/**
 * The operator's endpoints (decisions.md §15): /healthz, /readyz and /metrics, over real HTTP.
 * The metrics test scrapes /metrics, parses the Prometheus text format line by line and checks
 * the series of §15 against the requests it made, and that no label holds a raw path, id or token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../helpers/harness.js';
import { startWriteServer } from '../writes/helpers.js';
import { sqlGet, sqlRun } from '../helpers/sql.js';

const REPLY = '/projects/prj_a1/sites/site_a1/threads/thr_a1/replies';
const METRICS_TOKEN = 'metrics-secret-7f3a9c';

/** One sample of the text format: `name{label="value",…} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the Prometheus text exposition format (version 0.0.4): `# HELP` / `# TYPE` lines and
 * samples. Throws on any line that is neither, so a malformed exposition fails the test.
 */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  // NaN in any case: prom-client writes `Nan` (e.g. the event-loop lag before its first sample), which
  // Prometheus reads like `NaN` (its float parser ignores the case).
  const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?(?:[0-9.e+-]+|[Nn][Aa][Nn]|\+Inf|-Inf))$/;
  const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/g;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const match = sampleLine.exec(line);
    assert.ok(match, `not a valid exposition line: ${line}`);
    const labels: Record<string, string> = {};
    let consumed = 0;
    for (const pair of (match[2] ?? '').matchAll(labelPair)) {
      labels[pair[1]!] = pair[2]!;
      consumed += pair[0].length;
    }
    assert.equal(consumed, (match[2] ?? '').length, `malformed labels: ${line}`);
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return { samples, types };
}

/** A GET outside /api/public/v1 (the harness prefixes other paths with it). */
async function getRoot(t: TestServer, path: string): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(t.origin + path);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok(res.headers.get('x-request-id'));
  return { status: res.status, headers: res.headers, body: await res.json() };
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

describe('health and readiness', () => {
  let t: TestServer;
  before(async () => {
    t = await startWriteServer({ config: { 'limits.requestsPerMinute': 1 } });
  });
  after(() => t.close());

  it('GET /healthz answers 200 with the version, without a token and outside the limiter', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await getRoot(t, '/healthz');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { ok: true, data: { status: 'ok', version: res.body.data.version } });
      assert.match(res.body.data.version, /^\d+\.\d+\.\d+/);
      assert.equal(res.headers.get('x-ratelimit-limit'), null);
    }
  });

  it('GET /readyz answers 200 when the database answers, the schema is current and the workers run', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await getRoot(t, '/readyz');
      assert.equal(res.status, 200);
      assert.equal(res.body.data.status, 'ready');
    }
  });

  it('answers 503 NOT_READY while the schema is not the latest migration', async () => {
    const newest = (await sqlGet(t.store, 'SELECT MAX(version) AS v FROM schema_migrations')) as { v: number };
    const saved = (await sqlGet(t.store, 'SELECT * FROM schema_migrations WHERE version = ?', newest.v)) as Record<
      string,
      unknown
    >;
    await sqlRun(t.store, 'DELETE FROM schema_migrations WHERE version = ?', newest.v);
    try {
      const res = await getRoot(t, '/readyz');
      assert.equal(res.status, 503);
      assert.equal(res.body.error.code, 'NOT_READY');
      assert.match(res.body.error.message, /schema/);
    } finally {
      await sqlRun(
        t.store,
        'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)',
        saved.version,
        saved.name,
        saved.applied_at,
      );
    }
    assert.equal((await getRoot(t, '/readyz')).status, 200);
  });

  it('answers 503 NOT_READY once the workers are stopped', async () => {
    await t.server.workers.stop();
    const res = await getRoot(t, '/readyz');
    assert.equal(res.status, 503);
    assert.deepEqual(res.body, {
      ok: false,
      error: { code: 'NOT_READY', message: 'Not ready: the background workers are not running' },
    });
    assert.equal((await getRoot(t, '/healthz')).status, 200, 'healthz still answers');
  });

  it('serves no /metrics while metrics.enabled is false', async () => {
    assert.equal((await getRoot(t, '/metrics')).status, 404);
  });
});

describe('GET /metrics', () => {
  let t: TestServer;
  let token: string;
  before(async () => {
    t = await startWriteServer({
      config: { 'metrics.enabled': true, 'metrics.token': METRICS_TOKEN, 'limits.requestsPerMinute': 8 },
    });
    token = await t.mintToken('acct_a', ['outreach:send', 'outreach:read', 'projects:read']);
  });
  after(() => t.close());

  const scrape = async () => {
    const res = await fetch(`${t.origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parseExposition(await res.text());
  };

  it('needs the metrics token when one is set', async () => {
    const tries: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: `Bearer ${token}` },
    ];
    for (const headers of tries) {
      const res = await fetch(`${t.origin}/metrics`, { headers });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
      assert.equal(
        res.headers.get('www-authenticate'),
        headers.authorization ? 'Bearer realm="outreach-api", error="invalid_token"' : 'Bearer realm="outreach-api"',
      );
    }
  });

  it('counts requests by method, route template and status, with durations, replays, rejections and the outbox', async () => {
    const before = (await scrape()).samples;
    assert.equal((await t.get('/me', token)).status, 200);
    assert.equal((await t.get('/projects/prj_a1', token)).status, 200);
    assert.equal((await t.get('/projects/prj_zz_secret_id', token)).status, 404);
    assert.equal((await t.get('/no/such/route/abc123', token)).status, 404);
    assert.equal((await t.get('/me', 'oapi_not_a_real_token_value')).status, 401);
    const body = { body: 'Thanks, the link is live.', idempotencyKey: 'metrics-reply-0001' };
    assert.equal((await t.request('POST', REPLY, { token, body })).status, 202);
    const replay = await t.request('POST', REPLY, { token, body });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    await t.server.workers.outbox.drain();
    let limited = 0;
    for (let i = 0; i < 8 && limited === 0; i++) if ((await t.get('/me', token)).status === 429) limited++;
    assert.equal(limited, 1, 'the limiter refused one request');

    const { samples, types } = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      value(samples, name, labels) - value(before, name, labels);
    const me = '/api/public/v1/me';
    const project = '/api/public/v1/projects/:projectId';
    assert.ok(delta('http_requests_total', { method: 'GET', route: me, status: '200' }) >= 1);
    assert.equal(delta('http_requests_total', { method: 'GET', route: me, status: '401' }), 1);
    assert.equal(delta('http_requests_total', { method: 'GET', route: me, status: '429' }), 1);
    assert.equal(delta('http_requests_total', { method: 'GET', route: project, status: '200' }), 1);
    assert.equal(delta('http_requests_total', { method: 'GET', route: project, status: '404' }), 1);
    assert.equal(delta('http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
    assert.equal(
      delta('http_requests_total', {
        method: 'POST',
        route: '/api/public/v1/projects/:projectId/sites/:siteId/threads/:threadId/replies',
        status: '202',
      }),
      2,
    );
    assert.equal(delta('http_request_duration_seconds_count', { method: 'GET', route: project }), 2);
    assert.ok(
      value(samples, 'http_request_duration_seconds_bucket', { method: 'GET', route: project, le: '+Inf' }) >= 2,
    );
    assert.equal(delta('outreach_rate_limit_rejections_total'), 1);
    assert.equal(delta('outreach_idempotent_replays_total'), 1);
    assert.equal(delta('outreach_outbox_deliveries_total', { result: 'sent' }), 1);
    assert.ok(value(samples, 'outreach_outbox_messages', { status: 'sent' }) >= 1);
    assert.equal(value(samples, 'outreach_outbox_messages', { status: 'queued' }), 0);
    assert.equal(types.get('outreach_backlink_checks_total'), 'counter', 'the monitor’s counter is exposed');
    assert.equal(types.get('http_request_duration_seconds'), 'histogram');
    assert.ok(
      samples.some((s) => s.name === 'process_cpu_user_seconds_total'),
      'process metrics',
    );
    assert.ok(
      samples.some((s) => s.name === 'nodejs_heap_size_used_bytes'),
      'runtime metrics',
    );

    // Labels hold templates and enums only: no raw path, id or token.
    for (const s of samples) {
      for (const label of Object.values(s.labels)) {
        assert.ok(!/prj_|acct_|thr_|abc123|oapi_|metrics-secret|no\/such/.test(label), `label ${label} of ${s.name}`);
      }
    }
  });
});
