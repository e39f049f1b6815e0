/**
 * The PostgreSQL migrations (sql/postgres/, decisions.md §16) against the SQLite ones, on a real
 * PostgreSQL server in a database of this file's own:
 *
 * - they apply in order to an empty database, one file per SQLite migration (same number, name);
 * - tables, columns (order, type, nullability, default), primary keys, unique constraints,
 *   foreign keys (ON DELETE), indexes (columns, DESC, collation, partial predicates) and the
 *   counting triggers are SQLite's, and the CHECK lists are the enums of src/domain/enums.ts;
 * - the counting triggers keep the very `row_counts` rows SQLite keeps through a scripted series
 *   of inserts, moves, no-op updates, upserts, deletes and cascades, and stay exact with several
 *   writers at once; a bulk load with the counters paused ends with the same counters, lets
 *   readers through and holds writers off;
 * - `fold()` is `foldCase` (src/db/sqlite/functions.ts) for every code point the server's ICU
 *   knows, and for whole strings of several scripts; the search conditions of the header of
 *   sql/postgres/0008_search_folded.sql (over the generated folded columns) find exactly what
 *   `foldCase` finds, for every term length; with many rows, EXPLAIN shows a 3+ character term
 *   served by the trigram indexes.
 *
 * The migrations are applied here with plain `pg`, one transaction per file, until the store's
 * migrator reads sql/postgres/.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openStore, type Store } from '../../src/db/connection.js';
import { loadMigrations, migrate, readMigrationDir } from '../../src/db/migrate.js';
import { foldCase } from '../../src/db/sqlite/functions.js';
import { STAMPED_TABLES } from '../../src/db/change-stamps.js';
import { COUNTED_TABLES } from '../../src/db/row-counters.js';
import { ENUM_CHECKS } from '../helpers/check-lists.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';
import { sqliteStore } from '../helpers/stores.js';

const skip = await serviceSkip('postgres');

const PG_DIR = fileURLToPath(new URL('../../sql/postgres/', import.meta.url));

type Row = Record<string, any>;

/** A deterministic pseudo-random source (mulberry32), so a failing script can be replayed. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  return { next, int, pick };
}

/** `'text'` as an SQL literal (both dialects). */
const lit = (value: string | number | null) =>
  value === null ? 'NULL' : typeof value === 'number' ? String(value) : `'${value.replaceAll("'", "''")}'`;

/** The search term as LIKE reads it: `\`, `%` and `_` escaped by a backslash (the header's rule). */
const escapeLike = (term: string) => term.replace(/[\\%_]/g, '\\$&');

/**
 * The WHERE condition of a search for `term`, as written in the header of
 * sql/postgres/0008_search_folded.sql (its `prospects:` and `leads:` conditions, the first pair
 * for 3+ characters and the second for 1–2), with `$1` the value to bind: the test runs the
 * documented text itself. 3+ characters: `$p` is `'%' || fold($1) || '%'` and `$1` the term with
 * LIKE's characters escaped; 1–2: `$f` is `fold($1)` and `$1` the term as it is.
 */
function documentedSearchCondition(table: 'prospects' | 'leads', term: string): { condition: string; value: string } {
  const header = readFileSync(`${PG_DIR}0008_search_folded.sql`, 'utf8').split('\n');
  const short = [...term].length < 3;
  const starts = header.flatMap((line, i) => (line.startsWith(`--   ${table}:`) ? [i] : []));
  assert.equal(starts.length, 2, `the header of 0008_search_folded.sql states the ${table} conditions`);
  const start = starts[short ? 1 : 0]!;
  const parts = [header[start]!.slice(`--   ${table}:`.length)];
  for (let i = start + 1; /^--\s{10,}\S/.test(header[i] ?? ''); i++) parts.push(header[i]!.slice(2));
  const condition = parts
    .map((p) => p.trim())
    .join(' ')
    .replaceAll('$p', `('%' || fold($1::text) || '%')`)
    .replaceAll('$f', 'fold($1::text)');
  return { condition, value: short ? term : escapeLike(term) };
}

describe('the PostgreSQL schema (sql/postgres/)', { skip }, () => {
  let database: TestDatabase;
  let client: pg.Client;
  let store: Store;
  const clients: pg.Client[] = [];

  const q = async <R extends Row = Row>(text: string, values?: unknown[]) => (await client.query<R>(text, values)).rows;
  const connect = async () => {
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    clients.push(c);
    return c;
  };
  const sqliteAll = <R = Row>(text: string, ...params: unknown[]) =>
    sqliteStore(store)
      .sqlite.prepare(text)
      .all(...params) as R[];

  /** A date-time as an SQL literal, for every row written below. */
  const T = "'2026-03-01T00:00:00.000Z'";
  /** The sites of the writes below, and their projects (of account a1), in both stores. */
  const SITES = { s1: 'p1', s2: 'p1', s3: 'p2' } as const;
  const siteIds = Object.keys(SITES) as (keyof typeof SITES)[];

  /** Runs `statement` on both stores; both must succeed or both fail. */
  const both = async (statement: string) => {
    let sqliteError: unknown;
    let pgError: unknown;
    try {
      sqliteStore(store).sqlite.exec(statement);
    } catch (error) {
      sqliteError = error;
    }
    try {
      await client.query(statement);
    } catch (error) {
      pgError = error;
    }
    assert.equal(
      pgError === undefined,
      sqliteError === undefined,
      `${statement}\n  SQLite: ${String(sqliteError ?? 'ok')}\n  PostgreSQL: ${String(pgError ?? 'ok')}`,
    );
    return sqliteError === undefined;
  };

  /** Account a1, its projects p1 and p2 and their sites (SITES), in both stores (again after a cascade). */
  const base = async () => {
    await both(
      `INSERT INTO accounts (id, email, name, plan, created_at, updated_at) VALUES ('a1', 'a@x.io', 'A', 'pro', ${T}, ${T}) ON CONFLICT (id) DO NOTHING`,
    );
    for (const p of ['p1', 'p2'])
      await both(
        `INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES ('${p}', 'a1', 'P', ${T}, ${T}) ON CONFLICT (id) DO NOTHING`,
      );
    for (const s of siteIds)
      await both(
        `INSERT INTO sites (id, project_id, name, domain, url, status, created_at, updated_at) VALUES ('${s}', '${SITES[s]}', 'S', 'd', 'u', 'active', ${T}, ${T}) ON CONFLICT (id) DO NOTHING`,
      );
  };

  before(async () => {
    database = await createTestDatabase('pgschema');
    client = await connect();
    for (const migration of readMigrationDir(PG_DIR)) {
      await client.query('BEGIN');
      await client.query(migration.sql);
      await client.query('COMMIT');
    }
    store = await openStore(':memory:');
    await migrate(store);
    await base();
  });
  after(async () => {
    for (const c of clients) await c.end().catch(() => {});
    await store?.close();
    await database?.drop();
  });

  // ---- schema parity -------------------------------------------------------------------------

  it('has one migration per SQLite migration, same number and name, applied in order', () => {
    const names = (list: { version: number; name: string }[]) => list.map((m) => `${m.version}_${m.name}`);
    assert.deepEqual(names(readMigrationDir(PG_DIR)), names(loadMigrations()));
  });

  /** SQLite's tables, FTS5 tables (and their shadow tables) aside: PostgreSQL has trigram indexes instead. */
  const sqliteTables = () =>
    sqliteAll<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
       AND name <> 'schema_migrations' AND name NOT LIKE '%\\_fts%' ESCAPE '\\' ORDER BY name`,
    ).map((r) => r.name);

  it('has the same tables, columns (order, type, nullability, default) and primary keys, every text column bytewise', async () => {
    const TYPES: Record<string, string> = {
      TEXT: 'text',
      INTEGER: 'integer',
      BIGINT: 'bigint',
      REAL: 'double precision',
    };
    const pgTables = (
      await q(`SELECT table_name FROM information_schema.tables
               WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
               AND table_name <> 'change_stamps' ORDER BY table_name`)
    ).map((r) => r.table_name);
    assert.deepEqual(pgTables, sqliteTables());
    const normalDefault = (value: string | null) => (value === null ? null : value.replace(/::text$/, ''));
    for (const table of pgTables) {
      const expected = sqliteAll<Row>(`PRAGMA table_info(${table})`).map((c) => ({
        column: c.name,
        type: TYPES[c.type],
        // A non-INTEGER PRIMARY KEY column accepts NULL on SQLite (a known quirk); never written so.
        notNull: c.notnull === 1 || c.pk > 0,
        default: normalDefault(c.dflt_value),
        pk: c.pk,
        collation: c.type === 'TEXT' ? 'C' : null,
      }));
      const pkColumns = (
        await q(
          `SELECT a.attname FROM pg_index i JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, ord) ON true
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
           WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY k.ord`,
          [table],
        )
      ).map((r) => r.attname);
      const actual = (
        await q(
          `SELECT column_name, data_type, is_nullable, column_default, collation_name FROM information_schema.columns
           WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
          [table],
        )
      ).map((c) => ({
        column: c.column_name,
        type: c.data_type,
        notNull: c.is_nullable === 'NO',
        default: normalDefault(c.column_default),
        pk: pkColumns.indexOf(c.column_name) + 1,
        collation: c.collation_name,
      }));
      assert.deepEqual(actual, expected, table);
    }
  });

  it('has the same foreign keys (columns, target, ON DELETE / ON UPDATE) and unique constraints', async () => {
    const ACTIONS: Record<string, string> = {
      a: 'NO ACTION',
      r: 'RESTRICT',
      c: 'CASCADE',
      n: 'SET NULL',
      d: 'SET DEFAULT',
    };
    const expectedFks: string[] = [];
    const expectedUnique: string[] = [];
    for (const table of sqliteTables()) {
      for (const fk of sqliteAll<Row>(`PRAGMA foreign_key_list(${table})`))
        expectedFks.push(
          `${table}.${fk.from} -> ${fk.table}.${fk.to} ON DELETE ${fk.on_delete} ON UPDATE ${fk.on_update}`,
        );
      for (const index of sqliteAll<Row>(`PRAGMA index_list(${table})`).filter((i) => i.origin === 'u'))
        expectedUnique.push(
          `${table}(${sqliteAll<Row>(`PRAGMA index_info(${index.name})`)
            .map((c) => c.name)
            .join(', ')})`,
        );
    }
    const fks = await q(
      `SELECT c.conrelid::regclass::text AS tbl, c.confrelid::regclass::text AS target, c.confdeltype, c.confupdtype,
              (SELECT string_agg(a.attname, ', ') FROM unnest(c.conkey) k JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k) AS cols,
              (SELECT string_agg(a.attname, ', ') FROM unnest(c.confkey) k JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k) AS target_cols
       FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`,
    );
    assert.deepEqual(
      fks
        .map(
          (f) =>
            `${f.tbl}.${f.cols} -> ${f.target}.${f.target_cols} ON DELETE ${ACTIONS[f.confdeltype]} ON UPDATE ${ACTIONS[f.confupdtype]}`,
        )
        .sort(),
      expectedFks.sort(),
    );
    const unique = await q(
      `SELECT c.conrelid::regclass::text AS tbl,
              (SELECT string_agg(a.attname, ', ') FROM unnest(c.conkey) k JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k) AS cols
       FROM pg_constraint c WHERE c.contype = 'u' AND c.connamespace = current_schema()::regnamespace`,
    );
    assert.deepEqual(unique.map((u) => `${u.tbl}(${u.cols})`).sort(), expectedUnique.sort());
  });

  it('has the same indexes: names, columns, DESC, collations and partial predicates; trigram indexes in place of FTS5', async () => {
    // Normal form of an expression or predicate: no casts to text, parentheses, spaces or case.
    const normal = (text: string) =>
      text
        .replace(/::text/g, '')
        .replace(/[()\s"]/g, '')
        .toLowerCase();
    // Nullable index columns whose queries exclude NULLs keep PostgreSQL's default placement
    // (the header of 0001_init.sql): a plain ORDER BY then walks the index. Every other column
    // puts NULLs where SQLite does (low: first ascending, last descending).
    const DEFAULT_NULLS = new Set([
      'thread_messages_thread_order.sent_at',
      'thread_messages_outbox.next_attempt_at',
      'discovery_jobs_runnable.scheduled_at',
      'discovery_queries_job_order.started_at',
      'thread_messages_inbound_id.inbound_message_id',
    ]);
    // Where NULLs go matters only for nullable columns (the tables are the same: the test above).
    const nullable = new Set<string>();
    for (const table of sqliteTables())
      for (const c of sqliteAll<Row>(`PRAGMA table_info(${table})`))
        if (c.notnull === 0 && c.pk === 0) nullable.add(`${table}.${c.name}`);
    const placement = (table: string, expression: string, nulls: string) =>
      nullable.has(`${table}.${expression}`) ? ` nulls ${nulls}` : '';
    const expected = new Map<string, string>();
    for (const { name, tbl_name, sql } of sqliteAll<Row>(
      `SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`,
    )) {
      const body = /\((.*)\)(?:\s+WHERE\s+(.*))?$/s.exec(sql)!;
      const keyColumns = sqliteAll<Row>(`PRAGMA index_xinfo(${name})`).filter((c) => c.key === 1);
      const expressions = body[1]!.split(/,(?![^(]*\))/).map((e) => e.trim());
      const columns = keyColumns.map((c, i) => {
        const expression = normal(expressions[i]!.replace(/\s+(DESC|ASC)$/i, '').replace(/\s+COLLATE\s+\w+$/i, ''));
        const collation = c.coll === 'BINARY' ? '' : ` collate ${c.coll.toLowerCase()}`;
        const nulls = DEFAULT_NULLS.has(`${name}.${expression}`)
          ? c.desc
            ? 'first'
            : 'last'
          : c.desc
            ? 'last'
            : 'first';
        return `${expression}${collation} ${c.desc ? 'desc' : 'asc'}${placement(tbl_name, expression, nulls)}`;
      });
      const unique = / UNIQUE /i.test(sql) ? 'unique ' : '';
      expected.set(
        name,
        `${unique}btree ${tbl_name}(${columns.join(', ')})${body[2] ? ` where ${normal(body[2])}` : ''}`,
      );
    }
    const rows = await q(
      `SELECT ic.relname AS name, t.relname AS tbl, am.amname, i.indisunique, i.indnatts,
              pg_get_expr(i.indpred, i.indrelid) AS pred, i.indoption::int2[] AS options,
              ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnatts) k) AS exprs,
              ARRAY(SELECT coll.collname::text FROM unnest(i.indcollation) WITH ORDINALITY u(oid, ord)
                    LEFT JOIN pg_collation coll ON coll.oid = u.oid ORDER BY u.ord) AS collations
       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_am am ON am.oid = ic.relam
       WHERE t.relnamespace = current_schema()::regnamespace AND NOT i.indisprimary
         AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
    );
    const actual = new Map<string, string>();
    for (const r of rows) {
      if (r.amname === 'gin') continue;
      const columns = (r.exprs as string[]).map((e, k) => {
        const option = r.options[k] as number;
        const collation = r.collations[k] && r.collations[k] !== 'C' ? ` collate ${r.collations[k]}` : '';
        const expression = normal(e.replace(/\s+COLLATE\s+\w+$/i, ''));
        return `${expression}${collation} ${option & 1 ? 'desc' : 'asc'}${placement(r.tbl, expression, option & 2 ? 'first' : 'last')}`;
      });
      actual.set(
        r.name,
        `${r.indisunique ? 'unique ' : ''}${r.amname} ${r.tbl}(${columns.join(', ')})${r.pred ? ` where ${normal(r.pred)}` : ''}`,
      );
    }
    assert.deepEqual(new Map([...actual].sort()), new Map([...expected].sort()));
    const trigram = rows
      .filter((r) => r.amname === 'gin')
      .map((r) => `${r.name} ${r.tbl}: ${(r.exprs as string[]).join(', ')}`)
      .sort();
    assert.deepEqual(trigram, [
      'leads_search leads: title_folded, body_folded, author_handle_folded, evidence_quote_folded',
      'prospects_search prospects: title_folded, domain_folded, url_folded, description_folded',
    ]);
    const opclasses = await q(
      `SELECT DISTINCT opc.opcname FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid, unnest(i.indclass) c
       JOIN pg_opclass opc ON opc.oid = c WHERE ic.relname IN ('prospects_search', 'leads_search')`,
    );
    assert.deepEqual(
      opclasses.map((r) => r.opcname),
      ['gin_trgm_ops'],
    );
  });

  it('has every CHECK list of src/domain/enums.ts, in the same order, and no other', async () => {
    const rows = await q(
      `SELECT c.conrelid::regclass::text AS tbl, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
       WHERE c.contype = 'c' AND c.connamespace = current_schema()::regnamespace`,
    );
    const lists = new Map<string, string[]>();
    for (const { tbl, def } of rows) {
      // CHECK ((plan = ANY (ARRAY['free'::text, 'pro'::text, 'lifetime'::text])))
      const match = /^CHECK \(\((\w+) = ANY \(ARRAY\[(.*)\]\)\)\)$/.exec(def);
      assert.ok(match, `${tbl}: ${def} is a column IN (…) list`);
      lists.set(
        `${tbl}.${match[1]}`,
        [...match[2]!.matchAll(/'((?:[^']|'')*)'::text/g)].map((m) => m[1]!.replace(/''/g, "'")),
      );
    }
    assert.deepEqual([...lists.keys()].sort(), Object.keys(ENUM_CHECKS).sort());
    for (const [column, values] of lists) assert.deepEqual(values, [...ENUM_CHECKS[column]!], column);
  });

  it('has the counting triggers of SQLite, by name and table', async () => {
    const expected = sqliteAll<Row>(
      `SELECT tbl_name || '.' || name AS t FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_count\\_%' ESCAPE '\\'`,
    )
      .map((r) => r.t)
      .sort();
    const actual = (
      await q(
        `SELECT tgrelid::regclass::text || '.' || tgname AS t FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         WHERE NOT tgisinternal AND c.relnamespace = current_schema()::regnamespace
         AND tgname NOT LIKE '%\\_change\\_stamp' ESCAPE '\\'`,
      )
    )
      .map((r) => r.t)
      .sort();
    assert.deepEqual(actual, expected);
    assert.deepEqual(
      [...new Set(actual.map((t) => t.split('.')[0]))].sort(),
      [...COUNTED_TABLES].sort(),
      'every counted table of src/repos/row-counts.ts',
    );
  });

  // PostgreSQL only (sql/postgres/0009_change_stamps.sql; SQLite's stamp needs no table).
  it('bumps the change stamp in every transaction that writes a table a cache reads, and only then', async () => {
    const stamped = (
      await q(
        `SELECT tgrelid::regclass::text AS t FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         WHERE NOT tgisinternal AND c.relnamespace = current_schema()::regnamespace
         AND tgname = tgrelid::regclass::text || '_change_stamp'`,
      )
    )
      .map((r) => r.t)
      .sort();
    assert.deepEqual(stamped, [...STAMPED_TABLES].sort());
  });

  it('compares `COLLATE NOCASE` as SQLite does for ASCII, and folds other scripts too', async () => {
    const equal = async (a: string, b: string) =>
      (await q('SELECT $1::text COLLATE nocase = $2::text AS eq', [a, b]))[0]!.eq as boolean;
    const sqliteEqual = (a: string, b: string) =>
      (sqliteStore(store).sqlite.prepare('SELECT ? = ? COLLATE NOCASE AS eq').get(a, b) as { eq: number }).eq === 1;
    for (const [a, b] of [
      ['Alice@Example.COM', 'alice@example.com'],
      ['alice@example.com', 'alice@example.org'],
      ['a.b@x.io', 'ab@x.io'],
    ] as const) {
      assert.equal(await equal(a, b), sqliteEqual(a, b), `${a} vs ${b}`);
    }
    // The documented difference: non-ASCII letters fold here, not on SQLite.
    assert.equal(await equal('JOSÉ@x.io', 'josé@x.io'), true);
    assert.equal(sqliteEqual('JOSÉ@x.io', 'josé@x.io'), false);
  });

  // ---- row counters ----------------------------------------------------------------------------

  const counters = async (c: pg.Client = client, where = 'true') =>
    (await c.query(`SELECT tbl, scope, key, n FROM row_counts WHERE ${where} ORDER BY tbl, scope, key`)).rows.map(
      (r) => `${r.tbl}|${r.scope}|${r.key}|${r.n}`,
    );
  const sqliteCounters = () =>
    sqliteAll<Row>('SELECT tbl, scope, key, n FROM row_counts ORDER BY tbl, scope, key').map(
      (r) => `${r.tbl}|${r.scope}|${r.key}|${r.n}`,
    );

  it('keeps the same row_counts as SQLite through a scripted series of writes', async () => {
    const rnd = random(20);
    const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const POOL = {
      backlinks: ids('bl', 12),
      backlink_checks: ids('bc', 12),
      prospects: ids('pr', 10),
      contacts: ids('ct', 10),
      drafts: ids('dr', 8),
      threads: ids('th', 8),
      thread_messages: ids('tm', 12),
      keywords: ids('kw', 8),
      blocked_domains: ids('bd', 8),
      discovery_jobs: ids('dj', 8),
      discovery_queries: ids('dq', 12),
      leads: ids('ld', 14),
    };
    const STATUS = {
      backlinks: ['pending', 'live', 'changed', 'lost', 'blocked', 'error', 'closed'],
      prospects: ['proposed', 'rejected', 'blocked'],
      drafts: ['draft', 'awaiting_approval', 'changes_requested', 'approved'],
      threads: ['open', 'awaiting_reply', 'replied', 'closed'],
    } as const;
    const site = () => rnd.pick(siteIds);
    const someIds = (table: keyof typeof POOL) =>
      [...new Set(Array.from({ length: 1 + rnd.int(3) }, () => rnd.pick(POOL[table])))].map(lit).join(', ');
    const maybe = (value: string) => (rnd.next() < 0.5 ? lit(null) : lit(value));

    /** One row of `table` (id `id`), as `(columns) VALUES (…)` parts. */
    const row = (table: keyof typeof POOL, id: string): [string, string] => {
      const s = site();
      const p = SITES[s];
      switch (table) {
        case 'backlinks':
          return [
            'id, site_id, project_id, source, acquisition_origin, source_url, target_url, status, created_at, updated_at',
            `${lit(id)}, ${lit(s)}, ${lit(p)}, 'x', 'x', 'u', 'u', ${lit(rnd.pick(STATUS.backlinks))}, ${T}, ${T}`,
          ];
        case 'backlink_checks':
          return ['id, backlink_id, status, checked_at', `${lit(id)}, ${lit(rnd.pick(POOL.backlinks))}, 'ok', ${T}`];
        case 'prospects':
          return [
            'id, site_id, project_id, status, url, domain, created_at, updated_at',
            `${lit(id)}, ${lit(s)}, ${lit(p)}, ${lit(rnd.pick(STATUS.prospects))}, 'u', 'd', ${T}, ${T}`,
          ];
        case 'contacts':
          return [
            'id, prospect_id, site_id, project_id, email, status, verification_status, created_at, updated_at',
            `${lit(id)}, ${lit(rnd.pick(POOL.prospects))}, ${lit(s)}, ${lit(p)}, 'e@x.io', 'active', 'valid', ${T}, ${T}`,
          ];
        case 'drafts':
          return [
            'id, site_id, project_id, prospect_id, contact_id, status, created_at, updated_at',
            `${lit(id)}, ${lit(s)}, ${lit(p)}, ${lit(rnd.pick(POOL.prospects))}, ${lit(rnd.pick(POOL.contacts))}, ${lit(rnd.pick(STATUS.drafts))}, ${T}, ${T}`,
          ];
        case 'threads':
          return [
            'id, site_id, project_id, prospect_id, contact_id, provider_thread_id, status, outcome, classification, created_at, updated_at',
            `${lit(id)}, ${lit(s)}, ${lit(p)}, ${lit(rnd.pick(POOL.prospects))}, ${lit(rnd.pick(POOL.contacts))}, 'pt', ${lit(rnd.pick(STATUS.threads))}, 'none', 'unclassified', ${T}, ${T}`,
          ];
        case 'thread_messages':
          return [
            'id, thread_id, direction, body, sent_at, created_at, updated_at',
            `${lit(id)}, ${lit(rnd.pick(POOL.threads))}, 'outbound', 'b', ${maybe('2026-03-02T00:00:00.000Z')}, ${T}, ${T}`,
          ];
        case 'keywords':
          return ['id, site_id, project_id, keyword, created_at', `${lit(id)}, ${lit(s)}, ${lit(p)}, 'k', ${T}`];
        case 'blocked_domains':
          return ['id, project_id, domain, created_at', `${lit(id)}, ${lit(p)}, 'd', ${T}`];
        case 'discovery_jobs':
          return [
            'id, site_id, project_id, type, status, created_at, updated_at',
            `${lit(id)}, ${lit(s)}, ${lit(p)}, 'contact_discovery', 'queued', ${T}, ${T}`,
          ];
        case 'discovery_queries':
          return [
            'id, job_id, query, status, started_at',
            `${lit(id)}, ${lit(rnd.pick(POOL.discovery_jobs))}, 'q', 'pending', ${maybe('2026-03-02T00:00:00.000Z')}`,
          ];
        case 'leads':
          return [
            'id, site_id, project_id, platform, tier, lead_type, stage, dismissed, created_at',
            `${lit(id)}, ${lit(s)}, ${lit(p)}, ${lit(rnd.pick(['reddit', 'hn', 'x']))}, ${lit(rnd.pick(['hot', 'warm', 'explore']))}, ${lit(rnd.pick(['competitor', 'describes_problem', 'looking_for_solution', 'other']))}, ${lit(rnd.pick(['to_qualify', 'to_contact', 'in_conversation', 'closed']))}, ${rnd.int(2)}, ${T}`,
          ];
      }
    };
    /** An UPDATE of `table` that changes a counted column (or, `noop`, only an uncounted one). */
    const update = (table: keyof typeof POOL, noop: boolean): string => {
      const where = rnd.next() < 0.7 ? `id IN (${someIds(table)})` : `1 = 1`;
      // `SET id = id` writes every row matched and changes nothing counted (nor any key).
      if (noop) return `UPDATE ${table} SET id = id WHERE ${where}`;
      const s = site();
      const move = rnd.next() < 0.3;
      const scope =
        table === 'backlink_checks'
          ? `backlink_id = ${lit(rnd.pick(POOL.backlinks))}`
          : table === 'contacts'
            ? `prospect_id = ${lit(rnd.pick(POOL.prospects))}`
            : table === 'thread_messages'
              ? `thread_id = ${lit(rnd.pick(POOL.threads))}`
              : table === 'discovery_queries'
                ? `job_id = ${lit(rnd.pick(POOL.discovery_jobs))}`
                : table === 'blocked_domains'
                  ? `project_id = ${lit(SITES[s])}`
                  : // a site move keeps its project, or (one in two) moves only the site
                    rnd.next() < 0.5
                    ? `site_id = ${lit(s)}, project_id = ${lit(SITES[s])}`
                    : `site_id = ${lit(s)}`;
      switch (table) {
        case 'backlinks':
        case 'prospects':
        case 'drafts':
        case 'threads': {
          const statuses = STATUS[table];
          const value =
            rnd.next() < 0.5
              ? lit(rnd.pick(statuses))
              : `CASE status WHEN ${lit(statuses[0])} THEN ${lit(statuses[1])} ELSE ${lit(statuses[0])} END`;
          return `UPDATE ${table} SET ${move ? `${scope}, ` : ''}status = ${value} WHERE ${where}`;
        }
        case 'discovery_queries':
          return `UPDATE ${table} SET ${move ? scope : `started_at = CASE WHEN started_at IS NULL THEN ${T} ELSE NULL END`} WHERE ${where}`;
        case 'thread_messages':
          return `UPDATE ${table} SET ${move ? scope : `sent_at = CASE WHEN sent_at IS NULL THEN ${T} ELSE NULL END`} WHERE ${where}`;
        case 'leads': {
          const column = rnd.pick(['dismissed', 'tier', 'stage', 'lead_type', 'platform', 'move']);
          const value = {
            dismissed: '1 - dismissed',
            tier: lit(rnd.pick(['hot', 'warm', 'explore'])),
            stage: lit(rnd.pick(['to_qualify', 'to_contact', 'in_conversation', 'closed'])),
            lead_type: lit(rnd.pick(['competitor', 'describes_problem', 'looking_for_solution', 'other'])),
            platform: lit(rnd.pick(['reddit', 'hn', 'x'])),
            move: '',
          }[column];
          return `UPDATE leads SET ${column === 'move' ? scope : `${column} = ${value}`} WHERE ${where}`;
        }
        default:
          return `UPDATE ${table} SET ${scope} WHERE ${where}`;
      }
    };
    const parents = async () => {
      await base();
      for (const table of ['prospects', 'contacts', 'threads', 'discovery_jobs', 'backlinks'] as const)
        for (const id of POOL[table].slice(0, 6)) {
          const [columns, values] = row(table, id);
          await both(`INSERT INTO ${table} (${columns}) VALUES (${values}) ON CONFLICT (id) DO NOTHING`);
        }
    };
    const check = async (statement: string) => assert.deepEqual(await counters(), sqliteCounters(), statement);

    await parents();
    await check('the parents');
    const tables = Object.keys(POOL) as (keyof typeof POOL)[];
    const kinds = new Map<string, number>();
    for (let step = 0; step < 400; step++) {
      const table = rnd.pick(tables);
      const dice = rnd.next();
      let statement: string;
      let kind: string;
      if (dice < 0.35) {
        const rows = Array.from({ length: 1 + rnd.int(4) }, () => row(table, rnd.pick(POOL[table])));
        statement = `INSERT INTO ${table} (${rows[0]![0]}) VALUES ${rows.map(([, v]) => `(${v})`).join(', ')} ON CONFLICT (id) DO NOTHING`;
        kind = 'insert';
      } else if (dice < 0.45 && table in STATUS) {
        const [columns, values] = row(table, rnd.pick(POOL[table]));
        statement = `INSERT INTO ${table} (${columns}) VALUES (${values}) ON CONFLICT (id) DO UPDATE SET status = excluded.status`;
        kind = 'upsert';
      } else if (dice < 0.7) {
        statement = update(table, false);
        kind = 'move';
      } else if (dice < 0.8) {
        statement = update(table, true);
        kind = 'no-op update';
      } else if (dice < 0.95) {
        statement = `DELETE FROM ${table} WHERE id IN (${someIds(table)})`;
        kind = 'delete';
      } else {
        const [parent, id] = rnd.pick([
          ['prospects', rnd.pick(POOL.prospects)],
          ['sites', site()],
          ['projects', rnd.pick(['p1', 'p2'])],
          ['discovery_jobs', rnd.pick(POOL.discovery_jobs)],
          ['threads', rnd.pick(POOL.threads)],
          ['backlinks', rnd.pick(POOL.backlinks)],
        ] as const);
        statement = `DELETE FROM ${parent} WHERE id = ${lit(id)}`;
        kind = 'cascade';
      }
      const ok = await both(statement);
      if (ok) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      await check(statement);
      if (kind === 'cascade') {
        await parents();
        await check('the parents again');
      }
    }
    for (const kind of ['insert', 'upsert', 'move', 'no-op update', 'delete', 'cascade'])
      assert.ok((kinds.get(kind) ?? 0) >= 5, `the script ran ${kind} statements (${kinds.get(kind) ?? 0})`);
    // Every key kind of the header comment was exercised.
    const keys = new Set(
      (await counters()).map((c) =>
        c
          .split('|')
          .filter((_, i) => i !== 1 && i !== 3)
          .join('|'),
      ),
    );
    // A key's shape: its scope kind, then `b` for a 0/1 value, `v` for any other.
    const shapes = [...keys].map((k) => {
      const [tbl, key] = k.split('|') as [string, string];
      const [kind, ...values] = key.split(':');
      const parts = values.map((v) => (v.startsWith('platform=') ? 'platform=v' : /^[01]$/.test(v) ? 'b' : 'v'));
      return `${tbl}|${[kind, ...parts].join(':')}`;
    });
    for (const shape of [
      'backlinks|project:v',
      'backlinks|site:v',
      'prospects|project:v',
      'prospects|site:v',
      'drafts|site:v',
      'threads|site:v',
      'backlink_checks|backlink',
      'contacts|prospect',
      'keywords|site',
      'blocked_domains|project',
      'discovery_jobs|site',
      'discovery_queries|job:b',
      'thread_messages|thread:b',
      'leads|project:b:v:v:v',
      'leads|site:b:v:v:v',
      'leads|project:b:v:v:v:platform=v',
      'leads|site:b:v:v:v:platform=v',
    ])
      assert.ok(shapes.includes(shape), `a ${shape} counter was kept`);
    // The triggers' counters are the recount's (zero rows aside, which a recount does not keep).
    const kept = await counters(client, 'n <> 0');
    await q('BEGIN');
    await q(`SELECT recount_rows(t) FROM unnest($1::text[]) t`, [COUNTED_TABLES]);
    assert.deepEqual(await counters(), kept);
    await q('ROLLBACK');
  });

  it('pauses counting for a bulk load: the recount at resume gives the counters the triggers keep, readers go on, writers wait', async () => {
    const load = [
      `INSERT INTO backlinks (id, site_id, project_id, source, acquisition_origin, source_url, target_url, status, created_at, updated_at)
       SELECT 'bulk' || i, CASE WHEN i % 3 = 0 THEN 's3' ELSE 's1' END, CASE WHEN i % 3 = 0 THEN 'p2' ELSE 'p1' END,
              'x', 'x', 'u', 'u', (ARRAY['live', 'lost', 'pending'])[i % 3 + 1], ${T}, ${T} FROM generate_series(1, 300) i`,
      `UPDATE backlinks SET status = 'changed' WHERE id LIKE 'bulk1%'`,
      `DELETE FROM backlinks WHERE id LIKE 'bulk2%'`,
      `INSERT INTO leads (id, site_id, project_id, platform, tier, lead_type, stage, created_at)
       SELECT 'bulk' || i, 's1', 'p1', 'forum', 'warm', 'other', 'to_contact', ${T} FROM generate_series(1, 50) i`,
    ];
    const initial = await counters();
    // The same load counted by the triggers, rolled back: what the counters must end as.
    await q('BEGIN');
    for (const statement of load) await q(statement);
    const counted = await counters(client, 'n <> 0');
    await q('ROLLBACK');
    assert.deepEqual(await counters(), initial);

    const searchIndexOptions = async () =>
      (await q(`SELECT reloptions FROM pg_class WHERE relname = 'leads_search'`))[0]!.reloptions as string[];
    assert.deepEqual(await searchIndexOptions(), ['fastupdate=off']);
    const other = await connect();
    await q('BEGIN');
    await q(`SELECT pause_row_counts(ARRAY['backlinks', 'leads'])`);
    for (const statement of load) await q(statement);
    assert.deepEqual(await counters(), initial, 'paused tables are not counted');
    assert.deepEqual(
      await searchIndexOptions(),
      ['fastupdate=on', 'gin_pending_list_limit=65536'],
      'queued index entries',
    );
    // Readers of the paused tables go on and see the committed rows; a writer waits (here: gives up).
    const seen = await other.query(`SELECT count(*)::int AS n FROM backlinks WHERE id LIKE 'bulk%'`);
    assert.equal(seen.rows[0].n, 0);
    await other.query(`SET lock_timeout = '100ms'`);
    await assert.rejects(
      other.query(`UPDATE backlinks SET status = 'live' WHERE id = 'bl0'`),
      (error: { code?: string }) => error.code === '55P03',
      'a writer of a paused table waits for the bulk load to commit',
    );
    await other.query(`RESET lock_timeout`);
    await q(`SELECT resume_row_counts(ARRAY['backlinks', 'leads'])`);
    // Counting is back in this transaction: one more row is counted by the trigger.
    await q(
      `INSERT INTO backlinks (id, site_id, project_id, source, acquisition_origin, source_url, target_url, status, created_at, updated_at)
       VALUES ('bulk-after', 's1', 'p1', 'x', 'x', 'u', 'u', 'live', ${T}, ${T})`,
    );
    await q(`DELETE FROM backlinks WHERE id = 'bulk-after'`);
    await q('COMMIT');
    assert.deepEqual(await counters(client, 'n <> 0'), counted);
    assert.deepEqual(await searchIndexOptions(), ['fastupdate=off'], 'the search index writes through again');

    // A rollback of a paused load leaves the counters and the setting as they were.
    const committed = await counters();
    await q('BEGIN');
    await q(`SELECT pause_row_counts(ARRAY['backlinks'])`);
    await q(`DELETE FROM backlinks WHERE id LIKE 'bulk%'`);
    await q('ROLLBACK');
    assert.deepEqual(await counters(), committed);
    assert.deepEqual(await searchIndexOptions(), ['fastupdate=off']);
    assert.equal((await q(`SELECT current_setting('outreach.row_counts_paused', true) AS s`))[0]!.s || '', '');
    await assert.rejects(q(`SELECT recount_rows('accounts')`), /not a counted table/);
  });

  it('keeps the counters exact with several writers at once; one-statement writes never deadlock', async (t) => {
    const WRITERS = 6;
    const ROUNDS = 40;
    const writers = await Promise.all(Array.from({ length: WRITERS }, () => connect()));
    // A deadlock is found after `deadlock_timeout` (1 s by default; a superuser may shorten it).
    for (const c of writers) await c.query(`SET deadlock_timeout = '50ms'`).catch(() => {});
    const statuses = ['pending', 'live', 'lost', 'changed'];
    // New scopes, so that the writers also race to create the first counter rows.
    await q(`INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES ('pc', 'a1', 'C', ${T}, ${T})`);
    await q(
      `INSERT INTO sites (id, project_id, name, domain, url, status, created_at, updated_at)
       VALUES ('sc1', 'pc', 'S', 'd', 'u', 'active', ${T}, ${T}), ('sc2', 'pc', 'S', 'd', 'u', 'active', ${T}, ${T})`,
    );
    /** One round of writer `w`: a multi-row insert, a move of two rows (any writer's), maybe a delete. */
    const round = (rnd: ReturnType<typeof random>, w: number, n: number) => {
      const id = () => `cw${rnd.int(WRITERS)}_${rnd.int(ROUNDS)}`;
      const rows = Array.from(
        { length: 1 + rnd.int(3) },
        (_, k) =>
          `('cw${w}_${n}${k ? `_${k}` : ''}', '${rnd.pick(['sc1', 'sc2'])}', 'pc', 'x', 'x', 'u', 'u', '${rnd.pick(statuses)}', ${T}, ${T})`,
      );
      return [
        `INSERT INTO backlinks (id, site_id, project_id, source, acquisition_origin, source_url, target_url, status, created_at, updated_at) VALUES ${rows.join(', ')}`,
        `UPDATE backlinks SET status = CASE status WHEN 'live' THEN 'lost' WHEN 'lost' THEN 'live' ELSE '${rnd.pick(statuses)}' END, site_id = '${rnd.pick(['sc1', 'sc2'])}' WHERE id IN ('${id()}', '${id()}')`,
        ...(rnd.next() < 0.3 ? [`DELETE FROM backlinks WHERE id = '${id()}'`] : []),
      ];
    };
    const exact = async () => {
      const expected = await q(
        `SELECT tbl, scope, key, n::int FROM (
           SELECT 'backlinks' AS tbl, project_id AS scope, 'project:' || status AS key, count(*) AS n FROM backlinks WHERE project_id = 'pc' GROUP BY 2, 3
           UNION ALL
           SELECT 'backlinks', site_id, 'site:' || status, count(*) FROM backlinks WHERE project_id = 'pc' GROUP BY 2, 3) c
         ORDER BY tbl, scope, key`,
      );
      assert.ok(expected.length > 0);
      assert.deepEqual(
        await counters(client, `tbl = 'backlinks' AND scope IN ('pc', 'sc1', 'sc2') AND n <> 0`),
        expected.map((r) => `${r.tbl}|${r.scope}|${r.key}|${r.n}`),
      );
      assert.deepEqual(await q(`SELECT * FROM row_counts WHERE n < 0`), []);
    };

    // One statement per transaction (autocommit): each locks its counter rows in (scope, key)
    // order, so none waits in a cycle (without the ORDER BY of the counting upserts, this deadlocks).
    await Promise.all(
      writers.map(async (c, w) => {
        const rnd = random(100 + w);
        for (let n = 0; n < ROUNDS; n++) for (const statement of round(rnd, w, n)) await c.query(statement);
      }),
    );
    await exact();

    // Three statements per transaction: a transaction that holds counters while it waits for a
    // row another holds can deadlock; PostgreSQL aborts one (40P01) and it is run again.
    let retried = 0;
    await Promise.all(
      writers.map(async (c, w) => {
        const rnd = random(200 + w);
        for (let n = ROUNDS; n < ROUNDS + 10; n++) {
          const statements = round(rnd, w, n);
          for (;;) {
            try {
              await c.query('BEGIN');
              for (const statement of statements) await c.query(statement);
              await c.query('COMMIT');
              break;
            } catch (error) {
              await c.query('ROLLBACK');
              if ((error as { code?: string }).code !== '40P01') throw error;
              retried++;
            }
          }
        }
      }),
    );
    await exact();
    t.diagnostic(
      `${WRITERS} writers: ${WRITERS * ROUNDS} rounds of one-statement transactions, no deadlock; ` +
        `${WRITERS * 10} of multi-statement ones, ${retried} run again after a deadlock`,
    );
  });

  // ---- search ----------------------------------------------------------------------------------

  it('folds case as foldCase does, for every code point the server knows', async (t) => {
    const js = new Map<number, string>();
    for (let cp = 1; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const char = String.fromCodePoint(cp);
      const folded = foldCase(char);
      if (folded !== char) js.set(cp, folded);
    }
    const server = new Map<number, string>(
      (
        await q(`SELECT cp, f FROM (SELECT cp, fold(chr(cp)) AS f FROM generate_series(1, 1114111) cp
                 WHERE cp NOT BETWEEN 55296 AND 57343) s WHERE f <> chr(cp)`)
      ).map((r) => [r.cp, r.f]),
    );
    const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
    const different = [...server].filter(([cp, f]) => js.get(cp) !== f).map(([cp]) => hex(cp));
    assert.deepEqual(different, [], 'code points the server folds otherwise than foldCase');
    // Left: letters whose case mapping is newer than the server's ICU (Unicode 16+ on ICU 72),
    // which it leaves as they are (so a search folds neither side of them, consistently).
    const unknown = [...js.keys()].filter((cp) => !server.has(cp));
    const { icu } = (await q(`SELECT collversion AS icu FROM pg_collation WHERE collname = 'und-x-icu'`))[0]!;
    t.diagnostic(
      `fold(): ${server.size} code points folded as foldCase (ICU collation version ${icu}); ` +
        `${unknown.length} newer than the server's ICU, left as they are: ${unknown.map(hex).join(' ')}`,
    );
    assert.ok(unknown.length <= 64, `${unknown.length} code points unknown to the server's ICU`);
  });

  const SAMPLES = [
    ['Latin', 'ÀÉÎÕÜ Ÿ Ǆ ǅ Ø Å Ç Œ'],
    ['Greek', 'ΟΔΥΣΣΕΥΣ ΆΈΉΊΌΎΏ Σ'],
    ['Cyrillic', 'ПРИВЕТ, ЁЖИК! Ѓ Ї Ў'],
    ['Turkish', 'İSTANBUL ıI İi'],
    ['German', 'STRASSE Straße ẞ'],
    ['Armenian', 'ԱԲԳ ՀԱՅԱՍՏԱՆ'],
    ['Georgian', 'ᲐᲑᲒ ႠႡ'],
    ['Cherokee', 'ᎠᎡᎢ ᏣᎳᎩ'],
    ['Deseret', '𐐀𐐁𐐂'],
    ['Adlam', '𞤀𞤁𞤂'],
    ['CJK', '日本語テキスト 한국어'],
    ['Fullwidth', 'ＡＢＣ ａｂｃ'],
  ] as const;

  it('folds whole strings of several scripts as foldCase does (no final-sigma rule, İ to i̇)', async (t) => {
    for (const [script, text] of SAMPLES) {
      const { f } = (await q('SELECT fold($1) AS f', [text]))[0]!;
      assert.equal(f, foldCase(text), script);
    }
    assert.equal((await q('SELECT fold(NULL) AS f'))[0]!.f, null);
    // What lower() would do instead, under this database's locale and under ICU.
    const { libc, icu } = (await q(`SELECT lower($1) AS libc, lower($1 COLLATE "und-x-icu") AS icu`, ['İ ΟΔΟΣ']))[0]!;
    t.diagnostic(`'İ ΟΔΟΣ': foldCase '${foldCase('İ ΟΔΟΣ')}', lower() '${libc}', lower() under ICU '${icu}'`);
  });

  it('finds exactly what foldCase finds with the documented condition, for every script and term length', async () => {
    await q(`INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES ('ps', 'a1', 'S', ${T}, ${T})`);
    await q(
      `INSERT INTO sites (id, project_id, name, domain, url, status, created_at, updated_at) VALUES ('ss', 'ps', 'S', 'd', 'u', 'active', ${T}, ${T})`,
    );
    const texts = [...SAMPLES.map(([, text]) => text), '50% off_sale C:\\dir', 'plain ascii', 'ΣΟΦΙΑ σοφία'];
    const prospects = texts.map((text, i) => ({
      id: `sp${i}`,
      title: i % 4 === 0 ? text : null,
      domain: `d${i}.example`,
      url: i % 4 === 1 ? `https://x/${text}` : `https://x/${i}`,
      description: i % 4 >= 2 ? text : null,
    }));
    for (const p of prospects)
      await q(
        `INSERT INTO prospects (id, site_id, project_id, status, url, domain, title, description, created_at, updated_at)
         VALUES ($1, 'ss', 'ps', 'proposed', $2, $3, $4, $5, ${T}, ${T})`,
        [p.id, p.url, p.domain, p.title, p.description],
      );
    const leads = texts.flatMap((text, i) => [
      { id: `sl${i}`, title: text, body: null, author: `user${i}`, quote: null, redacted: 0 },
      { id: `sr${i}`, title: text, body: text, author: i % 2 ? text : `anon${i}`, quote: text, redacted: 1 },
    ]);
    for (const l of leads)
      await q(
        `INSERT INTO leads (id, site_id, project_id, platform, tier, lead_type, stage, title, body, author_handle, evidence_quote, redacted, created_at)
         VALUES ($1, 'ss', 'ps', 'x', 'hot', 'other', 'to_qualify', $2, $3, $4, $5, $6, ${T})`,
        [l.id, l.title, l.body, l.author, l.quote, l.redacted],
      );
    const contains = (value: string | null, term: string) => value !== null && foldCase(value).includes(foldCase(term));
    const terms = [
      ...SAMPLES.flatMap(([, text]) => {
        const chars = [...text];
        return [
          chars[0]!,
          chars.slice(0, 2).join(''),
          chars.slice(1, 4).join(''),
          text.toLowerCase(),
          text.toUpperCase(),
        ];
      }),
      'σ',
      'Σοφ',
      'ΣΟΦΊΑ',
      '%',
      '50%',
      '_',
      'f_s',
      'off_',
      '\\',
      'c:\\d',
      'i̇',
      'İs',
      'SS',
      'ß',
      'plain ASCII',
      'nothing matches this',
    ];
    let checked = 0;
    for (const term of terms) {
      const found = async (table: 'prospects' | 'leads') => {
        const { condition, value } = documentedSearchCondition(table, term);
        return (await q(`SELECT id FROM ${table} WHERE project_id = 'ps' AND ${condition} ORDER BY id`, [value])).map(
          (r) => r.id,
        );
      };
      const expectedProspects = prospects
        .filter((p) => [p.title, p.domain, p.url, p.description].some((v) => contains(v, term)))
        .map((p) => p.id)
        .sort();
      const expectedLeads = leads
        .filter(
          (l) => contains(l.author, term) || (!l.redacted && [l.title, l.body, l.quote].some((v) => contains(v, term))),
        )
        .map((l) => l.id)
        .sort();
      assert.deepEqual(await found('prospects'), expectedProspects, `prospects, term ${JSON.stringify(term)}`);
      assert.deepEqual(await found('leads'), expectedLeads, `leads, term ${JSON.stringify(term)}`);
      checked += expectedProspects.length + expectedLeads.length;
    }
    assert.ok(checked > 100, `the terms matched something (${checked} matches)`);
  });

  it('serves a 3+ character search with the trigram indexes at many rows (EXPLAIN)', async (t) => {
    const ROWS = 20_000;
    await q(`INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES ('pe', 'a1', 'E', ${T}, ${T})`);
    await q(
      `INSERT INTO sites (id, project_id, name, domain, url, status, created_at, updated_at) VALUES ('se', 'pe', 'S', 'd', 'u', 'active', ${T}, ${T})`,
    );
    await q('BEGIN');
    await q(`SELECT pause_row_counts(ARRAY['prospects', 'leads'])`);
    // Text of several scripts; one row in about 2,000 holds the token searched for below.
    await q(
      `INSERT INTO prospects (id, site_id, project_id, status, url, domain, title, description, created_at, updated_at)
       SELECT 'big' || i, 'se', 'pe', 'proposed', 'https://site' || (i % 997) || '.example/' || md5(i::text),
              'site' || (i % 997) || '.example',
              (ARRAY['Guide to', 'Ὀδύσσεια', 'Обзор', 'İstanbul', 'Straße'])[i % 5 + 1] || ' ' || substr(md5((i * 7)::text), 1, 12),
              CASE WHEN i % 2003 = 0 THEN 'Needle ΚΑΡΦΊ' ELSE 'About ' || substr(md5((i * 13)::text), 1, 20) END,
              ${T}, ${T}
       FROM generate_series(1, ${ROWS}) i`,
    );
    await q(
      `INSERT INTO leads (id, site_id, project_id, platform, tier, lead_type, stage, title, body, author_handle, redacted, created_at)
       SELECT 'big' || i, 'se', 'pe', 'forum', 'hot', 'other', 'to_qualify',
              (ARRAY['Looking for', 'Ищу', 'Ψάχνω'])[i % 3 + 1] || ' ' || substr(md5(i::text), 1, 12),
              CASE WHEN i % 2003 = 0 THEN 'needle καρφί' ELSE 'Body ' || substr(md5((i * 3)::text), 1, 24) END,
              'user' || i, i % 10 / 9, ${T}
       FROM generate_series(1, ${ROWS}) i`,
    );
    await q(`SELECT resume_row_counts(ARRAY['prospects', 'leads'])`);
    await q('COMMIT');
    await q('ANALYZE prospects, leads');
    const plan = async (table: 'prospects' | 'leads', term: string) => {
      const { condition, value } = documentedSearchCondition(table, term);
      const list = `SELECT * FROM ${table} WHERE project_id = 'pe' AND ${condition}
        ORDER BY ${table === 'leads' ? 'score DESC, posted_at DESC NULLS LAST, id DESC' : 'created_at DESC, id DESC'} LIMIT 25`;
      const [row] = await q(`EXPLAIN (ANALYZE, FORMAT JSON) ${list}`, [value]);
      const explained = row!['QUERY PLAN'][0];
      const indexes: string[] = [];
      const walk = (node: Row) => {
        if (node['Index Name']) indexes.push(`${node['Node Type']} on ${node['Index Name']}`);
        for (const child of node.Plans ?? []) walk(child);
      };
      walk(explained.Plan);
      const rows = (await q(list, [value])).length;
      t.diagnostic(
        `${table}, ${ROWS} rows, term ${JSON.stringify(term)}: ${rows} found, ${explained['Execution Time']} ms; ${indexes.join(', ')}`,
      );
      return { indexes, rows };
    };
    for (const term of ['NEEDLE', 'καρφί', 'needle κ']) {
      const prospects = await plan('prospects', term);
      assert.ok(prospects.indexes.includes('Bitmap Index Scan on prospects_search'), term);
      assert.equal(prospects.rows, Math.floor(ROWS / 2003));
      const leads = await plan('leads', term);
      assert.ok(leads.indexes.includes('Bitmap Index Scan on leads_search'), term);
      assert.ok(leads.rows > 0 && leads.rows < Math.floor(ROWS / 2003));
    }
    // A 1–2 character term cannot use trigrams: it walks the list's order index instead.
    const short = await plan('prospects', 'κα');
    assert.ok(!short.indexes.some((i) => i.endsWith('prospects_search')));
  });
});
