/**
 * The monitor end to end (issue "Done when"): `serve` with `monitor.enabled` checks the backlinks
 * of a database that point at a local site on its schedule (the fake clock decides what is due),
 * `outreach-api backlinks check --all` does the same from another process, and the API's backlink
 * list, detail (checks, `hasCheckError`) and site pipeline show what they recorded.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, it } from 'node:test';
import { cliBundle } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { documentOf, LOOPBACK, TARGET } from './helpers.js';
import { html, startTestSite, status, type TestSite } from './site.js';

let site: TestSite;
let t: TestServer;
let token: string;
let A: string;

const page = (anchor: string) => html(`<a href="${TARGET}">${anchor}</a>`);

before(async () => {
  site = await startTestSite(['127.0.0.30']);
  A = site.origins[0]!;
  site.route(`${A}/live`, page('guide'));
  site.route(`${A}/lost`, status(404));
  site.route(`${A}/blocked`, status(403));
  site.route(`${A}/error`, status(503));
  t = await startTestServer({
    fixture: documentOf([
      { id: 'bl_live', sourceUrl: `${A}/live` },
      { id: 'bl_lost', sourceUrl: `${A}/lost`, observedAnchor: 'old anchor' },
      { id: 'bl_blocked', sourceUrl: `${A}/blocked` },
      { id: 'bl_error', sourceUrl: `${A}/error`, siteId: 'site_n' },
      { id: 'bl_closed', sourceUrl: `${A}/live`, status: 'closed' },
    ]),
    config: { 'monitor.enabled': true, ...LOOPBACK },
  });
  token = await t.mintToken('acct_m');
});
after(async () => {
  await t.close();
  await site.close();
});

const statuses = async () => {
  const list = await t.get('/projects/prj_m/backlinks?limit=100', token);
  assert.equal(list.status, 200);
  return Object.fromEntries((list.body.data.data as { id: string; status: string }[]).map((b) => [b.id, b.status]));
};

it('serve with monitor.enabled checks every due backlink at start, and the API shows it', async () => {
  // The pass the worker started at start-up; a pass queued behind it finds nothing due.
  assert.equal(await t.server.workers.monitor.runOnce(), 0);
  assert.deepEqual(await statuses(), {
    bl_live: 'live',
    bl_lost: 'lost',
    bl_blocked: 'blocked',
    bl_error: 'error',
    bl_closed: 'closed',
  });

  const detail = await t.get('/projects/prj_m/backlinks/bl_error', token);
  assert.equal(detail.body.data.hasCheckError, true);
  assert.equal(detail.body.data.checks.length, 1);
  assert.equal(detail.body.data.checks[0].httpStatus, 503);
  const live = await t.get('/projects/prj_m/backlinks/bl_live', token);
  assert.equal(live.body.data.hasCheckError, false);
  assert.equal(live.body.data.observedAnchor, 'guide');
  assert.equal(live.body.data.lastCheckedAt, new Date(t.clock.now()).toISOString());
  assert.deepEqual(
    { ...live.body.data.checks[0], id: undefined },
    {
      id: undefined,
      status: 'live',
      requestedSourceUrl: `${A}/live`,
      finalSourceUrl: `${A}/live`,
      httpStatus: 200,
      targetFound: true,
      observedTargetUrl: TARGET,
      observedAnchor: 'guide',
      observedRel: [],
      hasError: false,
      checkedAt: new Date(t.clock.now()).toISOString(),
    },
  );
  assert.equal(
    (await t.get('/projects/prj_m/backlinks/bl_lost', token)).body.data.observedAnchor,
    'old anchor',
    'kept when not found',
  );

  const pipeline = await t.get('/projects/prj_m/sites/site_m/pipeline', token);
  assert.deepEqual(pipeline.body.data.backlinks, {
    pending: 0,
    live: 1,
    changed: 0,
    lost: 1,
    blocked: 1,
    error: 0,
    closed: 1,
  });
  const other = await t.get('/projects/prj_m/sites/site_n/pipeline', token);
  assert.equal(other.body.data.backlinks.error, 1);
  const filtered = await t.get('/projects/prj_m/backlinks?status=lost', token);
  assert.equal(filtered.body.data.pagination.total, 1);
});

it('checks again on its schedule: nothing before intervalHours, every due backlink after', async () => {
  site.route(`${A}/live`, page('renamed guide'));
  site.route(`${A}/error`, page('guide'));
  t.clock.advance(12 * 3_600_000);
  assert.equal(await t.server.workers.monitor.runOnce(), 0, 'nothing due after 12 h');
  t.clock.advance(12 * 3_600_000 + 1);
  assert.equal(await t.server.workers.monitor.runOnce(), 4);
  assert.deepEqual(await statuses(), {
    bl_live: 'changed',
    bl_lost: 'lost',
    bl_blocked: 'blocked',
    bl_error: 'live',
    bl_closed: 'closed',
  });
  const detail = await t.get('/projects/prj_m/backlinks/bl_error', token);
  assert.equal(detail.body.data.hasCheckError, false, 'the newest check decides');
  assert.equal(detail.body.data.pagination.total, 2);
});

it('outreach-api backlinks check --all from another process moves every backlink, and the API shows it', async () => {
  site.route(`${A}/lost`, page('back again'));
  site.route(`${A}/blocked`, status(410));
  const bin = await cliBundle();
  const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [bin, '--db', t.location, 'backlinks', 'check', '--all'],
      {
        env: {
          PATH: process.env.PATH,
          OUTREACH_API_MONITOR_ALLOW_PRIVATE_NETWORKS: 'true',
          OUTREACH_API_MONITOR_PER_HOST_DELAY_MS: '0',
        },
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^checked +4\nlive +3\nchanged +0\nlost +1\n/);
  assert.deepEqual(await statuses(), {
    bl_live: 'live',
    bl_lost: 'live',
    bl_blocked: 'lost',
    bl_error: 'live',
    bl_closed: 'closed',
  });
  const pipeline = await t.get('/projects/prj_m/sites/site_m/pipeline', token);
  assert.deepEqual(pipeline.body.data.backlinks, {
    pending: 0,
    live: 2,
    changed: 0,
    lost: 1,
    blocked: 0,
    error: 0,
    closed: 1,
  });
  const lost = await t.get('/projects/prj_m/backlinks/bl_lost', token);
  assert.equal(lost.body.data.observedAnchor, 'back again');
  assert.equal(lost.body.data.checks.length, 3);
});
