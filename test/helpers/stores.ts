/**
 * The store the store-dependent tests run on (decisions.md §16): SQLite by default, PostgreSQL
 * with `OUTREACH_TEST_STORE=postgres` (the unit suite runs those files once per store, see
 * test/helpers/shards.ts). Tests do not branch on it: they take a store from here and use it
 * through the repositories and kysely, as the service does.
 *
 * - `testStore()`: the store of this process.
 * - `freshLocation(dir, fixture?)`: where a new test database is, already migrated and holding
 *   `fixture`: on SQLite a copy of a template file in `dir`; on PostgreSQL a database of its own,
 *   created from a template database (`CREATE DATABASE … TEMPLATE`), dropped by `dispose()`.
 *   Each fixture is loaded once per process, into its template.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore, type Store } from '../../src/db/connection.js';
import type { SqliteStore } from '../../src/db/store.js';
import { migrate } from '../../src/db/migrate.js';
import type { Scope } from '../../src/domain/scopes.js';
import { createTestDatabase, PG_URL, type TestDatabase } from './services.js';

export type StoreKind = 'sqlite' | 'postgres';

/** The store of this process's store-dependent tests. */
export function testStore(): StoreKind {
  const kind = process.env.OUTREACH_TEST_STORE ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'postgres')
    throw new Error(`OUTREACH_TEST_STORE must be sqlite or postgres, not ${kind}`);
  return kind;
}

/**
 * For `describe`'s `skip` in a file that needs the store of this process to be SQLite (the file
 * tests SQLite itself: its file, pragmas, FTS5 or query plans): the reason to skip, or false.
 */
export const sqliteOnly = (): string | false =>
  testStore() === 'sqlite' ? false : 'SQLite only (it tests the SQLite file itself)';

/** Loads a fixture into a new, migrated store. */
export type Loader = (store: Store) => Promise<void>;

interface Template {
  /** SQLite: the template file; PostgreSQL: the template database's name. */
  source: string;
}

const templates = new Map<string, Promise<Template>>();
let templateDir: string | undefined;
const pid = process.pid;
let databases = 0;

const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
};

/** `PG_URL` with database `name`. */
const pgUrlOf = (name: string): string => {
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

/** The template of `key` (built once per process with `load`). */
function templateOf(kind: StoreKind, key: string, load: Loader | undefined): Promise<Template> {
  const full = `${kind} ${key}`;
  let template = templates.get(full);
  if (!template) {
    template = buildTemplate(kind, load);
    templates.set(full, template);
  }
  return template;
}

let templateCount = 0;
let staleDropped: Promise<void> | undefined;

async function buildTemplate(kind: StoreKind, load: Loader | undefined): Promise<Template> {
  const n = templateCount++;
  if (kind === 'sqlite') {
    if (templateDir === undefined) {
      const dir = mkdtempSync(join(tmpdir(), 'outreach-api-fixtures-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      templateDir = dir;
    }
    const source = join(templateDir, `${n}.db`);
    const store = await openStore(source);
    try {
      await migrate(store);
      await load?.(store);
      // Everything into the database file itself, so a copy of that file alone holds it all.
      if (store.dialect === 'sqlite') await store.exclusive((sqlite) => sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)'));
    } finally {
      await store.close();
    }
    return { source };
  }
  if (!staleDropped) {
    staleDropped = dropStale();
    // The templates go when the process has nothing left to do; a killed process leaves them to dropStale.
    process.once('beforeExit', () => void dropTemplates().catch(() => {}));
  }
  await staleDropped;
  const source = `outreach_tmpl_${pid}_${n}`;
  await admin((client) => client.query(`CREATE DATABASE "${source}"`));
  const store = await openStore(pgUrlOf(source));
  try {
    await migrate(store);
    await load?.(store);
  } finally {
    await store.close();
  }
  return { source };
}

/** A database for one test server (or test), already migrated and holding its fixture. */
export interface FreshStore {
  /** The SQLite path or the PostgreSQL URL. */
  location: string;
  /** Drops a PostgreSQL database (a SQLite file goes with its directory). */
  dispose(): Promise<void>;
}

/** PostgreSQL databases made from each template ahead of their use (at most one per template). */
const spares = new Map<string, Promise<string>>();

/** Creates a database from `template` and resolves with its name. */
async function copyOf(template: string): Promise<string> {
  const name = `outreach_t_${pid}_${++databases}_${Date.now().toString(36)}`;
  await admin((client) => client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return name;
}

/**
 * A new database of this process's store, from the template of `key` (loaded with `load` the
 * first time): see the module comment. On PostgreSQL, where making and dropping a database takes
 * a second or two each, the next copy of a template is made while the tests use this one, and a
 * disposed database is dropped in the background (`dropStale` takes any a killed process left).
 * @param dir where a SQLite file goes.
 */
export async function freshStore(dir: string, key: string, load?: Loader): Promise<FreshStore> {
  const kind = testStore();
  const template = await templateOf(kind, key, load);
  if (kind === 'sqlite') {
    const location = join(dir, 'test.db');
    copyFileSync(template.source, location);
    return { location, dispose: async () => {} };
  }
  const name = await (spares.get(template.source) ?? copyOf(template.source));
  const next = copyOf(template.source);
  next.catch(() => {});
  spares.set(template.source, next);
  return {
    location: pgUrlOf(name),
    dispose: async () => {
      void admin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).catch(() => {});
    },
  };
}

/** Drops the test databases of processes that are gone (their names carry the pid). */
async function dropStale(): Promise<void> {
  await admin(async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname ~ '^outreach_(tmpl|t)_[0-9]+_'",
    );
    for (const { datname } of rows) {
      const owner = Number(/^outreach_(?:tmpl|t)_(\d+)_/.exec(datname)![1]);
      try {
        process.kill(owner, 0);
      } catch {
        await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => {});
      }
    }
  });
}

/** Drops this process's PostgreSQL templates and the copies made ahead that were not used. */
async function dropTemplates(): Promise<void> {
  if (testStore() !== 'postgres') return;
  const names = await Promise.all([
    ...[...templates.values()].map((t) =>
      t.then(
        (x) => x.source,
        () => null,
      ),
    ),
    ...[...spares.values()].map((name) => name.catch(() => null)),
  ]);
  await admin(async (client) => {
    for (const name of names) if (name) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/**
 * `store` as a SQLite store, for tests of SQLite itself (its file, pragmas, FTS5, query plans).
 * @throws Error when it is not one (such a test runs only where `testStore()` is SQLite).
 */
export function sqliteStore(store: Store): SqliteStore {
  if (store.dialect !== 'sqlite') throw new Error('this test needs a SQLite store');
  return store;
}

/**
 * A new PostgreSQL database of one test file's own (`createTestDatabase`), migrated, holding the
 * small fixture (test/fixtures/small.json), and a token of `acct_a` with `scopes`: for the files
 * that start a server on PostgreSQL themselves. `drop()` the database when done.
 */
export async function smallPostgresDatabase(
  label: string,
  scopes: Scope[],
  nowIso: string,
): Promise<{ database: TestDatabase; token: string }> {
  const { importFile } = await import('../../src/import/index.js');
  const { createToken } = await import('../../src/repos/tokens.js');
  const database = await createTestDatabase(label);
  const store = await openStore(database.url);
  try {
    await migrate(store);
    await importFile(store, new URL('../fixtures/small.json', import.meta.url).pathname, { nowIso });
    const { token } = await createToken(
      store.db,
      { accountId: 'acct_a', name: label, scopes, expiresAt: null },
      nowIso,
    );
    return { database, token };
  } finally {
    await store.close();
  }
}
