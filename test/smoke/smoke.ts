/**
 * End-to-end smoke test of a built or ported server: starts it on a fresh demo database, waits
 * for the first answered request and checks a read, a list, a write and the OpenAPI document.
 * Builds nothing: `npm run build` first for the executable.
 *
 *   node --import tsx test/smoke/smoke.ts --exe dist/outreach-api
 *     copies the executable alone into an empty temp directory and runs it from there with
 *     PATH holding no node, HOME unwritable (the SQLite addon must go to TMPDIR) and no other env;
 *   node --import tsx test/smoke/smoke.ts -- deno run --allow-all src/main.ts
 *     runs the given command line from the current directory (the checkout).
 *
 * `serve --demo --port <free port> --db <temp>/smoke.db` is appended to the command either way.
 * Prints one line per check and `smoke: N passed, M failed`; exits 1 on any failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { freePort, sleep } from '../helpers/ports.js';

const START_TIMEOUT_MS = 60_000;
const DRAFTS_PATH = '/projects/{projectId}/sites/{siteId}/drafts';
const DRAFT_PATH = `${DRAFTS_PATH}/{draftId}`;

interface Launch {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Set for the executable: where its SQLite addon must be cached. */
  tmp?: string;
}

interface Draft {
  id: string;
  status?: string;
  message?: { subject?: string; body?: string };
}

interface Envelope {
  ok?: boolean;
  data?: unknown;
  error?: { code?: string; message?: string };
}

const results: { name: string; ok: boolean; note: string }[] = [];
function record(name: string, ok: boolean, note = ''): void {
  results.push({ name, ok, note });
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${name}${note ? `: ${note}` : ''}\n`);
}

/** Runs `fn` as check `name`; a thrown error is its failure message. */
async function check(name: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    const note = await fn();
    record(name, true, typeof note === 'string' ? note : '');
  } catch (error) {
    record(name, false, (error as Error).message);
  }
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** Parses `--exe PATH` or `-- COMMAND ARGS…` into how to start the server. */
function launchFrom(argv: string[], work: string): Launch {
  if (argv[0] === '--exe' && argv[1]) {
    const bin = join(work, 'bin');
    const run = join(work, 'run');
    const home = join(work, 'home');
    const tmp = join(work, 'tmp');
    for (const dir of [bin, run, home, tmp]) mkdirSync(dir);
    const exe = join(bin, basename(argv[1]));
    copyFileSync(resolve(argv[1]), exe);
    chmodSync(exe, 0o755);
    chmodSync(home, 0o555);
    // root writes through 0555; nobody can create anything in /proc.
    const unwritableHome = process.getuid?.() === 0 ? '/proc' : home;
    return {
      command: exe,
      args: [],
      cwd: run,
      env: { PATH: join(work, 'empty-path'), HOME: unwritableHome, TMPDIR: tmp },
      tmp,
    };
  }
  const dash = argv.indexOf('--');
  const commandLine = dash >= 0 ? argv.slice(dash + 1) : [];
  if (commandLine.length === 0) throw new Error('usage: smoke.ts --exe PATH | smoke.ts -- COMMAND [ARGS…]');
  return { command: commandLine[0]!, args: commandLine.slice(1), cwd: process.cwd(), env: process.env };
}

/** Stops the server's whole process group (npx and the like spawn children); waits for exit. */
async function stop(child: ChildProcess, exited: Promise<number | null>): Promise<number | null> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  const code = await Promise.race([exited, sleep(5000).then(() => 'timeout' as const)]);
  if (code !== 'timeout') return code;
  signal('SIGKILL');
  await exited;
  throw new Error('did not stop within 5 s of SIGTERM');
}

async function main(argv: string[]): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), 'outreach-smoke-'));
  const launch = launchFrom(argv, work);
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const api = `${origin}/api/public/v1`;
  const args = [...launch.args, 'serve', '--demo', '--port', String(port), '--db', join(work, 'smoke.db')];
  process.stdout.write(`smoke: ${[launch.command, ...args].join(' ')}\n`);

  const started = performance.now();
  // Metrics on, to check the bundled prom-client; the access log goes to stdout.
  const env = { ...launch.env, OUTREACH_API_METRICS_ENABLED: 'true' };
  const child = spawn(launch.command, args, {
    cwd: launch.cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let running = true;
  const exited = new Promise<number | null>((done) => {
    child.once('exit', (code) => {
      running = false;
      done(code);
    });
    child.once('error', (error) => {
      output += `${error.message}\n`;
      running = false;
      done(null);
    });
  });

  let token = '';
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    let json: Envelope = {};
    try {
      json = JSON.parse(text) as Envelope;
    } catch {
      // Reported below through the status and `ok`.
    }
    return { status: response.status, json, text: text.slice(0, 300) };
  };
  const okData = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const { status, json, text } = await call(method, path, body);
    assert(status === 200 && json.ok === true, `${method} ${path} → ${status} ${text}`);
    return json.data as T;
  };
  const listOf = async <T>(path: string): Promise<T[]> => {
    const data = await okData<{ data?: T[] }>('GET', path);
    assert(Array.isArray(data.data), `GET ${path}: no data array`);
    return data.data;
  };

  try {
    await check('start', async () => {
      for (;;) {
        assert(running, `exited before answering:\n${output}`);
        assert(performance.now() - started < START_TIMEOUT_MS, `no answer within ${START_TIMEOUT_MS} ms:\n${output}`);
        try {
          await fetch(`${api}/me`);
          break;
        } catch {
          await sleep(10);
        }
      }
      const answeredMs = performance.now() - started;
      while (!/demo token[^:\n]*:\s*(\S+)/.test(output) && running && performance.now() - started < answeredMs + 5000)
        await sleep(10);
      token = /demo token[^:\n]*:\s*(\S+)/.exec(output)?.[1] ?? '';
      assert(token, `answered, but printed no demo token:\n${output}`);
      return `first answer after ${Math.round(answeredMs)} ms`;
    });
    // Without a token the other checks cannot run; the start failure says why.
    if (token) {
      await check('me', async () => {
        const me = await okData<{ owner?: { id?: string }; token?: { lastUsedAt?: string | null } }>('GET', '/me');
        assert(me.owner?.id, 'no owner in /me');
        return `account ${me.owner.id}`;
      });

      let projects: { id: string }[] = [];
      await check('list', async () => {
        projects = await listOf<{ id: string }>('/projects');
        assert(projects.length > 0, 'the demo data has no project');
        return `${projects.length} project(s)`;
      });

      let documented = false;
      await check('openapi', async () => {
        const response = await fetch(`${origin}/api/public/openapi.json`);
        const doc = (await response.json()) as { openapi?: string; paths?: Record<string, Record<string, unknown>> };
        assert(
          response.status === 200 && doc.openapi?.startsWith('3.'),
          `GET /api/public/openapi.json → ${response.status}`,
        );
        assert(doc.paths?.['/me'], 'the document has no /me');
        // The write needs the edit and the lists that lead to a draft.
        documented = Boolean(doc.paths[DRAFT_PATH]?.patch && doc.paths[DRAFTS_PATH]?.get);
        return `${Object.keys(doc.paths).length} paths`;
      });

      await check('write', async () => {
        if (!documented) {
          // Until the drafts endpoints exist: the token's last-used time is the one write a request makes.
          const me = await okData<{ token?: { lastUsedAt?: string | null } }>('GET', '/me');
          const at = Date.parse(me.token?.lastUsedAt ?? '');
          assert(Math.abs(Date.now() - at) < 120_000, `token lastUsedAt not recorded: ${me.token?.lastUsedAt}`);
          return `PATCH ${DRAFT_PATH} or GET ${DRAFTS_PATH} not in the OpenAPI document yet; checked the token's lastUsedAt update instead`;
        }
        // A draft still being written (an approved one may refuse edits), else the first there is.
        const editable = new Set(['draft', 'changes_requested']);
        let target: { project: string; site: string; draft: string } | undefined;
        let fallback: typeof target;
        search: for (const project of projects) {
          for (const site of await listOf<{ id: string }>(`/projects/${project.id}/sites`)) {
            const drafts = await listOf<Draft>(`/projects/${project.id}/sites/${site.id}/drafts`);
            const found = drafts.find((d) => editable.has(d.status ?? ''));
            if (found) {
              target = { project: project.id, site: site.id, draft: found.id };
              break search;
            }
            if (!fallback && drafts[0]) fallback = { project: project.id, site: site.id, draft: drafts[0].id };
          }
        }
        target ??= fallback;
        assert(target, 'the demo data has no draft to edit');
        const base = `/projects/${target.project}/sites/${target.site}/drafts`;
        // The contract: subject 3–300 and body 20–10000 characters; the draft's text is in `message`.
        const edit = {
          subject: `Smoke test ${Date.now()}`,
          body: 'Written by test/smoke/smoke.ts to check that edits persist.',
        };
        const patched = await okData<Draft>('PATCH', `${base}/${target.draft}`, edit);
        assert(
          patched.message?.subject === edit.subject && patched.message.body === edit.body,
          `PATCH answered ${JSON.stringify(patched).slice(0, 200)}`,
        );
        const reread = (await listOf<Draft>(base)).find((d) => d.id === target.draft);
        assert(reread?.message?.subject === edit.subject, 'the edit is not in the drafts list afterwards');
        return `PATCH ${base}/${target.draft}`;
      });
    }

    if (token) {
      await check('operator', async () => {
        const ready = await fetch(`${origin}/readyz`);
        assert(ready.status === 200, `GET /readyz → ${ready.status} ${await ready.text()}`);
        const metrics = await (await fetch(`${origin}/metrics`)).text();
        assert(
          /^http_requests_total\{method="GET",route="\/api\/public\/v1\/me",status="200"\} \d+$/m.test(metrics),
          'no /me count in /metrics',
        );
        assert(/^process_cpu_user_seconds_total /m.test(metrics), 'no process metrics in /metrics');
        const page = await fetch(`${origin}/api/public/docs`);
        assert(
          page.status === 200 && (await page.text()).includes('swagger-ui-bundle.js'),
          `GET /api/public/docs → ${page.status}`,
        );
        const bundle = await fetch(`${origin}/api/public/docs/swagger-ui-bundle.js`);
        const size = (await bundle.arrayBuffer()).byteLength;
        assert(bundle.status === 200 && size > 500_000, `the reference page's script: ${bundle.status}, ${size} bytes`);
        const line = output
          .split('\n')
          .find((l) => l.startsWith('{') && l.includes('"msg":"request"') && l.includes('"route":"/readyz"'));
        assert(line && JSON.parse(line).status === 200, 'no access log line for /readyz on stdout');
        return 'readyz, metrics, reference page assets, access log';
      });

      // The settings area (decisions.md §18): the sign-in serve --demo prints, a session, the page
      // and its two files from inside the build (hono/jsx, scrypt, the embedded assets).
      await check('settings', async () => {
        const pattern = /API access in a browser: (\S+) \(email (\S+), password (\S+)\)/;
        const until = performance.now() + 10_000;
        while (!pattern.test(output) && running && performance.now() < until) await sleep(10);
        const [, url, email, password] = pattern.exec(output) ?? [];
        assert(url && email && password, `serve --demo printed no sign-in line:\n${output}`);
        const form = await fetch(url);
        assert(form.status === 200 && (await form.text()).includes('>Sign in</button>'), `GET ${url} → ${form.status}`);
        for (const [name, least] of [
          ['settings.css', 1000],
          ['copy.js', 200],
        ] as const) {
          const asset = await fetch(`${origin}/settings/assets/${name}`);
          const size = (await asset.arrayBuffer()).byteLength;
          assert(asset.status === 200 && size >= least, `/settings/assets/${name}: ${asset.status}, ${size} bytes`);
        }
        const signedIn = await fetch(url, {
          method: 'POST',
          redirect: 'manual',
          headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ email, password }).toString(),
        });
        const cookie = signedIn.headers.get('set-cookie')?.split(';')[0];
        assert(signedIn.status === 303 && cookie?.startsWith('outreach_session='), `sign-in → ${signedIn.status}`);
        const page = await fetch(`${origin}/settings/api-access`, { headers: { cookie: cookie! } });
        const html = await page.text();
        assert(
          page.status === 200 && /\d+ of 10 active tokens/.test(html),
          `GET /settings/api-access → ${page.status}`,
        );
        return `signed in as ${email}; API access page, stylesheet and script served`;
      });

      await check('backup', async () => {
        const copy = join(work, 'backup.db');
        const backup = spawn(launch.command, [...launch.args, 'backup', copy, '--db', join(work, 'smoke.db')], {
          cwd: launch.cwd,
          env: launch.env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let said = '';
        backup.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
        backup.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
        const code = await new Promise<number | null>((done) => backup.once('close', done));
        assert(code === 0 && statSync(copy).size > 0, `backup exited ${code}: ${said}`);
        return said.trim();
      });

      // The monitor's parsers (htmlparser2, robots-parser) inside the build: one page that links
      // to the target, one path robots.txt disallows (decisions.md §13).
      await check('backlink monitor', async () => {
        const page = createServer((req, res) => {
          if (req.url === '/robots.txt')
            res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
          else
            res
              .writeHead(200, { 'content-type': 'text/html' })
              .end('<p><a href="http://www.acme.test/guide/?utm_source=x" rel="UGC">the &amp; guide</a></p>');
        });
        await new Promise<void>((done) => page.listen(0, '127.0.0.1', done));
        const source = `http://127.0.0.1:${(page.address() as { port: number }).port}`;
        const at = '2026-01-01T00:00:00.000Z';
        const stamp = { createdAt: at, updatedAt: at };
        const doc = join(work, 'monitor.json');
        writeFileSync(
          doc,
          JSON.stringify({
            accounts: [
              {
                id: 'acct_s',
                email: 's@acme.test',
                name: 'S',
                plan: 'pro',
                planExpiresAt: '2099-01-01T00:00:00.000Z',
                ...stamp,
              },
            ],
            projects: [{ id: 'prj_s', accountId: 'acct_s', name: 'S', ...stamp }],
            sites: [
              {
                id: 'site_s',
                projectId: 'prj_s',
                name: 'S',
                domain: 'acme.test',
                url: 'https://acme.test/',
                status: 'active',
                ...stamp,
              },
            ],
            backlinks: ['/post', '/private/post'].map((path, i) => ({
              id: `bl_s${i}`,
              siteId: 'site_s',
              source: 'outreach',
              acquisitionOrigin: 'unknown',
              sourceUrl: `${source}${path}`,
              targetUrl: 'https://acme.test/guide',
              category: 'resource_page',
              status: 'pending',
              ...stamp,
              checks: [],
            })),
          }),
        );
        const run = async (args: string[]) => {
          const env = {
            ...launch.env,
            OUTREACH_API_MONITOR_ALLOW_PRIVATE_NETWORKS: 'true',
            OUTREACH_API_MONITOR_PER_HOST_DELAY_MS: '0',
          };
          const cli = spawn(launch.command, [...launch.args, ...args, '--db', join(work, 'monitor.db')], {
            cwd: launch.cwd,
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let said = '';
          cli.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
          cli.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
          const code = await new Promise<number | null>((done) => cli.once('close', done));
          assert(code === 0, `${args.join(' ')} exited ${code}: ${said}`);
          return said;
        };
        try {
          await run(['import', doc]);
          const said = await run(['backlinks', 'check', '--all']);
          assert(/^live +1$/m.test(said) && /^blocked +1$/m.test(said), `backlinks check: ${said}`);
          return 'one backlink live, one blocked by robots.txt';
        } finally {
          page.close();
        }
      });
    }

    if (token && launch.tmp) {
      await check('native cache', async () => {
        const root = join(launch.tmp!, `outreach-api-${process.getuid?.() ?? 'user'}`);
        const [leaf] = readdirSync(root);
        assert(leaf, `nothing cached under ${root}`);
        const file = join(root, leaf, 'better_sqlite3.node');
        const dirMode = statSync(join(root, leaf)).mode & 0o777;
        const fileMode = statSync(file).mode & 0o777;
        assert(
          dirMode === 0o700 && fileMode === 0o500,
          `modes ${dirMode.toString(8)} / ${fileMode.toString(8)}, want 700 / 500`,
        );
        return `${file.slice(launch.tmp!.length + 1)} (HOME unwritable)`;
      });
    }
  } finally {
    if (running) {
      await check('stop', async () => {
        const code = await stop(child, exited);
        assert(code === 0 || code === null, `exit code ${code}`);
      });
    } else record('stop', false, `the server had exited:\n${output}`);
    rmSync(work, { recursive: true, force: true });
  }

  const failed = results.filter((r) => !r.ok).length;
  process.stdout.write(`smoke: ${results.length - failed} passed, ${failed} failed\n`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`smoke: ${(error as Error).message}\n`);
    process.stdout.write('smoke: 0 passed, 1 failed\n');
    process.exit(1);
  },
);
