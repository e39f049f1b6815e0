/**
 * A fresh `npm ci` on the lowest Node the project supports is clean (issue #21 item 6): every
 * package in package-lock.json with an install script is reviewed in package.json's
 * `allowScripts` (true: it runs; false: it never does), no entry there is stale, and every locked
 * package's `engines.node` accepts the Node version `engines.node` names as the project's lowest
 * (npm warns `EBADENGINE` otherwise). `.ci/run` installs with `--strict-allow-scripts`, so an
 * unreviewed script fails CI; these checks say which entry is missing before an install does.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const readJson = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));

interface LockEntry {
  name?: string;
  version?: string;
  hasInstallScript?: boolean;
}

/** Name and version of every locked package that has an install script. */
function packagesWithInstallScripts(): { name: string; version: string }[] {
  const lock = readJson('package-lock.json') as { packages: Record<string, LockEntry> };
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.hasInstallScript)
    .map(([path, entry]) => ({
      name: entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
      version: entry.version ?? '?',
    }));
}

/** The package name an `allowScripts` key names (`pkg`, `pkg@1.2.3`, `@scope/pkg@^1`). */
const nameOfKey = (key: string) => key.slice(0, key.indexOf('@', 1) === -1 ? key.length : key.indexOf('@', 1));

describe('install', () => {
  const allowScripts = (readJson('package.json').allowScripts ?? {}) as Record<string, boolean>;

  it('reviews every install script in allowScripts', () => {
    const reviewed = new Set(Object.keys(allowScripts).map(nameOfKey));
    const unreviewed = packagesWithInstallScripts()
      .filter((p) => !reviewed.has(p.name))
      .map((p) => `${p.name}@${p.version}`);
    assert.deepEqual(unreviewed, [], 'add each to allowScripts (npm install-scripts approve|deny)');
  });

  it('has no allowScripts entry for a package without an install script', () => {
    const withScripts = new Set(packagesWithInstallScripts().map((p) => p.name));
    assert.deepEqual(
      Object.keys(allowScripts).filter((key) => !withScripts.has(nameOfKey(key))),
      [],
    );
  });

  it('runs only the scripts the project needs: better-sqlite3 and deno, never @scarf/scarf', () => {
    // better-sqlite3 builds its addon; deno links its binary in place of a node wrapper that would
    // not forward signals (test/cli/shutdown.test.ts signals node_modules/.bin/deno). esbuild's
    // only checks and swaps its binary (the build runs without it); @scarf/scarf is analytics.
    assert.deepEqual(
      Object.entries(allowScripts)
        .filter(([, allowed]) => allowed)
        .map(([key]) => nameOfKey(key))
        .sort(),
      ['better-sqlite3', 'deno'],
    );
    assert.equal(allowScripts['@scarf/scarf'], false);
    // An npm that runs every install script (npm 10, which Node 20 bundles; the Dockerfile's build
    // stage) still runs @scarf/scarf's: this setting is the one it reads to send nothing.
    assert.deepEqual(readJson('package.json').scarfSettings, { enabled: false });
  });

  it('locks only packages that accept the lowest Node in engines', () => {
    const range = (readJson('package.json').engines as { node: string }).node;
    const lowest = /^>=(\d+\.\d+\.\d+)$/.exec(range)?.[1];
    assert.ok(lowest, `engines.node is ${range}: state the lowest version as >=X.Y.Z`);
    // npm's own query evaluates each locked package's engines range (node-semver), lockfile only.
    const refusing = JSON.parse(
      execFileSync(
        'npm',
        ['query', '--package-lock-only', `:attr(engines, [node]):not(:semver(${lowest}, :attr(engines, [node])))`],
        { cwd: ROOT, encoding: 'utf8' },
      ),
    ) as { name: string; version: string; engines: { node: string } }[];
    assert.deepEqual(
      refusing.map((p) => `${p.name}@${p.version} wants node ${p.engines.node}`),
      [],
    );
  });
});
