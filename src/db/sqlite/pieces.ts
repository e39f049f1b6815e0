/**
 * What only SQLite says (../dialect.ts), for the modules of `db/` that serve both stores. One
 * process serves a SQLite file (decisions.md §16), so the locks among instances always hold, and
 * a failed statement leaves its transaction open, so a write may be tried first.
 */
import { type Expression, type SqlBool, sql } from 'kysely';
import type { Contains, DialectPieces, JsonSource, Migration, SearchIndex } from '../dialect.js';
import { noteStoreFailure } from '../failures.js';
import { pending, VERSIONS_TABLE } from '../migrate.js';
import { folded, TRIGRAM_MIN_CHARS } from '../search.js';
import type { SqliteStore } from '../store.js';
import { foldCase } from './functions.js';
import type { SqliteHandle } from './handle.js';
import { pauseCountingTriggers } from './row-counters.js';

/** `term` as one FTS5 phrase: in double quotes, inner quotes doubled, so nothing in it is syntax. */
const ftsPhrase = (term: string) => `"${term.replaceAll('"', '""')}"`;

/**
 * A search on SQLite: a term of 3+ characters is a rowid set from the table's FTS5 trigram index
 * (which holds exactly the searchable text); a shorter one, too short for trigrams, tests each
 * folded column with `instr(column_folded, folded term)`.
 */
function textSearch(
  term: string,
  index: SearchIndex,
  condition: (contains: Contains) => Expression<SqlBool>,
): Expression<SqlBool> {
  if ([...term].length >= TRIGRAM_MIN_CHARS)
    return sql<SqlBool>`${sql.ref(`${index.table}.rowid`)} IN (SELECT rowid FROM ${sql.table(index.fts)} WHERE ${sql.table(index.fts)} MATCH ${ftsPhrase(term)})`;
  const needle = foldCase(term);
  return condition((column) => sql<SqlBool>`instr(${folded(column)}, ${needle}) > 0`);
}

/** SQLite's `json_object` of the row's columns: compact, in the order given. */
const jsonObject = ({ alias, names }: JsonSource) =>
  sql<string>`json_object(${sql.join(names.map((name) => sql`${sql.lit(name)}, ${sql.ref(`${alias}.${name}`)}`))})`;

/** `migrate` on the SQLite connection, held by the caller: each migration in its own transaction. */
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

/** SQLite's pieces for the store `store()` (read when a piece runs: the store is built with them). */
export function sqlitePieces(store: () => SqliteStore): DialectPieces {
  return {
    jsonObject,
    textSearch,
    pauseRowCounts: pauseCountingTriggers,
    lockForTransaction: async () => true,
    runExclusively: (_key, _busy, fn) => fn(),
    failedStatementAbortsTransaction: false,
    retriesTransaction: () => false,
    applyMigrations: (migrations) => store().exclusive((sqlite) => migrateSqlite(sqlite, migrations)),
    // Every time, by a connection of its own: this one could answer from its page cache while the
    // file is damaged. A check that fails marks the store down whatever the error says.
    async checkStore() {
      const own = store();
      try {
        await own.checkFile();
      } catch (error) {
        if (own.health.downSince === null) own.health.downSince = Date.now();
        noteStoreFailure(own, error);
        return false;
      }
      own.health.downSince = null;
      return true;
    },
  };
}
