/**
 * Applies the numbered SQL migrations of `sql/` (`NNNN_name.sql`) in order, each in its own
 * transaction, recording them in `schema_migrations`. Migrations are frozen once shipped.
 *
 * The single executable embeds the files at build time (esbuild `define` of
 * `__OUTREACH_MIGRATIONS__`); from source they are read from the `sql/` directory.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { SqliteHandle } from './sqlite-handle.js';
import type { Store } from './store.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

declare const __OUTREACH_MIGRATIONS__: Migration[] | undefined;

/** The migrations shipped with this build, ascending by version. */
export function loadMigrations(): Migration[] {
  if (typeof __OUTREACH_MIGRATIONS__ !== 'undefined') return __OUTREACH_MIGRATIONS__;
  const dir = fileURLToPath(new URL('../../sql/', import.meta.url));
  return readMigrationDir(dir);
}

/** Reads `NNNN_name.sql` files of `dir`, ascending by number. Used by the build too. */
export function readMigrationDir(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(`${dir}/${file}`, 'utf8'),
    }));
}

/**
 * Brings the store's schema up to date.
 * @returns the versions applied by this call (empty when already current).
 * @throws when the database has a migration newer than this build knows (a downgrade).
 */
export function migrate(store: Store, migrations = loadMigrations()): Promise<number[]> {
  return store.exclusive((sqlite) => migrateSqlite(sqlite, migrations));
}

/** `migrate` on the SQLite connection, held by the caller. */
function migrateSqlite(sqlite: SqliteHandle, migrations: Migration[]): number[] {
  sqlite.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  const applied = new Set(
    (sqlite.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (newest > known) {
    throw new Error(
      `database schema version ${newest} is newer than this build supports (${known}); upgrade outreach-api`,
    );
  }
  const done: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    sqlite.exec('BEGIN IMMEDIATE');
    try {
      sqlite.exec(migration.sql);
      sqlite
        .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
        .run(migration.version, migration.name, new Date().toISOString());
      sqlite.exec('COMMIT');
    } catch (error) {
      sqlite.exec('ROLLBACK');
      throw error;
    }
    done.push(migration.version);
  }
  return done;
}

/**
 * Whether the store's schema is the newest this build ships (for `/readyz`, decisions.md §15).
 * @throws when the database does not answer.
 */
export async function schemaIsCurrent(store: Store, migrations = loadMigrations()): Promise<boolean> {
  const { rows } = await sql<{
    version: number | null;
  }>`SELECT MAX(version) AS version FROM schema_migrations`.execute(store.db);
  return Number(rows[0]?.version ?? 0) === Math.max(0, ...migrations.map((m) => m.version));
}
