/**
 * The CLI and server as one CommonJS file: esbuild bundles build/entry.ts with the SQL
 * migrations, the version, the native addon's hash and the settings area's stylesheet and script
 * defined in (the reference page's Swagger UI files go into the executable as SEA assets, build/sea.ts). `npm run build` turns it into the single executable; the unit tests that need a
 * real process run it under plain `node` (test/helpers/cli.ts): `--version` takes 0.35 s that way
 * against 1.5 s through `bin/outreach-api.js` and tsx.
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMigrationDir } from '../src/db/migrate.js';
import { readSettingsAssets } from '../src/web/assets.js';

/** The checkout's root directory. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** better-sqlite3's native addon in this checkout (embedded into the executable as a SEA asset). */
export const ADDON = join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');

export interface BundleReport {
  /** Migrations defined into the bundle (SQLite and PostgreSQL together). */
  migrations: number;
  /** The bundle's size in bytes. */
  bytes: number;
}

/**
 * Writes the bundle to `outfile`, which must lie inside this checkout: run under plain `node`, the
 * bundle resolves better-sqlite3's addon from the `node_modules` above it (build/entry.ts).
 * `minify` shortens names (the executable); leave it off for readable stacks and profiles.
 * `addon` is the addon the executable will embed (another platform's for build/arm64.ts): its hash
 * names the directory the executable caches it in. Throws when esbuild reports an error.
 */
export async function bundleCli(outfile: string, minify: boolean, addon = ADDON): Promise<BundleReport> {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const nativeHash = createHash('sha256').update(readFileSync(addon)).digest('hex').slice(0, 16);
  const migrations = {
    sqlite: readMigrationDir(join(ROOT, 'sql/sqlite')),
    postgres: readMigrationDir(join(ROOT, 'sql/postgres')),
  };
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['build/entry.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify,
    legalComments: 'none',
    // The drivers of PostgreSQL (pg) and Redis (ioredis) are plain JavaScript and go into the bundle,
    // so the executable needs no node_modules (the smoke test's PostgreSQL pass runs it from an empty
    // directory). pg's two optional pieces stay out: pg-native (libpq bindings, a native addon; pg
    // loads it only when `pg.native` is read, in a try/catch, and the store never reads it) is left a
    // runtime require that nothing reaches, even where it is installed; pg-cloudflare resolves to its
    // empty default export (its socket code is behind the `workerd` condition, which is not set).
    external: ['pg-native'],
    // The settings area's pages (src/web/*.tsx) use Hono's JSX, as tsconfig.json and deno.json say.
    jsx: 'automatic',
    jsxImportSource: 'hono/jsx',
    logLevel: 'warning',
    define: {
      __OUTREACH_VERSION__: JSON.stringify(version),
      __OUTREACH_MIGRATIONS__: JSON.stringify(migrations),
      __OUTREACH_NATIVE_HASH__: JSON.stringify(nativeHash),
      // The settings area's stylesheet and copy-button script (src/web/assets.ts).
      __OUTREACH_SETTINGS_ASSETS__: JSON.stringify(readSettingsAssets()),
      // Only reached on from-source paths that the defines above cut off, but must not crash.
      'import.meta.url': '__outreach_import_meta_url',
    },
    banner: { js: 'var __outreach_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
  });
  if (result.errors.length) throw new Error('esbuild failed');
  return { migrations: migrations.sqlite.length + migrations.postgres.length, bytes: statSync(outfile).size };
}
