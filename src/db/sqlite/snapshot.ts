/**
 * A snapshot of the store that it can be put back to quickly: the fixture's reset (decisions.md
 * §14). A reset's time grows with the rows written since the snapshot, not with the data's size.
 *
 * - The snapshot is a copy of every table in an in-memory database attached to the store's own
 *   connection (`fixture_snapshot`), each row keeping its key: its `rowid` (the FTS indexes are
 *   keyed by it), or its primary key in a WITHOUT ROWID table.
 * - TEMP triggers on every table note the key of each row this connection writes
 *   (`temp.fixture_dirty`).
 * - `restore()`, in one transaction: rows written since the snapshot that the snapshot lacks are
 *   deleted (children before parents), then the snapshot's copies of the other written rows are
 *   put back (parents before children) with UPDATE or INSERT, keeping their rowids. The tables' own
 *   triggers keep the FTS indexes and the row counters in step; WITHOUT ROWID tables (the
 *   counters, idempotency keys) come last, so they end exactly as they were. A cascade or a trigger marks the rows it
 *   touches, so they are put back as well. No pragma is changed: a changed flag pragma would
 *   expire every prepared statement of the connection.
 * - `take()` is the same in the other direction: the written rows are copied into the snapshot.
 *
 * Virtual tables and their shadow tables are not copied: the content tables' triggers maintain
 * them (the FTS index is then equal in what it finds, not byte for byte). Writes by another
 * connection (another process) are not seen. Memory: one copy of the data.
 */
import type { SqliteHandle, SqliteStatement } from './handle.js';
import type { SqliteStore, StoreSnapshot } from '../store.js';

const SNAPSHOT = 'fixture_snapshot';

interface TableCopy {
  name: string;
  /** WITHOUT ROWID: keyed by its primary key. */
  withoutRowid: boolean;
  /** Restore, first pass (children before parents): written rows the snapshot lacks. */
  remove: SqliteStatement[];
  /** Restore, second pass (parents before children): the snapshot's copies of written rows. */
  putBack: SqliteStatement[];
  /** Copies the written rows into the snapshot. */
  take: SqliteStatement[];
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const sqlString = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * Attaches the snapshot database, copies every table into it and starts noting writes.
 * Call once per store, before serving and outside any transaction.
 * @throws when the connection is inside a transaction or already has a snapshot attached.
 */
export function createSnapshot(store: SqliteStore): Promise<StoreSnapshot> {
  return store.exclusive((sqlite) => snapshotOf(store, sqlite));
}

/** `createSnapshot` on the connection `sqlite` of `store`, held by the caller. */
function snapshotOf(store: SqliteStore, sqlite: SqliteHandle): StoreSnapshot {
  sqlite.exec(`ATTACH DATABASE ':memory:' AS ${SNAPSHOT}`);
  const master = sqlite
    .prepare("SELECT name, sql FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all() as {
    name: string;
    sql: string;
  }[];
  const virtual = master.filter((t) => /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(t.sql)).map((t) => t.name);
  const tables = master.filter((t) => !virtual.some((v) => t.name === v || t.name.startsWith(`${v}_`)));

  sqlite.exec(`CREATE TEMP TABLE fixture_dirty (tbl TEXT NOT NULL, rid ANY NOT NULL, PRIMARY KEY (tbl, rid)) WITHOUT ROWID;
    CREATE TEMP TABLE fixture_todo (rid ANY NOT NULL PRIMARY KEY) WITHOUT ROWID;`);
  const copies: TableCopy[] = [];
  const parentsOf = new Map<string, string[]>();
  sqlite.exec('BEGIN');
  try {
    for (const { name, sql } of tables) {
      const withoutRowid = /WITHOUT\s+ROWID\s*;?\s*$/i.test(sql);
      const info = sqlite.prepare('SELECT name, pk FROM pragma_table_info(?) ORDER BY cid').all(name) as {
        name: string;
        pk: number;
      }[];
      const columns = info.map((c) => q(c.name));
      const list = columns.join(', ');
      const keyColumns = withoutRowid
        ? info
            .filter((c) => c.pk > 0)
            .sort((a, b) => a.pk - b.pk)
            .map((c) => q(c.name))
        : ['rowid'];
      const snapKeyColumns = withoutRowid ? keyColumns : ['__rowid'];
      const key = `(${keyColumns.join(', ')})`;
      const snapKey = `(${snapKeyColumns.join(', ')})`;
      const main = `main.${q(name)}`;
      const snap = `${SNAPSHOT}.${q(name)}`;
      // Untyped columns: the values are kept exactly as stored.
      sqlite.exec(
        withoutRowid
          ? `CREATE TABLE ${snap} (${list}, PRIMARY KEY ${key}) WITHOUT ROWID`
          : `CREATE TABLE ${snap} (__rowid INTEGER PRIMARY KEY, ${list})`,
      );
      sqlite.exec(`INSERT INTO ${snap} SELECT ${withoutRowid ? '' : 'rowid, '}${list} FROM ${main}`);

      // A row's key as one value: the rowid, or a JSON array of the primary key.
      const mark = (row: 'new' | 'old') => {
        const rid = withoutRowid ? `json_array(${keyColumns.map((c) => `${row}.${c}`).join(', ')})` : `${row}.rowid`;
        // Not INSERT OR IGNORE: an outer statement's conflict clause (the counters' upserts) would override it.
        return `INSERT INTO temp.fixture_dirty SELECT ${sqlString(name)}, ${rid} WHERE NOT EXISTS (SELECT 1 FROM temp.fixture_dirty WHERE tbl = ${sqlString(name)} AND rid = ${rid});`;
      };
      const trigger = (event: string) => q(`fixture_${event}_${name}`);
      sqlite.exec(`CREATE TEMP TRIGGER ${trigger('insert')} AFTER INSERT ON ${main} BEGIN ${mark('new')} END;
        CREATE TEMP TRIGGER ${trigger('delete')} AFTER DELETE ON ${main} BEGIN ${mark('old')} END;
        CREATE TEMP TRIGGER ${trigger('update')} AFTER UPDATE ON ${main} BEGIN ${mark('old')} ${mark('new')} END;`);

      const todo = withoutRowid
        ? `SELECT ${keyColumns.map((_, i) => `json_extract(rid, '$[${i}]')`).join(', ')} FROM temp.fixture_todo`
        : 'SELECT rid FROM temp.fixture_todo';
      // Correlated lookups by key, never `IN (SELECT … FROM whole table)`: that would build an
      // index of the whole table at every reset.
      const inSnap = `EXISTS (SELECT 1 FROM ${snap} s WHERE ${snapKeyColumns.map((c, i) => `s.${c} = ${main}.${keyColumns[i]}`).join(' AND ')})`;
      const inMain = `EXISTS (SELECT 1 FROM ${main} m WHERE ${keyColumns.map((c, i) => `m.${c} = ${snap}.${snapKeyColumns[i]}`).join(' AND ')})`;
      const matchSnap = snapKeyColumns.map((c, i) => `s.${c} = ${main}.${keyColumns[i]}`).join(' AND ');
      const keyInsert = withoutRowid ? '' : 'rowid, ';
      const snapKeyInsert = withoutRowid ? '' : '__rowid, ';
      parentsOf.set(
        name,
        (
          sqlite.prepare('SELECT DISTINCT "table" AS parent FROM pragma_foreign_key_list(?)').all(name) as {
            parent: string;
          }[]
        ).map((r) => r.parent),
      );
      copies.push({
        name,
        withoutRowid,
        remove: [sqlite.prepare(`DELETE FROM ${main} WHERE ${key} IN (${todo}) AND NOT ${inSnap}`)],
        putBack: [
          // UPDATE, not DELETE and INSERT: deleting a parent row would cascade to its children.
          sqlite.prepare(
            `UPDATE ${main} SET (${list}) = (SELECT ${list} FROM ${snap} s WHERE ${matchSnap}) WHERE ${key} IN (${todo}) AND ${inSnap}`,
          ),
          sqlite.prepare(
            `INSERT INTO ${main} (${keyInsert}${list}) SELECT ${snapKeyInsert}${list} FROM ${snap} WHERE ${snapKey} IN (${todo}) AND NOT ${inMain}`,
          ),
        ],
        take: [
          sqlite.prepare(`DELETE FROM ${snap} WHERE ${snapKey} IN (${todo})`),
          sqlite.prepare(
            `INSERT INTO ${snap} (${snapKeyInsert}${list}) SELECT ${keyInsert}${list} FROM ${main} WHERE ${key} IN (${todo})`,
          ),
        ],
      });
    }
    sqlite.exec('COMMIT');
  } catch (error) {
    sqlite.exec('ROLLBACK');
    throw error;
  }
  const parentsFirst = sortParentsFirst(copies, parentsOf);
  const rowidTables = parentsFirst.filter((c) => !c.withoutRowid);
  // The counters (WITHOUT ROWID) after every table whose triggers move them.
  const withoutRowidTables = parentsFirst.filter((c) => c.withoutRowid);

  const writtenTables = sqlite.prepare('SELECT DISTINCT tbl FROM temp.fixture_dirty');
  const fillTodo = sqlite.prepare('INSERT INTO temp.fixture_todo SELECT rid FROM temp.fixture_dirty WHERE tbl = ?');
  const clearTodo = sqlite.prepare('DELETE FROM temp.fixture_todo');
  const clearDirty = sqlite.prepare('DELETE FROM temp.fixture_dirty');

  /**
   * Runs each pass's statements for every written table, in the pass's order, in one transaction.
   * The written rows are read again at each table: a cascade or a trigger of an earlier table
   * marks rows of later ones.
   */
  const apply = (passes: [TableCopy[], (copy: TableCopy) => SqliteStatement[]][]): number => {
    let rows = 0;
    sqlite.exec('BEGIN IMMEDIATE');
    try {
      for (const [tables, steps] of passes) {
        for (const copy of tables) {
          const statements = steps(copy);
          if (statements.length === 0) continue;
          const written = new Set((writtenTables.all() as { tbl: string }[]).map((r) => r.tbl));
          if (!written.has(copy.name)) continue;
          clearTodo.run();
          rows += Number(fillTodo.run(copy.name).changes);
          for (const statement of statements) statement.run();
        }
      }
      clearTodo.run();
      clearDirty.run();
      sqlite.exec('COMMIT');
    } catch (error) {
      sqlite.exec('ROLLBACK');
      throw error;
    }
    return rows;
  };

  return {
    restore: () =>
      store.exclusive(() =>
        apply([
          [[...rowidTables].reverse(), (copy) => copy.remove],
          [rowidTables, (copy) => copy.putBack],
          [withoutRowidTables, (copy) => [...copy.remove, ...copy.putBack]],
        ]),
      ),
    take: () => store.exclusive(() => apply([[parentsFirst, (copy) => copy.take]])),
  };
}

/** `copies` with every table after the tables it references. */
function sortParentsFirst(copies: TableCopy[], parentsOf: Map<string, string[]>): TableCopy[] {
  const byName = new Map(copies.map((c) => [c.name, c]));
  const sorted: TableCopy[] = [];
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const parent of parentsOf.get(name) ?? []) visit(parent);
    const copy = byName.get(name);
    if (copy) sorted.push(copy);
  };
  for (const copy of copies) visit(copy.name);
  return sorted;
}
