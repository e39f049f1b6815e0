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
import type { Migration } from './dialect.js';
import type { Store } from './store.js';

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
 * Brings the store's schema up to date, as its dialect applies migrations
 * (`./sqlite/pieces.ts`; `./postgres/pieces.ts`, under an advisory lock).
 * @param migrations default: this build's migrations of the store's dialect.
 * @returns the versions applied by this call (empty when already current).
 * @throws when the database has a migration newer than this build knows (a downgrade).
 */
export function migrate(store: Store, migrations = loadMigrations(store.dialect)): Promise<number[]> {
  return store.pieces.applyMigrations(migrations);
}

/** The `schema_migrations` table, the same on both dialects. */
export const VERSIONS_TABLE =
  'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)';

/** The migrations of `migrations` not in `applied`. @throws when the database is newer than this build. */
export function pending(migrations: Migration[], applied: ReadonlySet<number>): Migration[] {
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (newest > known) {
    throw new Error(
      `database schema version ${newest} is newer than this build supports (${known}); upgrade outreach-api`,
    );
  }
  return migrations.filter((m) => !applied.has(m.version));
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
