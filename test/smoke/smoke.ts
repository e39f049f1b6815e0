/**
 * End-to-end smoke test of a built or ported server, one pass per store. Builds nothing:
 * `npm run build` first for the executable.
 *
 * - SQLite: `serve --demo` on a fresh file; the first answered request, a read, a list, a write,
 *   the OpenAPI document, the operator endpoints and the settings area; then `backup`, the
 *   backlink monitor (`import`, `backlinks check`) and, for the executable, its cached addon.
 * - PostgreSQL (decisions.md §16): in a database of its own, created and dropped here: `migrate`,
 *   the same checks on `serve --demo --db postgres://…` with the limiter in Redis, then the
 *   `accounts`/`tokens` CLI beside the running server, the limit held in Redis, a revocation and
 *   `backup`'s refusal. Skipped in one line when no PostgreSQL answers at `OUTREACH_TEST_PG_URL`
 *   (its Redis part when none answers at `OUTREACH_TEST_REDIS_URL`); under `CI` either is a
 *   failure (test/helpers/services.ts `serviceSkip`).
 *
 *   node --import tsx test/smoke/smoke.ts --exe dist/outreach-api
 *     copies the executable alone into an empty temp directory and runs it from there with
 *     PATH holding no node, HOME unwritable (the SQLite addon must go to TMPDIR), no other env
 *     and no node_modules anywhere above it: the drivers (pg, ioredis) must be inside it;
 *   node --import tsx test/smoke/smoke.ts --exe dist/linux-arm64/outreach-api --via qemu-aarch64-static -L /usr/aarch64-linux-gnu
 *     the same, with the executable run by the command after `--via` (another arch's emulator;
 *     `npm run test:arm64`, test/smoke/arm64.ts);
 *   node --import tsx test/smoke/smoke.ts -- deno run --allow-all src/main.ts
 *     runs the given command line from the current directory (the checkout).
 *
 * Prints one line per check and `smoke: N passed, M failed (sqlite S s, postgres P s)`, the time
 * of each pass; exits 1 on any failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, delimiter, join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, sleep } from '../helpers/ports.js';
import { REDIS_URL, createTestDatabase, redisKeyPrefix, serviceSkip } from '../helpers/services.js';

const START_TIMEOUT_MS = 60_000;
/** How long a server may take to exit after SIGTERM, ms. */
const STOP_TIMEOUT_MS = 5000;
/** The timeouts' factor under an emulator (`--via`): qemu runs arm64's Node several times slower. */
const EMULATED_PATIENCE = 4;
const DRAFTS_PATH = '/projects/{projectId}/sites/{siteId}/drafts';
const DRAFT_PATH = `${DRAFTS_PATH}/{draftId}`;

interface Launch {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Set for the executable: where its SQLite addon must be cached. */
  tmp?: string;
  /** The factor of the start and stop timeouts (1, or EMULATED_PATIENCE under an emulator). */
  patience: number;
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

/** `command` as an absolute path, looked up on this process's PATH (the server's PATH is empty). */
function onPath(command: string): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  throw new Error(`${command} is not on PATH`);
}

/** Parses `--exe PATH [--via WRAPPER ARGS…]` or `-- COMMAND ARGS…` into how to start the server. */
function launchFrom(argv: string[], work: string): Launch {
  if (argv[0] === '--exe' && argv[1]) {
    const bin = join(work, 'bin');
    const run = join(work, 'run');
    const home = join(work, 'home');
    const tmp = join(work, 'tmp');
    for (const dir of [bin, run, home, tmp]) mkdirSync(dir);
    // `npm run build` on Windows writes dist/outreach-api.exe.
    const source = process.platform === 'win32' && !existsSync(argv[1]) ? `${argv[1]}.exe` : argv[1];
    const exe = join(bin, basename(source));
    copyFileSync(resolve(source), exe);
    chmodSync(exe, 0o755);
    chmodSync(home, 0o555);
    // root writes through 0555; nobody can create anything in /proc.
    const unwritableHome = process.getuid?.() === 0 ? '/proc' : home;
    // Another arch's executable runs through its emulator: `--via qemu-aarch64-static -L /usr/aarch64-linux-gnu`.
    const via = argv[2] === '--via' ? argv.slice(3) : [];
    return {
      command: via.length ? onPath(via[0]!) : exe,
      args: via.length ? [...via.slice(1), exe] : [],
      cwd: run,
      env: {
        PATH: join(work, 'empty-path'),
        HOME: unwritableHome,
        TMPDIR: tmp,
        // Windows finds the home and temp directories through these, and its sockets need SystemRoot.
        ...(process.platform === 'win32'
          ? { USERPROFILE: home, TEMP: tmp, TMP: tmp, SystemRoot: process.env.SystemRoot }
          : {}),
      },
      tmp,
      patience: via.length ? EMULATED_PATIENCE : 1,
    };
  }
  const dash = argv.indexOf('--');
  const commandLine = dash >= 0 ? argv.slice(dash + 1) : [];
  if (commandLine.length === 0)
    throw new Error('usage: smoke.ts --exe PATH [--via WRAPPER ARGS…] | smoke.ts -- COMMAND [ARGS…]');
  return {
    command: commandLine[0]!,
    args: commandLine.slice(1),
    cwd: process.cwd(),
    env: process.env,
    patience: 1,
  };
}

/** Stops the server's whole process group (npx and the like spawn children); waits for exit. */
async function stop(child: ChildProcess, exited: Promise<number | null>, timeoutMs: number): Promise<number | null> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      // Windows has no process groups (nor signals: kill ends the process).
      if (process.platform === 'win32') child.kill(sig);
      else process.kill(-child.pid!, sig);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  const code = await Promise.race([exited, sleep(timeoutMs).then(() => 'timeout' as const)]);
  if (code !== 'timeout') return code;
  signal('SIGKILL');
  await exited;
  throw new Error(`did not stop within ${timeoutMs / 1000} s of SIGTERM`);
}

/** A server started for one pass, and what it printed so far. */
interface Served {
  origin: string;
  api: string;
  output(): string;
  running(): boolean;
  child: ChildProcess;
  exited: Promise<number | null>;
  started: number;
  /** From the launch's patience. */
  startTimeoutMs: number;
  stopTimeoutMs: number;
}

/** Starts `serve --demo --port <free> --db <db>` with `env` added; does not wait for it. */
async function startServe(launch: Launch, db: string, env: NodeJS.ProcessEnv): Promise<Served> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = [...launch.args, 'serve', '--demo', '--port', String(port), '--db', db];
  process.stdout.write(`smoke: ${[launch.command, ...args].join(' ')}\n`);
  const started = performance.now();
  const child = spawn(launch.command, args, {
    cwd: launch.cwd,
    env: { ...launch.env, ...env },
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
  return {
    origin,
    api: `${origin}/api/public/v1`,
    output: () => output,
    running: () => running,
    child,
    exited,
    started,
    startTimeoutMs: START_TIMEOUT_MS * launch.patience,
    stopTimeoutMs: STOP_TIMEOUT_MS * launch.patience,
  };
}

/** Runs `outreach-api ARGS` to its end (a CLI command); `env` is added to the launch's. */
async function runCli(launch: Launch, args: string[], env: NodeJS.ProcessEnv = {}) {
  const cli = spawn(launch.command, [...launch.args, ...args], {
    cwd: launch.cwd,
    env: { ...launch.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  cli.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  cli.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => {
    cli.once('close', done);
    cli.once('error', (error) => {
      stderr += error.message;
      done(null);
    });
  });
  return { code, stdout, stderr, said: stdout + stderr };
}

/** Requests to the API of `server` with a bearer token. */
function apiClient(server: Served, token: () => string) {
  const call = async (method: string, path: string, body?: unknown, bearer = token()) => {
    const response = await fetch(`${server.api}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    let json: Envelope = {};
    try {
      json = JSON.parse(text) as Envelope;
    } catch {
      // Reported below through the status and `ok`.
    }
    return { status: response.status, headers: response.headers, json, text: text.slice(0, 300) };
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
  return { call, okData, listOf };
}

/**
 * The checks every store gets, against a `serve --demo` just started: the first answer and the
 * demo token, a read, a list, the OpenAPI document, a write, the operator endpoints and the
 * settings area. Resolves with the demo token ('' when the server never gave one).
 */
async function serveChecks(label: string, server: Served): Promise<string> {
  let token = '';
  const { okData, listOf } = apiClient(server, () => token);
  const { origin } = server;
  await check(`${label}: start`, async () => {
    for (;;) {
      assert(server.running(), `exited before answering:\n${server.output()}`);
      assert(
        performance.now() - server.started < server.startTimeoutMs,
        `no answer within ${server.startTimeoutMs} ms:\n${server.output()}`,
      );
      try {
        await fetch(`${server.api}/me`);
        break;
      } catch {
        await sleep(10);
      }
    }
    const answeredMs = performance.now() - server.started;
    const demoToken = /demo token[^:\n]*:\s*(\S+)/;
    while (
      !demoToken.test(server.output()) &&
      server.running() &&
      performance.now() - server.started < answeredMs + 5000
    )
      await sleep(10);
    token = demoToken.exec(server.output())?.[1] ?? '';
    assert(token, `answered, but printed no demo token:\n${server.output()}`);
    return `first answer after ${Math.round(answeredMs)} ms`;
  });
  // Without a token the other checks cannot run; the start failure says why.
  if (!token) return '';

  await check(`${label}: me`, async () => {
    const me = await okData<{ owner?: { id?: string } }>('GET', '/me');
    assert(me.owner?.id, 'no owner in /me');
    return `account ${me.owner.id}`;
  });

  let projects: { id: string }[] = [];
  await check(`${label}: list`, async () => {
    projects = await listOf<{ id: string }>('/projects');
    assert(projects.length > 0, 'the demo data has no project');
    return `${projects.length} project(s)`;
  });

  // Searches run on reader threads on SQLite (a worker that loads the store's addon, or node:sqlite
  // under Deno) and within the pool's share on PostgreSQL: short and long terms answer the same totals.
  await check(`${label}: search`, async () => {
    const totals: string[] = [];
    for (const term of ['e', 'ex', 'example']) {
      const page = await okData<{ data?: unknown[]; pagination?: { total?: number } }>(
        'GET',
        `/projects/${projects[0]!.id}/prospects?search=${term}&limit=1`,
      );
      assert(typeof page.pagination?.total === 'number', `search=${term}: no total`);
      totals.push(`${term}: ${page.pagination.total}`);
    }
    return totals.join(', ');
  });

  let documented = false;
  await check(`${label}: openapi`, async () => {
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

  await check(`${label}: write`, async () => {
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

  await check(`${label}: operator`, async () => {
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
    const line = server
      .output()
      .split('\n')
      .find((l) => l.startsWith('{') && l.includes('"msg":"request"') && l.includes('"route":"/readyz"'));
    assert(line && JSON.parse(line).status === 200, 'no access log line for /readyz on stdout');
    return 'readyz, metrics, reference page assets, access log';
  });

  // The settings area (decisions.md §18): the sign-in serve --demo prints, a session, the page
  // and its two files from inside the build (hono/jsx, scrypt, the embedded assets).
  await check(`${label}: settings`, async () => {
    const pattern = /API access in a browser: (\S+) \(email (\S+), password (\S+)\)/;
    const until = performance.now() + 10_000;
    while (!pattern.test(server.output()) && server.running() && performance.now() < until) await sleep(10);
    const [, url, email, password] = pattern.exec(server.output()) ?? [];
    assert(url && email && password, `serve --demo printed no sign-in line:\n${server.output()}`);
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
    assert(page.status === 200 && /\d+ of 10 active tokens/.test(html), `GET /settings/api-access → ${page.status}`);
    return `signed in as ${email}; API access page, stylesheet and script served`;
  });
  return token;
}

/** Stops a pass's server as a check of its own (a clean exit on SIGTERM). */
async function stopCheck(label: string, server: Served): Promise<void> {
  if (server.running()) {
    await check(`${label}: stop`, async () => {
      const code = await stop(server.child, server.exited, server.stopTimeoutMs);
      assert(code === 0 || code === null, `exit code ${code}`);
    });
  } else record(`${label}: stop`, false, `the server had exited:\n${server.output()}`);
}

/**
 * The SQLite pass: the shared checks on a fresh demo file, then `backup`, the backlink monitor's
 * parsers through `import` and `backlinks check`, and (the executable) its cached SQLite addon.
 */
async function sqlitePass(launch: Launch, work: string): Promise<void> {
  const label = 'sqlite';
  // Metrics on, to check the bundled prom-client; the access log goes to stdout.
  const server = await startServe(launch, join(work, 'smoke.db'), { OUTREACH_API_METRICS_ENABLED: 'true' });
  try {
    if (!(await serveChecks(label, server))) return;
    await check(`${label}: backup`, async () => {
      const copy = join(work, 'backup.db');
      const { code, said } = await runCli(launch, ['backup', copy, '--db', join(work, 'smoke.db')]);
      assert(code === 0 && statSync(copy).size > 0, `backup exited ${code}: ${said}`);
      return said.trim();
    });

    // The monitor's parsers (htmlparser2, robots-parser) inside the build: one page that links
    // to the target, one path robots.txt disallows (decisions.md §13).
    await check(`${label}: backlink monitor`, async () => {
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
      const env = { OUTREACH_API_MONITOR_ALLOW_PRIVATE_NETWORKS: 'true', OUTREACH_API_MONITOR_PER_HOST_DELAY_MS: '0' };
      const run = async (args: string[]) => {
        const { code, said } = await runCli(launch, [...args, '--db', join(work, 'monitor.db')], env);
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

    if (launch.tmp) {
      await check(`${label}: native cache`, async () => {
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
    await stopCheck(label, server);
  }
}

/**
 * The PostgreSQL pass (decisions.md §16), in a database of its own created and dropped here:
 * `migrate`, the shared checks on `serve --demo` with the limiter in Redis (`limits.store: redis`
 * under a key prefix of its own; the memory limiter, said in one line, when no Redis answers),
 * then what goes through `pg` and `ioredis` inside the build: `accounts create` and
 * `tokens create` from a second process while the server runs, the new token's exact limit in
 * Redis, its revocation refused by the server at once, and `backup`'s refusal naming `pg_dump`.
 * Skipped in one line when no PostgreSQL answers (a failure under `CI`: `serviceSkip`).
 */
async function postgresPass(launch: Launch): Promise<void> {
  const label = 'postgres';
  if (await serviceSkip('postgres')) return;
  const redis = !(await serviceSkip('redis'));
  const keyPrefix = redisKeyPrefix('smoke');
  const database = await createTestDatabase('smoke');
  const db = database.url;
  try {
    await check(`${label}: migrate`, async () => {
      const { code, said } = await runCli(launch, ['migrate', '--db', db]);
      assert(code === 0 && /applied migrations 1, 2/.test(said), `migrate exited ${code}: ${said}`);
      return said.trim();
    });
    const server = await startServe(launch, db, {
      OUTREACH_API_METRICS_ENABLED: 'true',
      ...(redis
        ? {
            OUTREACH_API_LIMITS_STORE: 'redis',
            OUTREACH_API_REDIS_URL: REDIS_URL,
            OUTREACH_API_REDIS_KEY_PREFIX: keyPrefix,
          }
        : {}),
    });
    try {
      if (!(await serveChecks(label, server))) return;
      const { call } = apiClient(server, () => '');
      let made: { account: string; token: string; tokenId: string } | undefined;
      await check(`${label}: accounts and tokens`, async () => {
        const account = await runCli(launch, [
          'accounts',
          'create',
          '--email',
          'smoke@example.test',
          '--name',
          'Smoke',
          '--db',
          db,
        ]);
        const accountId = account.stdout.trim();
        assert(account.code === 0 && /^acct_\S+$/.test(accountId), `accounts create: ${account.said}`);
        const listed = await runCli(launch, ['accounts', 'list', '--db', db]);
        assert(listed.code === 0 && listed.stdout.includes(accountId), `accounts list: ${listed.said}`);
        const created = await runCli(launch, [
          'tokens',
          'create',
          '--account',
          accountId,
          '--name',
          'smoke',
          '--scopes',
          'all',
          '--db',
          db,
        ]);
        const tokenId = /token (tok_\S+) created/.exec(created.stderr)?.[1];
        assert(created.code === 0 && tokenId, `tokens create: ${created.said}`);
        made = { account: accountId, token: created.stdout.trim(), tokenId };
        const me = await call('GET', '/me', undefined, made.token);
        const owner = (me.json.data as { owner?: { id?: string } } | undefined)?.owner?.id;
        assert(me.status === 200 && owner === accountId, `GET /me with the new token → ${me.status} ${me.text}`);
        return `${accountId} and ${tokenId}, made by the CLI, served by the running server`;
      });
      if (made && redis)
        await check(`${label}: limiter in Redis`, async () => {
          // The token's window is empty: its one request so far is counted, the rest up to the limit pass.
          let allowed = 1;
          let limit = Number.NaN;
          for (;;) {
            const response = await call('GET', '/me', undefined, made!.token);
            limit = Number(response.headers.get('x-ratelimit-limit'));
            if (response.status === 429) break;
            assert(response.status === 200, `GET /me → ${response.status} ${response.text}`);
            assert(++allowed <= limit, `more than X-RateLimit-Limit ${limit} requests allowed`);
          }
          assert(allowed === limit, `${allowed} requests allowed, X-RateLimit-Limit is ${limit}`);
          const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
          try {
            await client.connect();
            const logged = await client.zcard(`${keyPrefix}ratelimit:${made!.tokenId}`);
            assert(logged === limit, `Redis holds ${logged} requests of the token, want ${limit}`);
          } finally {
            client.disconnect();
          }
          return `${limit} allowed then 429, all ${limit} in Redis's window`;
        });
      if (made)
        await check(`${label}: tokens revoke`, async () => {
          const revoked = await runCli(launch, ['tokens', 'revoke', made!.tokenId, '--db', db]);
          assert(revoked.code === 0, `tokens revoke: ${revoked.said}`);
          const me = await call('GET', '/me', undefined, made!.token);
          assert(me.status === 401, `GET /me with the revoked token → ${me.status} ${me.text}`);
          return 'the next request is refused with 401';
        });
      await check(`${label}: backup refused`, async () => {
        const { code, said } = await runCli(launch, ['backup', 'copy.db', '--db', db]);
        assert(code !== 0 && said.includes('pg_dump'), `backup exited ${code}: ${said}`);
        return said.trim();
      });
    } finally {
      await stopCheck(label, server);
    }
  } finally {
    await database.drop();
  }
}

async function main(argv: string[]): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), 'outreach-smoke-'));
  const timings: string[] = [];
  try {
    const launch = launchFrom(argv, work);
    for (const [name, pass] of [
      ['sqlite', () => sqlitePass(launch, work)],
      ['postgres', () => postgresPass(launch)],
    ] as const) {
      const started = performance.now();
      const before = results.length;
      // A pass that throws outside its checks (a service missing under CI, its database refused) fails as one check.
      try {
        await pass();
      } catch (error) {
        record(`${name} pass`, false, (error as Error).message);
      }
      if (results.length > before) timings.push(`${name} ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok).length;
  process.stdout.write(`smoke: ${results.length - failed} passed, ${failed} failed (${timings.join(', ')})\n`);
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
