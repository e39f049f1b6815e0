/**
 * The npm package's launcher (bin/launcher.cjs) and the module that picks what it runs
 * (bin/platform.cjs), issue #29 item 1, as an installed package has them: copied into
 * `<tmp>/node_modules/outreach-api/bin/`, outside the checkout, so only what the test puts beside
 * them resolves. The installed tarballs themselves are tested by test/smoke/npm-install.ts.
 * - the choice: `OUTREACH_API_BINARY`, this platform's package, the bundle under Node when
 *   better-sqlite3 resolves, else one line naming the supported platforms and `npm i better-sqlite3`;
 * - the launcher passes on the exit code, SIGINT, SIGTERM and SIGHUP, dies of the signal that
 *   ended the program, stops the program when npm's shell above it dies, and refuses a missing or
 *   non-executable `OUTREACH_API_BINARY` in one line;
 * - `bin/outreach-api.js` (a source checkout's command) runs from any directory.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT } from '../../build/bundle.js';
import { VERSION } from '../../src/version.js';
import { until } from '../helpers/ports.js';
import { running, type Watched, watch } from '../helpers/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'outreach-launcher-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The package as installed: `<dir>/node_modules/outreach-api`, its bin/ copied from the checkout. */
const pkg = join(dir, 'node_modules/outreach-api');
mkdirSync(join(pkg, 'bin'), { recursive: true });
for (const file of ['launcher.cjs', 'platform.cjs']) copyFileSync(join(ROOT, 'bin', file), join(pkg, 'bin', file));
const LAUNCHER = join(pkg, 'bin/launcher.cjs');

type Choice = { command: string; args: string[]; via: string } | { error: string };
/** bin/platform.cjs's choice, asked in a fresh process (require caches what it resolved). */
function choice(options: { env?: Record<string, string>; platform?: string; arch?: string }): Promise<Choice> {
  const script = `process.stdout.write(JSON.stringify(require(${JSON.stringify(join(pkg, 'bin/platform.cjs'))}).serverCommand(${JSON.stringify(options)})))`;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script], (error, stdout) =>
      error ? reject(error) : resolve(JSON.parse(stdout)),
    ),
  );
}

/** Writes `text` to `file` (directories made), with `mode`. */
function put(file: string, text: string, mode = 0o644): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

describe('bin/platform.cjs', () => {
  it('names the supported platforms and npm i better-sqlite3 where nothing fits', async () => {
    const unknown = await choice({ platform: 'sunos', arch: 'x64', env: {} });
    assert.deepEqual(unknown, {
      error:
        'there is no executable for sunos-x64; there are executables for linux-x64 (glibc), linux-arm64 (glibc) only; to run it under Node instead, install the SQLite driver beside it: npm i better-sqlite3',
    });
    const missing = await choice({ platform: 'linux', arch: 'x64', env: {} });
    assert.match(
      (missing as { error: string }).error,
      /^the package @outreach-api\/linux-x64 is not installed \(an install with --omit=optional, or a C library other than glibc\); there are executables for linux-x64 \(glibc\), linux-arm64 \(glibc\) only; .*npm i better-sqlite3$/,
    );
  });

  it("takes this platform's package, then the bundle where better-sqlite3 resolves, and OUTREACH_API_BINARY before both", async () => {
    const executable = join(dir, 'node_modules/@outreach-api/linux-x64/bin/outreach-api');
    put(executable, '#!/bin/sh\n', 0o644);
    assert.match(
      ((await choice({ platform: 'linux', arch: 'x64', env: {} })) as { error: string }).error,
      /bin\/outreach-api is not executable; reinstall @outreach-api\/linux-x64$/,
    );
    chmodSync(executable, 0o755);
    assert.deepEqual(await choice({ platform: 'linux', arch: 'x64', env: {} }), {
      command: executable,
      args: [],
      via: 'platform',
    });
    // Elsewhere, the bundle under this Node, once the SQLite driver is installed beside it.
    const bundle = put(join(pkg, 'dist/outreach-api.cjs'), '');
    assert.ok('error' in (await choice({ platform: 'darwin', arch: 'arm64', env: {} })));
    put(join(dir, 'node_modules/better-sqlite3/package.json'), '{"name":"better-sqlite3"}');
    assert.deepEqual(await choice({ platform: 'darwin', arch: 'arm64', env: {} }), {
      command: process.execPath,
      args: [bundle],
      via: 'bundle',
    });
    // OUTREACH_API_BINARY first: an executable as it is, a script under this Node.
    const script = put(join(dir, 'other.cjs'), '');
    assert.deepEqual(await choice({ env: { OUTREACH_API_BINARY: executable } }), {
      command: executable,
      args: [],
      via: 'variable',
    });
    assert.deepEqual(await choice({ env: { OUTREACH_API_BINARY: script } }), {
      command: process.execPath,
      args: [script],
      via: 'variable',
    });
  });
});

/** Runs the launcher with `args`, `env` added to this process's environment. */
function launch(args: string[], env: Record<string, string>, options: { shell?: boolean } = {}): Watched {
  const child = options.shell
    ? spawn('sh', ['-c', `"${process.execPath}" "${LAUNCHER}" "$@"; echo "launcher ended $?"`, 'sh', ...args], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, [LAUNCHER, ...args], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  return watch(child);
}

/** Ends the program a launcher started, if it still runs (its pid in `pidFile`). */
function endProgram(pidFile: string): void {
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
  } catch {
    // Gone already, or never started.
  }
}

/** `exit`, or a rejection after `ms`. */
const within = <T>(exit: Promise<T>, ms: number): Promise<T> =>
  Promise.race([
    exit,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not ended after ${ms} ms`)), ms)),
  ]);

/**
 * A program that says `ready`, exits with `code` on SIGINT/SIGTERM/SIGHUP (2, 15, 1 plus 100),
 * with its arguments' first number at once if given, and writes its pid to `pidFile` if given.
 */
const PROGRAM = put(
  join(dir, 'program.cjs'),
  `const [first, pidFile] = process.argv.slice(2);
   if (pidFile) require('node:fs').writeFileSync(pidFile, String(process.pid));
   if (first === 'die') process.kill(process.pid, 'SIGTERM');
   else if (first !== undefined && first !== '-') process.exit(Number(first));
   for (const [signal, code] of [['SIGINT', 102], ['SIGTERM', 115], ['SIGHUP', 101]])
     process.on(signal, () => process.exit(code));
   setInterval(() => {}, 1000);
   process.stdout.write('ready\\n');`,
);

describe('bin/launcher.cjs', () => {
  it("passes on the program's exit code, and dies of the signal that ended it", async () => {
    assert.deepEqual(await launch(['7'], { OUTREACH_API_BINARY: PROGRAM }).exit, { code: 7, signal: null });
    assert.deepEqual(await launch(['die'], { OUTREACH_API_BINARY: PROGRAM }).exit, { code: null, signal: 'SIGTERM' });
  });

  it('passes SIGINT, SIGTERM and SIGHUP on', async () => {
    for (const [signal, code] of [
      ['SIGINT', 102],
      ['SIGTERM', 115],
      ['SIGHUP', 101],
    ] as const) {
      const pidFile = join(dir, `${signal}.pid`);
      const launched = launch(['-', pidFile], { OUTREACH_API_BINARY: PROGRAM });
      try {
        await until(() => launched.output().includes('ready'), 'the program');
        launched.child.kill(signal);
        assert.deepEqual(await within(launched.exit, 5000), { code, signal: null }, signal);
      } finally {
        endProgram(pidFile);
      }
    }
  });

  it("run by npm, stops the program when npm's shell above it dies", async () => {
    const pidFile = join(dir, 'program.pid');
    const launched = launch(['-', pidFile], { OUTREACH_API_BINARY: PROGRAM, npm_command: 'exec' }, { shell: true });
    await until(() => existsSync(pidFile) && launched.output().includes('ready'), 'the program');
    const program = Number(readFileSync(pidFile, 'utf8'));
    try {
      launched.child.kill('SIGKILL'); // the shell: as npm's sh dies of the SIGTERM sent to npx
      await until(() => !running(program), 'the program to stop', 3000);
    } finally {
      endProgram(pidFile);
    }
  });

  it('refuses a missing or non-executable OUTREACH_API_BINARY in one line, exit 1', async () => {
    const plain = put(join(dir, 'plain'), '#!/bin/sh\n', 0o644);
    for (const [binary, reason] of [
      [join(dir, 'none'), 'does not exist'],
      [plain, 'is not executable'],
      [dir, 'is not a file'],
    ]) {
      const launched = launch(['--version'], { OUTREACH_API_BINARY: binary! });
      assert.deepEqual(await launched.exit, { code: 1, signal: null });
      assert.equal(launched.output(), `outreach-api: OUTREACH_API_BINARY=${binary} ${reason}\n`);
    }
  });
});

describe('bin/outreach-api.js (a source checkout)', () => {
  it('runs from any directory, with its own tsconfig.json (the settings pages need its JSX source)', async () => {
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [join(ROOT, 'bin/outreach-api.js'), '--version'],
        { cwd: dir },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    assert.deepEqual(result, { code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });
});
