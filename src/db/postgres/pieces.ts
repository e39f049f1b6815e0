/**
 * What only PostgreSQL says (../dialect.ts), for the modules of `db/` that serve both stores.
 * Several instances share one database (decisions.md §16): work one instance at a time takes an
 * advisory lock, and so do migrations. A failed statement aborts its transaction, so no write is
 * tried to see whether it fails; a transaction aborted for a deadlock or a serialization failure
 * is run again.
 */
import { type Expression, type SqlBool, sql } from 'kysely';
import type { Contains, DialectPieces, JsonSource, Migration, SearchIndex } from '../dialect.js';
import { noteStoreFailure } from '../failures.js';
import { ADVISORY_LOCKS } from '../locks.js';
import { pending, VERSIONS_TABLE } from '../migrate.js';
import { folded, TRIGRAM_MIN_CHARS } from '../search.js';
import type { PostgresStore } from '../store.js';

/** `term` as a LIKE pattern's literal part: `\`, `%` and `_` escaped by a backslash (LIKE's default escape). */
const escapeLike = (term: string) => term.replace(/[\\%_]/g, '\\$&');

/**
 * PostgreSQL's JSON object of the subquery's row: `row_to_json` of the row itself, which writes it
 * compact (`json_build_object` would put spaces around `:` and `,`; a subquery per row to name
 * the members cost the backend more), cast to text so the driver hands it over unparsed.
 */
const jsonObject = ({ alias }: JsonSource) => sql<string>`row_to_json(${sql.table(alias)})::text`;

/**
 * A search on PostgreSQL: a 3+ character term tests `column_folded LIKE '%' || fold(term) || '%'`,
 * which the `pg_trgm` GIN index over the folded columns serves; a shorter one
 * `strpos(column_folded, fold(term)) > 0`.
 */
function textSearch(
  term: string,
  _index: SearchIndex,
  condition: (contains: Contains) => Expression<SqlBool>,
): Expression<SqlBool> {
  if ([...term].length < TRIGRAM_MIN_CHARS)
    return condition((column) => sql<SqlBool>`strpos(${folded(column)}, fold(${term}::text)) > 0`);
  const literal = escapeLike(term);
  return condition((column) => sql<SqlBool>`${folded(column)} LIKE ('%' || fold(${literal}::text) || '%')`);
}

/** SQLSTATEs of a transaction aborted by the server that a second run may get through: deadlock, serialization failure. */
const RETRIED = new Set(['40P01', '40001']);

/**
 * `migrate` on a connection of its own without a statement time limit (a migration may build an
 * index over a large table): under the advisory lock, so instances started at once wait for the
 * one that applies them, read what is applied and apply the rest, each in its own transaction.
 */
async function migratePostgres(store: PostgresStore, migrations: Migration[]): Promise<number[]> {
  const client = await store.connectAlone();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCKS.migrate]);
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

/**
 * Runs `fn` under the session advisory lock `key`, on a connection of its own, held until `fn`
 * settles (or the instance dies, which ends its session); `busy` at once when another holds it.
 */
async function runExclusively<T>(store: PostgresStore, key: number, busy: T, fn: () => Promise<T>): Promise<T> {
  const client = await store.connectAlone();
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key]);
    if (!rows[0]?.locked) return busy;
    return await fn();
  } finally {
    // Ending the session releases the lock.
    await client.end().catch(() => {});
  }
}

/** PostgreSQL's pieces for the store `store()` (read when a piece runs: the store is built with them). */
export function postgresPieces(store: () => PostgresStore): DialectPieces {
  return {
    jsonObject,
    textSearch,
    async pauseRowCounts(trx, tables) {
      const list = sql`ARRAY[${sql.join([...tables])}]::text[]`;
      await sql`SELECT pause_row_counts(${list})`.execute(trx);
      return async () => {
        await sql`SELECT resume_row_counts(${list})`.execute(trx);
      };
    },
    async lockForTransaction(trx, key) {
      const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${key}) AS locked`.execute(trx);
      return rows[0]?.locked === true;
    },
    runExclusively: (key, busy, fn) => runExclusively(store(), key, busy, fn),
    failedStatementAbortsTransaction: true,
    retriesTransaction: (error) => RETRIED.has((error as { code?: unknown }).code as string),
    applyMigrations: (migrations) => migratePostgres(store(), migrations),
    // Only when marked down: otherwise the callers' own statements show whether the server answers.
    async checkStore() {
      const own = store();
      if (own.health.downSince === null) return true;
      try {
        await sql`SELECT 1`.execute(own.db);
      } catch (error) {
        noteStoreFailure(own, error);
        return false;
      }
      own.health.downSince = null;
      return true;
    },
  };
}
