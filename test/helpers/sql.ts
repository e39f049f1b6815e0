/**
 * Raw SQL on a test's store, for assertions and for setting up what the API cannot: the same
 * text on both stores, with `?` placeholders (turned into `$1, $2, …` on PostgreSQL), run through
 * the store's query builder, so on SQLite it waits its turn behind any open transaction like the
 * service's own statements.
 */
import { CompiledQuery, sql } from 'kysely';
import type { Store } from '../../src/db/connection.js';

/** `text` with PostgreSQL's numbered placeholders for `?` outside quoted strings and names. */
function placeholders(store: Store, text: string): string {
  if (store.dialect !== 'postgres') return text;
  let n = 0;
  let quote: string | null = null;
  let out = '';
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = null;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '?') {
      out += `$${++n}`;
      continue;
    }
    out += char;
  }
  return out;
}

/** Every row `text` gives with `params`. */
export async function sqlAll<T = Record<string, any>>(store: Store, text: string, ...params: unknown[]): Promise<T[]> {
  const result = await store.db.executeQuery<T>(CompiledQuery.raw(placeholders(store, text), params));
  return result.rows;
}

/** The first row `text` gives with `params`, or undefined. */
export async function sqlGet<T = Record<string, any>>(
  store: Store,
  text: string,
  ...params: unknown[]
): Promise<T | undefined> {
  return (await sqlAll<T>(store, text, ...params))[0];
}

/** Runs one statement; resolves with the number of rows it changed. */
export async function sqlRun(store: Store, text: string, ...params: unknown[]): Promise<number> {
  const result = await store.db.executeQuery(CompiledQuery.raw(placeholders(store, text), params));
  return Number(result.numAffectedRows ?? 0n);
}

/** Runs statements without parameters (several, separated by `;`), in order. */
export async function sqlScript(store: Store, text: string): Promise<void> {
  if (store.dialect === 'sqlite') await store.exclusive((sqlite) => sqlite.exec(text));
  else await sql.raw(text).execute(store.db);
}

/**
 * Makes the store refuse every `operation` (`INSERT` or `UPDATE`) of `table` whose new row meets
 * `condition` (SQL over `NEW`, the same on both stores, e.g. `NEW.status = 'sent'`) with an error
 * whose message is `message`, until the returned function is called: a failing write for tests of
 * what follows one.
 */
export async function refuseWrites(
  store: Store,
  operation: 'INSERT' | 'UPDATE',
  table: string,
  condition: string,
  message: string,
): Promise<() => Promise<void>> {
  const name = `test_refuse_${table}`;
  const quoted = message.replaceAll("'", "''");
  if (store.dialect === 'sqlite') {
    await sqlScript(
      store,
      `CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} WHEN ${condition} BEGIN SELECT RAISE(ABORT, '${quoted}'); END`,
    );
    return () => sqlScript(store, `DROP TRIGGER ${name}`);
  }
  await sqlScript(
    store,
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF ${condition} THEN RAISE EXCEPTION '${quoted}'; END IF; RETURN NEW; END $$;
     CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();`,
  );
  return () => sqlScript(store, `DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}();`);
}
