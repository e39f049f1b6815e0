/**
 * The bench's PostgreSQL databases (`npm run bench -- --store postgres`, decisions.md §16): the
 * generated dataset (generate.ts, a SQLite file) loaded once into a database of the bench's own,
 * and a working copy of it for each run, as the SQLite path copies its file.
 *
 * - **Cache**: `outreach_bench_<checkout>` on the server of `OUTREACH_TEST_PG_URL` (default
 *   `postgres://postgres@127.0.0.1:5432/test`; the role must be able to create databases and,
 *   for the load, be a superuser). Migrated with sql/postgres/ by the project's own `migrate`,
 *   then every table the dataset has is copied row for row from the SQLite file: one `psql`
 *   session reading `COPY … FROM stdin` (PostgreSQL's text format), with triggers and foreign-key
 *   checks off (`session_replication_role = replica`) and the tables' secondary indexes dropped
 *   first and built again after; then every row counter is recounted from the rows
 *   (`recount_rows`, sql/postgres/0003_row_counts.sql) and the database is `VACUUM (ANALYZE)`d (the
 *   planner's statistics, and the visibility map that index-only scans need, as a database
 *   long in service has them). A table
 *   `bench_dataset` records the dataset's key and a hash of sql/postgres/: a later run with the
 *   same ones reuses the database; anything else drops and loads it again.
 * - **Working copy**: `outreach_bench_<checkout>_work`, created for each run from the cache as its
 *   template (`CREATE DATABASE … TEMPLATE … STRATEGY FILE_COPY`: a copy of its files, planner
 *   statistics included), so the write runs never change the cache.
 *
 * The databases stay on the server between runs (the cache is the point); drop them with
 * `DROP DATABASE outreach_bench_<checkout>, outreach_bench_<checkout>_work`.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { PG_URL } from '../helpers/services.js';
import { ROOT, type Dataset } from './generate.js';

/** `PG_URL` with the database `name`. */
export function databaseUrl(name: string): string {
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The cache database's name: one per checkout, so two checkouts' benches never share one. */
export const CACHE_DATABASE = `outreach_bench_${createHash('sha256').update(ROOT).digest('hex').slice(0, 6)}`;
export const WORK_DATABASE = `${CACHE_DATABASE}_work`;

/** Hash of sql/postgres/: a new or changed migration means a new load. */
function migrationsHash(): string {
  const dir = join(ROOT, 'sql/postgres');
  const hash = createHash('sha256');
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort())
    hash.update(file).update(readFileSync(join(dir, file)));
  return hash.digest('hex').slice(0, 10);
}

/** Runs `fn` with a client on the database `name` (default: the server's maintenance database of PG_URL). */
async function withClient<T>(name: string | null, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: name ? databaseUrl(name) : PG_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The marker the cache holds, or null when the database or its marker is missing. */
async function cachedMarker(): Promise<string | null> {
  const exists = await withClient(null, (c) =>
    c.query('SELECT 1 FROM pg_database WHERE datname = $1', [CACHE_DATABASE]).then((r) => r.rowCount === 1),
  );
  if (!exists) return null;
  return withClient(CACHE_DATABASE, async (c) => {
    // A load that did not finish left no marker table: the query fails, and the cache is not used.
    const r = await c.query<{ marker: string }>('SELECT marker FROM bench_dataset').catch(() => null);
    return r?.rows[0]?.marker ?? null;
  });
}

/** `value` in COPY's text format: `\N` for null, backslash escapes for `\`, tab, newline and return. */
function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string')
    return value.replace(/[\\\t\n\r]/g, (ch) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[ch]!);
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  throw new Error(`bench: a value of type ${typeof value} cannot be loaded into PostgreSQL`);
}

/** Writes `chunk` to `stream`, waiting for it to drain when its buffer is full. */
async function write(stream: NodeJS.WritableStream, chunk: string): Promise<void> {
  if (!stream.write(chunk)) await new Promise<void>((done) => stream.once('drain', () => done()));
}

export interface PostgresDataset {
  /** The working copy's URL: what the server and the floors use. */
  url: string;
  /** Set when this run loaded the cache: seconds, and rows per table. */
  loaded: { seconds: number; rows: Record<string, number> } | null;
  /** Seconds the working copy took. */
  copySeconds: number;
  /** The working copy's size, bytes (`pg_database_size`). */
  bytes: number;
}

/**
 * Loads `dataset` (the SQLite file) into the cache database unless it already holds it, then
 * makes the run's working copy. See the module's comment for how.
 * @throws when PostgreSQL cannot be reached, `psql` is missing or the load fails.
 */
export async function ensurePostgresDataset(
  dataset: Dataset,
  options: { force?: boolean; log?: (line: string) => void } = {},
): Promise<PostgresDataset> {
  const log = options.log ?? (() => {});
  const marker = `${dataset.key}-pg${migrationsHash()}`;
  let loaded: PostgresDataset['loaded'] = null;
  if (options.force || (await cachedMarker()) !== marker) {
    log(`loading the dataset into PostgreSQL database ${CACHE_DATABASE} …`);
    loaded = await load(dataset.path, marker, log);
    log(`loaded in ${loaded.seconds.toFixed(1)} s`);
  } else log(`PostgreSQL: ${CACHE_DATABASE} holds ${marker}`);
  const started = performance.now();
  const bytes = await withClient(null, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${WORK_DATABASE}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${WORK_DATABASE}" TEMPLATE "${CACHE_DATABASE}" STRATEGY FILE_COPY`);
    const r = await c.query<{ bytes: string }>('SELECT pg_database_size($1) AS bytes', [WORK_DATABASE]);
    return Number(r.rows[0]!.bytes);
  });
  return { url: databaseUrl(WORK_DATABASE), loaded, copySeconds: (performance.now() - started) / 1000, bytes };
}

interface Table {
  name: string;
  columns: string[];
}

/** Drops and creates the cache database, migrates it, and copies the SQLite file's rows into it. */
async function load(
  sqlitePath: string,
  marker: string,
  log: (line: string) => void,
): Promise<NonNullable<PostgresDataset['loaded']>> {
  const started = performance.now();
  await withClient(null, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${CACHE_DATABASE}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${CACHE_DATABASE}"`);
  });
  const url = databaseUrl(CACHE_DATABASE);
  const store = await openStore(url);
  try {
    await migrate(store);
  } finally {
    await store.close();
  }
  const source = new Database(sqlitePath, { readonly: true });
  try {
    const inSqlite = new Set(
      (source.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
        (r) => r.name,
      ),
    );
    const { tables, indexes, counted } = await withClient(CACHE_DATABASE, async (c) => {
      // Generated columns (the search's folded copies) are PostgreSQL's to compute, not to copy.
      const columns = await c.query<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = 'public' AND table_name IN (SELECT tablename FROM pg_tables WHERE schemaname = 'public')
           AND is_generated = 'NEVER'
         ORDER BY table_name, ordinal_position`,
      );
      const byTable = new Map<string, string[]>();
      for (const r of columns.rows) byTable.set(r.table_name, [...(byTable.get(r.table_name) ?? []), r.column_name]);
      // The counters are recounted from the rows; the migrations' own table is migrate's.
      const skip = new Set(['row_counts', 'schema_migrations']);
      const tables: Table[] = [...byTable]
        .filter(([name]) => !skip.has(name) && inSqlite.has(name))
        .map(([name, cols]) => ({ name, columns: cols }));
      // Secondary indexes (not those behind a primary key or unique constraint): built once after the load.
      const indexes = await c.query<{ name: string; def: string }>(
        `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
         WHERE n.nspname = 'public' AND t.relname = ANY ($1)
           AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid)`,
        [tables.map((t) => t.name)],
      );
      const counted = await c.query<{ tbl: string }>(
        "SELECT DISTINCT c.relname AS tbl FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid WHERE g.tgname = c.relname || '_count_insert' ORDER BY 1",
      );
      return { tables, indexes: indexes.rows, counted: counted.rows.map((r) => r.tbl) };
    });
    for (const t of tables) {
      const missing = t.columns.filter(
        (col) =>
          !(source.prepare(`SELECT name FROM pragma_table_info(?)`).all(t.name) as { name: string }[]).some(
            (r) => r.name === col,
          ),
      );
      if (missing.length) throw new Error(`bench: ${t.name} has no column ${missing.join(', ')} in the SQLite dataset`);
    }

    const psql = spawn('psql', ['--no-psqlrc', '--quiet', '-v', 'ON_ERROR_STOP=1', '-d', url], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    psql.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => psql.once('close', (code) => done(code)));
    const input = psql.stdin;
    input.on('error', () => {}); // psql stopped early: its exit code and stderr say why.
    await write(
      input,
      [
        'SET session_replication_role = replica;',
        "SET maintenance_work_mem = '256MB';",
        'BEGIN;',
        ...indexes.map((i) => `DROP INDEX ${i.name};`),
        '',
      ].join('\n'),
    );
    const rows: Record<string, number> = {};
    for (const t of tables) {
      const tableStarted = performance.now();
      await write(input, `COPY ${t.name} (${t.columns.map((c) => `"${c}"`).join(', ')}) FROM stdin;\n`);
      const select = source.prepare(`SELECT ${t.columns.map((c) => `"${c}"`).join(', ')} FROM "${t.name}"`).raw();
      let n = 0;
      let chunk = '';
      for (const row of select.iterate() as Iterable<unknown[]>) {
        chunk += `${row.map(copyValue).join('\t')}\n`;
        if (++n % 2000 === 0) {
          await write(input, chunk);
          chunk = '';
        }
      }
      await write(input, `${chunk}\\.\n`);
      rows[t.name] = n;
      if (n >= 10_000)
        log(`  ${t.name}: ${n} rows read in ${((performance.now() - tableStarted) / 1000).toFixed(1)} s`);
    }
    await write(
      input,
      [
        ...indexes.map((i) => `${i.def};`),
        ...counted.map((t) => `SELECT recount_rows('${t}');`),
        'CREATE TABLE bench_dataset (marker text NOT NULL);',
        `INSERT INTO bench_dataset VALUES ('${marker}');`,
        'COMMIT;',
        // Statistics for the planner, and the visibility map, without which no scan is index-only.
        'VACUUM (ANALYZE);',
        '',
      ].join('\n'),
    );
    input.end();
    const code = await exited;
    if (code !== 0) throw new Error(`bench: loading PostgreSQL failed (psql exited with ${code}): ${stderr.trim()}`);
    return { seconds: (performance.now() - started) / 1000, rows };
  } finally {
    source.close();
  }
}

/**
 * Pids of the processes whose command line contains `needle`: PostgreSQL's backends of a
 * database show `postgres: <user> <database> <client> <state>` there. For the bench's CPU figures
 * (`setHelperProcesses`).
 */
export function processesMatching(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) pids.push(Number(entry));
    } catch {
      // Gone since the listing.
    }
  }
  return pids;
}

/** Pids of `pid`'s child processes (nginx's workers), from /proc. */
export function childrenOf(pid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) pids.push(Number(entry));
    } catch {
      // Gone since the listing.
    }
  }
  return pids;
}
