'use strict';
/**
 * Which program runs outreach-api in an installed npm package (issue #29): the one place that
 * decides it, for the launcher (bin/launcher.cjs, the package's `outreach-api` command) and for
 * `startFixture()` (`outreach-api/testing`), which starts the server itself so the pid it reports
 * is the server's. Dependency-free CommonJS, loaded from its own file (`__dirname` is the
 * package's bin/), never bundled.
 *
 * In order:
 * 1. `OUTREACH_API_BINARY`, when set: that executable (a `.js`/`.cjs`/`.mjs` file runs under
 *    this Node);
 * 2. the executable of this platform's package, `@outreach-api/<os>-<cpu>` (`PLATFORMS`), which
 *    npm installs from the main package's `optionalDependencies` only where its `os`, `cpu` and
 *    `libc` fit;
 * 3. the JavaScript bundle `dist/outreach-api.cjs` under this Node, when `better-sqlite3` (an
 *    optional peer dependency, `npm i better-sqlite3`) can be resolved from here;
 * 4. otherwise an error: one line naming the supported platforms and that command.
 */
const { accessSync, constants, statSync } = require('node:fs');
const { join } = require('node:path');

/**
 * The platforms with a package of their own: `<os>-<cpu>` → what its package.json says (`os`,
 * `cpu`, `libc`). `npm run pack` (build/pack.ts) writes one package per entry; the package's
 * name is `@outreach-api/<key>` and it holds the single executable at `bin/outreach-api`.
 * @type {Record<string, { os: string, cpu: string, libc?: 'glibc' | 'musl' }>}
 */
const PLATFORMS = {
  'linux-x64': { os: 'linux', cpu: 'x64', libc: 'glibc' },
  // Cross-built on x64 (build/arm64.ts, dist/linux-arm64/outreach-api), smoked under qemu (npm run test:arm64).
  'linux-arm64': { os: 'linux', cpu: 'arm64', libc: 'glibc' },
};

/** The environment variable that names another executable. */
const BINARY_VARIABLE = 'OUTREACH_API_BINARY';

/** Where a platform package keeps the executable. */
const EXECUTABLE = 'bin/outreach-api';

/** @param {string} key */
const packageOf = (key) => `@outreach-api/${key}`;

/**
 * Why `file` cannot be run, or null when it can: it must be a file, and executable unless it is
 * a script (`.js`, `.cjs`, `.mjs`), which runs under this Node.
 * @param {string} file
 * @returns {string | null}
 */
function notRunnable(file) {
  let stat;
  try {
    stat = statSync(file);
  } catch {
    return 'does not exist';
  }
  if (!stat.isFile()) return 'is not a file';
  if (isScript(file)) return null;
  try {
    accessSync(file, constants.X_OK);
  } catch {
    return 'is not executable';
  }
  return null;
}

/** @param {string} file */
const isScript = (file) => /\.[cm]?js$/.test(file);

/**
 * `file` as a command: a script under this Node, anything else itself.
 * @param {string} file
 * @param {'variable' | 'platform' | 'bundle'} via
 */
const commandOf = (file, via) =>
  isScript(file) ? { command: process.execPath, args: [file], via } : { command: file, args: [], via };

/**
 * The program that runs outreach-api here: spawn `command` with `args` followed by the
 * command line (its own arguments), or report `error`, one line without the `outreach-api: `
 * prefix. Never throws.
 * @param {{ env?: Record<string, string | undefined>, platform?: string, arch?: string }} [options]
 *   the environment and the platform to decide for (default: this process's).
 * @returns {{ command: string, args: string[], via: 'variable' | 'platform' | 'bundle' } | { error: string }}
 */
function serverCommand(options = {}) {
  const env = options.env ?? process.env;
  const key = `${options.platform ?? process.platform}-${options.arch ?? process.arch}`;
  const override = env[BINARY_VARIABLE];
  if (override) {
    const problem = notRunnable(override);
    return problem ? { error: `${BINARY_VARIABLE}=${override} ${problem}` } : commandOf(override, 'variable');
  }
  const platform = PLATFORMS[key];
  let executable;
  if (platform) {
    try {
      executable = require.resolve(`${packageOf(key)}/${EXECUTABLE}`);
    } catch {
      // Not installed: --omit=optional, or npm found that its libc does not fit.
    }
  }
  if (executable) {
    const problem = notRunnable(executable);
    return problem
      ? { error: `${executable} ${problem}; reinstall ${packageOf(key)}` }
      : commandOf(executable, 'platform');
  }
  const bundle = join(__dirname, '..', 'dist', 'outreach-api.cjs');
  try {
    require.resolve('better-sqlite3/package.json');
    if (!notRunnable(bundle)) return commandOf(bundle, 'bundle');
  } catch {
    // No SQLite driver for the bundle.
  }
  const supported = Object.entries(PLATFORMS)
    .map(([name, { libc }]) => (libc ? `${name} (${libc})` : name))
    .join(', ');
  const reason = platform
    ? `the package ${packageOf(key)} is not installed (an install with --omit=optional, or a C library other than ${platform.libc})`
    : `there is no executable for ${key}`;
  return {
    error: `${reason}; there are executables for ${supported} only; to run it under Node instead, install the SQLite driver beside it: npm i better-sqlite3`,
  };
}

module.exports = { PLATFORMS, BINARY_VARIABLE, EXECUTABLE, packageOf, serverCommand };
