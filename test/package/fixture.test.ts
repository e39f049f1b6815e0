/**
 * `startFixture()` from the installed package (issue #29 item 3): the tarballs installed in an
 * empty project outside the checkout, its `outreach-api/testing` imported from there. Every call
 * of the result goes to a real server; a failed start leaves nothing; a killed caller leaves no
 * server. Run after `npm run build && npm run pack` (npm run test:dist).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type * as Testing from '../../src/testing/index.js';
import { sleep } from '../helpers/ports.js';
import { running } from '../helpers/processes.js';
import { installedProject, processesUnder, type Project } from './project.js';

async function gone(pid: number, withinMs: number): Promise<boolean> {
  for (const start = Date.now(); Date.now() - start < withinMs; await sleep(20)) if (!running(pid)) return true;
  return !running(pid);
}

const THREAD = { projectId: 'prj_demo_main', siteId: 'site_demo_blog', threadId: 'thr_demo_012' };

describe('startFixture from the installed package', () => {
  let project: Project;
  let testing: typeof Testing;
  let fixture: Testing.Fixture;
  before(async () => {
    project = installedProject();
    const entry = createRequire(join(project.dir, 'package.json')).resolve('outreach-api/testing');
    assert.ok(entry.startsWith(join(project.dir, 'node_modules/outreach-api/')), entry);
    testing = (await import(pathToFileURL(entry).href)) as typeof Testing;
    fixture = await testing.startFixture({ seed: 1 });
  });
  after(async () => {
    await fixture?.stop();
    project?.remove();
  });

  it('is ready on a port of its own, with the demo token; pid is the server itself', async () => {
    assert.match(fixture.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(fixture.apiUrl, `${fixture.url}/api/public/v1`);
    assert.equal(fixture.adminUrl, `${fixture.url}/__admin`);
    assert.equal(fixture.token, 'oapi_demo_all_scopes_0000000000000000000000000000');
    assert.equal((await fetch(`${fixture.url}/readyz`)).status, 200);
    // The platform package's executable, not the launcher or a Node running it.
    const exe = readlinkSync(`/proc/${fixture.pid}/exe`);
    assert.match(exe, /node_modules\/@outreach-api\/linux-x64\//);
    const me = await fixture.client.GET('/me');
    assert.equal(me.data?.data.owner.id, 'acct_demo');
  });

  it('drives every admin call through /__admin', async () => {
    assert.ok((await fixture.reset()).ms >= 0);
    const reply = await fixture.client.POST('/projects/{projectId}/sites/{siteId}/threads/{threadId}/replies', {
      params: { path: THREAD },
      body: { body: 'Thanks, here is the link.', idempotencyKey: 'fixture-reply-1' },
    });
    assert.equal(reply.response.status, 202);
    const [entry] = await fixture.requests({ method: 'POST' });
    assert.equal(entry?.status, 202);
    assert.equal(entry?.tokenId, 'tok_demo_all_scopes');
    let mail: Testing.CapturedMail[] = [];
    for (let i = 0; i < 100 && mail.length === 0; i++) {
      mail = await fixture.mail();
      if (mail.length === 0) await sleep(50);
    }
    assert.equal(mail[0]?.threadId, 'thr_demo_012');
    const answer = await fixture.inbound({
      from: 'someone@example.org',
      subject: 'Re: your idea',
      body: 'Sounds good, send it over.',
      inReplyTo: mail[0]!.messageId,
    });
    assert.deepEqual([answer.outcome, answer.threadId], ['matched', 'thr_demo_012']);
    assert.equal(await fixture.clearMail(), 1);
    assert.deepEqual(await fixture.mail(), []);
    assert.ok((await fixture.clearRequests()) >= 1);

    const rule = await fixture.faults.add({ method: 'GET', status: 503, times: 2 });
    assert.deepEqual(await fixture.faults.list(), [rule]);
    assert.equal((await fixture.client.GET('/me')).response.status, 503);
    await fixture.faults.remove(rule.id);
    await assert.rejects(fixture.faults.remove(rule.id), (error: Testing.FixtureError) => {
      assert.equal(error.name, 'FixtureError');
      assert.deepEqual([error.status, error.code], [404, 'NOT_FOUND']);
      return true;
    });
    await fixture.faults.add({ status: 500 });
    assert.equal(await fixture.faults.clear(), 1);
    assert.equal((await fixture.client.GET('/me')).response.status, 200);

    assert.deepEqual(await fixture.clock.set('2030-01-01T00:00:00.000Z', { frozen: true }), {
      now: '2030-01-01T00:00:00.000Z',
      frozen: true,
    });
    assert.equal((await fixture.clock.advance(1500)).now, '2030-01-01T00:00:01.500Z');
    assert.equal((await fixture.clock.get()).now, '2030-01-01T00:00:01.500Z');
    assert.equal((await fixture.clock.reset()).frozen, false);

    // snapshot() moves what reset() restores: the inbound answer stays, the journal does not.
    const messages = () =>
      fixture.client.GET('/projects/{projectId}/sites/{siteId}/threads/{threadId}/messages', {
        params: { path: THREAD, query: { limit: 100 } },
      });
    const count = (await messages()).data!.data.pagination.total;
    await fixture.snapshot();
    await fixture.reset();
    assert.deepEqual(await fixture.requests(), []);
    assert.equal((await messages()).data!.data.pagination.total, count);
  });

  it('with a seed, the same requests after a reset get the same ids', async () => {
    const started = await testing.startFixture({ seed: 7 });
    try {
      const discover = () =>
        started.client.POST('/projects/{projectId}/prospects/{prospectId}/contact-discovery', {
          params: { path: { projectId: 'prj_demo_main', prospectId: 'prs_demo_queued' } },
          body: { idempotencyKey: 'seeded-1' },
        });
      const first = (await discover()).data?.data.job?.id;
      await started.reset();
      assert.ok(first);
      assert.equal((await discover()).data?.data.job?.id, first);
    } finally {
      await started.stop();
    }
  });

  it('takes config, env and an import document with a token it names; stop() and asyncDispose end it', async () => {
    const document = join(project.dir, 'fixture.json');
    const token = 'oapi_ci_import_token_00000000000000000000000000';
    writeFileSync(
      document,
      JSON.stringify({
        accounts: [{ id: 'acct_ci', email: 'ci@example.test', name: 'CI', plan: 'pro' }],
        tokens: [{ accountId: 'acct_ci', name: 'ci', scopes: ['projects:read'], token }],
        projects: [{ id: 'prj_ci', accountId: 'acct_ci', name: 'CI project' }],
      }),
    );
    const imported = await testing.startFixture({
      dataset: document,
      config: { limits: { requestsPerMinute: 0 } },
      env: { OUTREACH_API_FIXTURE_JOURNAL_SIZE: '1' },
      token,
    });
    const dir = readlinkSync(`/proc/${imported.pid}/cwd`);
    try {
      assert.equal(imported.token, token);
      const projects = await imported.client.GET('/projects');
      assert.deepEqual(
        projects.data?.data.data.map((p) => p.id),
        ['prj_ci'],
      );
      assert.equal(projects.response.headers.get('x-ratelimit-limit'), null, 'config: no limiter');
      await imported.client.GET('/projects');
      assert.equal((await imported.requests()).length, 1, 'env: a journal of one');
    } finally {
      await imported[Symbol.asyncDispose]();
    }
    assert.ok(!running(imported.pid));
    assert.ok(!existsSync(dir), 'its directory is removed');
    await imported.stop(); // a second stop is a no-op
    const untokened = await testing.startFixture({ dataset: document });
    assert.equal(untokened.token, undefined);
    await untokened.stop();
  });

  it('a failed start rejects with the server output and leaves nothing running', async () => {
    const bad = join(project.dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ accounts: [{ id: 'acct_x', plan: 'platinum' }] }));
    // startFixture makes its directory under os.tmpdir(), which reads TMPDIR at each call: here, one
    // of this test's own, where no other test's processes work.
    const tmp = mkdtempSync(join(project.dir, 'tmp-'));
    const tmpBefore = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      await assert.rejects(testing.startFixture({ dataset: bad }), (error: Error) => {
        assert.match(
          error.message,
          /exited .*before it was ready; its last output:\n[\s\S]*accounts\[0\] \(id "acct_x"\): email: is required/,
        );
        return true;
      });
      await assert.rejects(testing.startFixture({ startTimeoutMs: 1 }), /not ready within 1 ms/);
    } finally {
      if (tmpBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpBefore;
    }
    assert.deepEqual(processesUnder(tmp).filter(running), []);
    assert.deepEqual(readdirSync(tmp), [], "the fixtures' directories are removed");
  });

  it('kill -9 of the process that called startFixture leaves no server running 2 s later', async () => {
    const script = join(project.dir, 'caller.mjs');
    writeFileSync(
      script,
      "import { startFixture } from 'outreach-api/testing';\n" +
        'const fixture = await startFixture();\n' +
        'console.log(JSON.stringify({ pid: fixture.pid }));\n' +
        'setInterval(() => {}, 1000);\n',
    );
    // Its fixture's directory under a TMPDIR of this test's: nobody is left to remove it, but the
    // server, stopping gracefully, removes its ready file.
    const tmp = mkdtempSync(join(project.dir, 'tmp-'));
    const caller = spawn(process.execPath, [script], {
      cwd: project.dir,
      env: { ...process.env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    const pid = await new Promise<number>((resolve, reject) => {
      caller.stdout.on('data', (chunk: Buffer) => {
        out += chunk;
        const match = /"pid":(\d+)/.exec(out);
        if (match) resolve(Number(match[1]));
      });
      caller.on('exit', () => reject(new Error(`the caller exited: ${out}`)));
    });
    assert.ok(running(pid));
    caller.kill('SIGKILL');
    const stopped = await gone(pid, 2000);
    if (!stopped) process.kill(pid, 'SIGKILL');
    assert.ok(stopped, `server ${pid} still running 2 s after its caller was killed`);
    const [dir] = readdirSync(tmp);
    assert.deepEqual(readdirSync(join(tmp, dir!)), [], 'it stopped gracefully: its ready file is gone');
  });

  it('starts several at once, each its own process, port and directory', async () => {
    const several = await Promise.all([1, 2, 3].map(() => testing.startFixture()));
    try {
      assert.equal(new Set(several.map((f) => f.url)).size, 3);
      assert.equal(new Set(several.map((f) => f.pid)).size, 3);
      assert.equal(new Set(several.map((f) => readlinkSync(`/proc/${f.pid}/cwd`))).size, 3);
      await several[0]!.client.POST('/projects/{projectId}/sites/{siteId}/threads/{threadId}/replies', {
        params: { path: THREAD },
        body: { body: 'Only on the first.', idempotencyKey: 'several-1' },
      });
      assert.deepEqual(await Promise.all(several.map(async (f) => (await f.requests()).length)), [1, 0, 0]);
    } finally {
      await Promise.all(several.map((f) => f.stop()));
    }
  });
});
