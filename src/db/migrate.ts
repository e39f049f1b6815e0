/**
 * Applies the numbered SQL migrations of the store's dialect (`sql/sqlite/NNNN_name.sql` or
 * `sql/postgres/NNNN_name.sql`, the same numbers and names) in order, each in its own
 * transaction, recording them in `schema_migrations`. Migrations are frozen once shipped.
 *
 * On PostgreSQL several instances may start at once on an empty database (decisions.md §16):
 * `migrate` holds an advisory lock while it reads and applies, so one applies them and the
 * others wait, then find them applied.
 *
 * The single executable embeds the files at build time (esbuild `define` of
 * `__OUTREACH_MIGRATIONS__`); from source they are read from the `sql/sqlite/` and `sql/postgres/` directories.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { SqliteHandle } from './sqlite/handle.js';
import { ADVISORY_LOCKS } from './locks.js';
import type { PostgresStore, Store } from './store.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The dialects that have migrations, each in its own directory of `sql/`. */
export type MigrationDialect = Store['dialect'];

declare const __OUTREACH_MIGRATIONS__: Record<MigrationDialect, Migration[]> | undefined;

/** The migrations of `dialect` shipped with this build, ascending by version. */
export function loadMigrations(dialect: MigrationDialect = 'sqlite'): Migration[] {
  if (typeof __OUTREACH_MIGRATIONS__ !== 'undefined') return __OUTREACH_MIGRATIONS__[dialect];
  const dir = fileURLToPath(new URL(`../../sql/${dialect}/`, import.meta.url));
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
 * @param migrations default: this build's migrations of the store's dialect.
 * @returns the versions applied by this call (empty when already current).
 * @throws when the database has a migration newer than this build knows (a downgrade).
 */
export function migrate(store: Store, migrations = loadMigrations(store.dialect)): Promise<number[]> {
  if (store.dialect === 'postgres') return migratePostgres(store, migrations);
  return store.exclusive((sqlite) => migrateSqlite(sqlite, migrations));
}

/** The `schema_migrations` table, the same on both dialects. */
const VERSIONS_TABLE =
  'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)';

/** The migrations of `migrations` not in `applied`. @throws when the database is newer than this build. */
function pending(migrations: Migration[], applied: ReadonlySet<number>): Migration[] {
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (newest > known) {
    throw new Error(
      `database schema version ${newest} is newer than this build supports (${known}); upgrade outreach-api`,
    );
  }
  return migrations.filter((m) => !applied.has(m.version));
}

/** The advisory lock key of `migrate` on PostgreSQL (see `ADVISORY_LOCKS` in `./locks.ts`). */
const MIGRATE_LOCK = ADVISORY_LOCKS.migrate;

/**
 * `migrate` on PostgreSQL, on a connection of its own without a statement time limit (a migration
 * may build an index over a large table): under the advisory lock, read what is applied and apply
 * the rest, each in its own transaction.
 */
async function migratePostgres(store: PostgresStore, migrations: Migration[]): Promise<number[]> {
  const client = await store.connectAlone();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK]);
    await client.query(VERSIONS_TABLE);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done: number[] = [];
    for (const migration of pending(migrations, new Set(rows.map((r) => Number(r.version))))) {
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          new Date().toISOString(),
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
      done.push(migration.version);
    }
    return done;
  } finally {
    // Ending the session releases the advisory lock too.
    await client.end();
  }
}

/** `migrate` on the SQLite connection, held by the caller. */
function migrateSqlite(sqlite: SqliteHandle, migrations: Migration[]): number[] {
  sqlite.exec(VERSIONS_TABLE);
  const applied = new Set(
    (sqlite.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  const done: number[] = [];
  for (const migration of pending(migrations, applied)) {
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
export async function schemaIsCurrent(store: Store, migrations = loadMigrations(store.dialect)): Promise<boolean> {
  const { rows } = await sql<{
    version: number | null;
  }>`SELECT MAX(version) AS version FROM schema_migrations`.execute(store.db);
  return Number(rows[0]?.version ?? 0) === Math.max(0, ...migrations.map((m) => m.version));
}
