/**
 * The npm packages as a user's project gets them (issue #29 item 1): the tarballs `npm run pack`
 * wrote to dist/npm/, installed into empty projects outside the checkout, with an npm cache of
 * their own and `--offline` (nothing comes from a registry: the main package depends on nothing,
 * its platform package is pointed at its tarball by `overrides`, as the registry would serve it).
 * Run after `npm run pack` (part of `npm run test:dist`):
 *
 *   node --import tsx --test test/smoke/npm-install.ts
 *
 * - `npm install` of the main tarball adds it and this platform's package, nothing else; `npm ci`
 *   from the lockfile it wrote does the same in a second project. Both print the packages added
 *   and the time taken.
 * - `npx outreach-api serve --demo --fixture --port 0 --ready-file …` from a directory below the
 *   project runs the platform's executable (no Node, no tsx), `/me` answers with the ready
 *   file's token, and a SIGTERM to npx stops the server.
 * - Installed without optional packages, the launcher says in one line which platforms have an
 *   executable and to `npm i better-sqlite3`; with better-sqlite3 beside it, the bundle runs
 *   under this Node and serves.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PLATFORMS, packageOf } from '../../bin/platform.cjs';
import { ROOT } from '../../build/bundle.js';
import { NPM_DIR } from '../../build/pack.js';
import { until } from '../helpers/ports.js';
import { readyFileOf, running, type Watched, watch } from '../helpers/processes.js';

/** What the ready file holds, with --demo and --fixture. */
interface Ready {
  url: string;
  apiUrl: string;
  adminUrl: string;
  pid: number;
  token: string;
}

const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const MAIN = join(NPM_DIR, `outreach-api-${version}.tgz`);
/** This platform's package and tarball. */
const HOST = `${process.platform}-${process.arch}`;
const PLATFORM_TARBALL = join(NPM_DIR, `outreach-api-${HOST}-${version}.tgz`);

const dir = mkdtempSync(join(tmpdir(), 'outreach-npm-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The environment npm runs in: this one without the `npm_*` variables of the `npm run` that
 * started the test, with a cache of its own and no registry, audit, funding or update check.
 */
const ENV: Record<string, string> = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))),
  npm_config_cache: join(dir, 'npm-cache'),
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
} as Record<string, string>;

/** Runs `npm ARGS` in `cwd`; resolves with its output and how long it took, ms. @throws when it fails. */
function npm(args: string[], cwd: string): Promise<{ output: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) =>
    execFile('npm', args, { cwd, env: ENV }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`npm ${args.join(' ')} failed: ${stdout}${stderr}`))
        : resolve({ output: stdout + stderr, ms: performance.now() - started }),
    ),
  );
}

/** A new project `name` with the platform packages' tarballs as `overrides`, and nothing else. */
function project(name: string): string {
  const path = join(dir, name);
  mkdirSync(path);
  const overrides = Object.fromEntries(
    Object.keys(PLATFORMS)
      .map((key) => [packageOf(key), join(NPM_DIR, `outreach-api-${key}-${version}.tgz`)])
      .filter(([, tarball]) => existsSync(tarball!))
      .map(([name, tarball]) => [name, `file:${tarball}`]),
  );
  writeFileSync(join(path, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, overrides }));
  return path;
}

/** The count in npm's `added N packages` line. */
const added = (output: string): number => Number(/added (\d+) packages?/.exec(output)?.[1] ?? Number.NaN);

/** `npx outreach-api ARGS` in `cwd`. */
const npx = (args: string[], cwd: string): Watched =>
  watch(spawn('npx', ['outreach-api', ...args], { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] }));

describe('the npm packages, installed from their tarballs', () => {
  let installed: string;

  before(() => {
    for (const tarball of [MAIN, PLATFORM_TARBALL])
      assert.ok(existsSync(tarball), `no ${tarball}: run npm run pack first (npm run test:dist does)`);
  });

  it("adds the package and this platform's, nothing else; npm ci from its lockfile the same", async (t) => {
    const first = project('first');
    const install = await npm(['install', MAIN], first);
    assert.equal(added(install.output), 2, install.output);
    assert.doesNotMatch(install.output, /npm warn/i);
    t.diagnostic(
      `npm install ${MAIN.slice(ROOT.length + 1)}: ${added(install.output)} packages in ${install.ms.toFixed(0)} ms`,
    );
    installed = project('second');
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(first, file), join(installed, file));
    const ci = await npm(['ci'], installed);
    assert.equal(added(ci.output), 2, ci.output);
    t.diagnostic(`npm ci from that lockfile: ${added(ci.output)} packages in ${ci.ms.toFixed(0)} ms`);
    const listed = (await npm(['ls', '--all', '--parseable'], installed)).output.trim().split('\n');
    assert.deepEqual(listed.map((path) => relative(installed, path)).sort(), [
      '',
      `node_modules/${packageOf(HOST)}`,
      'node_modules/outreach-api',
    ]);
  });

  it('holds the licence, and every file of the checkout its README links to', () => {
    const packageDir = join(installed, 'node_modules/outreach-api');
    const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
    const linked = [...readme.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)]
      .map((m) => m[1]!)
      .filter((to) => !/^[a-z]+:/i.test(to));
    assert.ok(linked.includes('docs/operating.md'), 'the README links to docs/operating.md');
    const missing = linked.filter((to) => !existsSync(join(packageDir, to)));
    assert.deepEqual(missing, [], 'every file the README links to is in the package');
    assert.match(readFileSync(join(packageDir, 'LICENSE'), 'utf8'), /^MIT License/);
    assert.match(readFileSync(join(installed, `node_modules/${packageOf(HOST)}/LICENSE`), 'utf8'), /^MIT License/);
  });

  it('npx outreach-api serve --demo --fixture --port 0 from another directory: the executable serves /me', async (t) => {
    const cwd = join(installed, 'tests/fixture');
    mkdirSync(cwd, { recursive: true });
    const readyFile = join(dir, 'ready.json');
    const started = performance.now();
    const server = npx(['serve', '--demo', '--fixture', '--port', '0', '--ready-file', readyFile], cwd);
    try {
      const ready = await readyFileOf<Ready>(readyFile, server, 60_000);
      assert.equal((await fetch(`${ready.url}/readyz`)).status, 200);
      t.diagnostic(
        `npx outreach-api serve --demo --fixture --port 0: ready in ${(performance.now() - started).toFixed(0)} ms`,
      );
      // The platform's executable serves, started by the launcher: no Node, no tsx.
      assert.equal(
        readlinkSync(`/proc/${ready.pid}/exe`),
        realpathSync(join(installed, 'node_modules', packageOf(HOST), 'bin/outreach-api')),
      );
      const me = await fetch(`${ready.apiUrl}/me`, { headers: { authorization: `Bearer ${ready.token}` } });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { ok: boolean }).ok, true);
      assert.equal((await fetch(`${ready.adminUrl}/requests`)).status, 200);
      assert.ok(existsSync(join(cwd, 'data/outreach.db')), 'its database in the working directory');
      // SIGTERM to npx: npm's shell dies of it without passing it on; the launcher stops the server.
      server.child.kill('SIGTERM');
      await until(() => !running(ready.pid), 'the server to stop after SIGTERM to npx', 5000);
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('without optional packages: one line naming the platforms and npm i better-sqlite3; with it, the bundle under Node serves', async () => {
    const bare = project('bare');
    const install = await npm(['install', '--omit=optional', MAIN], bare);
    assert.equal(added(install.output), 1, install.output);
    const refused = npx(['--version'], bare);
    assert.deepEqual(await refused.exit, { code: 1, signal: null });
    assert.match(
      refused.output(),
      new RegExp(
        `^outreach-api: the package ${packageOf(HOST)} is not installed .*linux-x64.*npm i better-sqlite3\\n$`,
      ),
    );
    // A macOS user's `npm i better-sqlite3`, here the checkout's own (no registry in this test).
    symlinkSync(join(ROOT, 'node_modules/better-sqlite3'), join(bare, 'node_modules/better-sqlite3'));
    const readyFile = join(dir, 'bare-ready.json');
    const server = npx(['serve', '--demo', '--db', ':memory:', '--port', '0', '--ready-file', readyFile], bare);
    try {
      const ready = await readyFileOf<Ready>(readyFile, server, 60_000);
      assert.equal(readlinkSync(`/proc/${ready.pid}/exe`), realpathSync(process.execPath));
      assert.match(
        readFileSync(`/proc/${ready.pid}/cmdline`, 'utf8'),
        /node_modules\/outreach-api\/dist\/outreach-api\.cjs/,
      );
      const me = await fetch(`${ready.apiUrl}/me`, { headers: { authorization: `Bearer ${ready.token}` } });
      assert.equal(me.status, 200);
    } finally {
      server.child.kill('SIGTERM');
      await server.exit;
    }
  });
});
