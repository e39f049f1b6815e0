/**
 * outreach-api as a test fixture, tested the way a user's CI uses it (docs/fixture.md): start
 * the built executable with `--fixture` on an in-memory copy of the demo data,
 * wait until `/readyz` answers, and run two tests that each reset, write, and assert on the
 * request journal and the captured mail. Run after `npm run build` (part of `npm run test:dist`):
 *
 *   node --import tsx --test test/smoke/fixture-ci.ts            # dist/outreach-api
 *   OUTREACH_EXE=path/to/outreach-api node --import tsx --test test/smoke/fixture-ci.ts
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { freePort, sleep } from '../helpers/ports.js';

const EXE = resolve(process.env.OUTREACH_EXE ?? 'dist/outreach-api');
const TOKEN = 'oapi_demo_all_scopes_0000000000000000000000000000';
const THREAD = '/projects/prj_demo_main/sites/site_demo_blog/threads/thr_demo_012';

let server: ChildProcess;
let base: string;

/** `fetch` on the fixture: JSON in, the envelope out. */
async function call(method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  // JSON on every call but a GET: the admin API refuses a state-changing call without it.
  if (method !== 'GET') headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { ok: boolean; data: any; error?: { code: string } } };
}

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(EXE, ['serve', '--fixture', '--seed', '1', '--db', ':memory:', '--demo', '--port', String(port)], {
    stdio: 'ignore',
  });
  // Readiness: /readyz answers 200 once the service can serve.
  for (let waited = 0; ; waited += 100) {
    const ready = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (waited > 60_000 || server.exitCode !== null) throw new Error(`${EXE} did not get ready`);
    await sleep(100);
  }
});

after(() => {
  server.kill('SIGTERM');
});

beforeEach(async () => {
  const reset = await call('POST', '/__admin/reset');
  assert.equal(reset.status, 200);
  assert.ok(reset.body.data.ms < 1000, `reset took ${reset.body.data.ms} ms`);
});

test('a reply is journaled and its mail captured', async () => {
  const reply = await call(
    'POST',
    `/api/public/v1${THREAD}/replies`,
    { body: 'Thanks, here is the link.', idempotencyKey: 'ci-reply-0001' },
    TOKEN,
  );
  assert.equal(reply.status, 202);

  const journal = await call('GET', '/__admin/requests?method=POST');
  assert.equal(journal.body.data.length, 1);
  assert.equal(
    journal.body.data[0].route,
    '/api/public/v1/projects/:projectId/sites/:siteId/threads/:threadId/replies',
  );
  assert.equal(journal.body.data[0].status, 202);
  assert.equal(journal.body.data[0].requestBody.body, 'Thanks, here is the link.');

  let mail: any[] = [];
  for (let i = 0; i < 100 && mail.length === 0; i++) {
    mail = (await call('GET', '/__admin/mail')).body.data;
    if (mail.length === 0) await sleep(50);
  }
  assert.equal(mail.length, 1);
  assert.equal(mail[0].threadId, 'thr_demo_012');
  assert.equal(mail[0].body, 'Thanks, here is the link.');
  assert.equal(mail[0].status, 'sent');
});

test('after the reset the first test left nothing behind; a forced 500 changes nothing', async () => {
  assert.deepEqual((await call('GET', '/__admin/requests')).body.data, []);
  assert.deepEqual((await call('GET', '/__admin/mail')).body.data, []);
  // The same key as the first test: the reset freed it.
  await call('POST', '/__admin/faults', { method: 'POST', status: 500, times: 1 });
  const faulted = await call(
    'POST',
    `/api/public/v1${THREAD}/replies`,
    { body: 'Thanks, here is the link.', idempotencyKey: 'ci-reply-0001' },
    TOKEN,
  );
  assert.equal(faulted.status, 500);
  assert.equal(faulted.body.error?.code, 'INTERNAL_ERROR');
  const served = await call(
    'POST',
    `/api/public/v1${THREAD}/replies`,
    { body: 'A different body this time.', idempotencyKey: 'ci-reply-0001' },
    TOKEN,
  );
  assert.equal(served.status, 202);

  const journal = (await call('GET', '/__admin/requests')).body.data;
  assert.deepEqual(
    journal.map((r: any) => `${r.status} ${r.errorCode}`),
    ['202 null', '500 INTERNAL_ERROR'],
  );
  assert.ok(journal.every((r: any) => r.tokenId === 'tok_demo_all_scopes' && !JSON.stringify(r).includes(TOKEN)));
});
