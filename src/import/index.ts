/**
 * The import document (spec/import-format.md; decisions.md §12): `outreach-api import FILE`,
 * `serve --import FILE`, the demo seed and the test fixtures all load data through here.
 *
 * One document, one transaction: every record is validated, its parents checked and its rows
 * written in a single pass inside one transaction (`inTransaction`); the first refusal rolls everything back
 * and is reported as an `ImportError` naming the collection, index, id and field.
 */
import { readFileSync } from 'node:fs';
import type { z } from '@hono/zod-openapi';
import { sql, type Kysely } from 'kysely';
import { inTransaction, type Store } from '../db/connection.js';
import { pauseRowCounts } from '../db/bulk-load.js';
import type { CountedTable } from '../db/row-counters.js';
import type { Database } from '../db/schema.js';
import { COLLECTIONS, COLLECTION_NAMES } from './collections.js';
import { ImportContext } from './writer.js';
import { closestName, resemblanceLimit } from '../domain/closest.js';
import { NUL_MESSAGE, nulPaths } from '../domain/text.js';
import { FieldError } from './rules.js';

export type { ImportDocument } from './collections.js';

export interface ImportSummary {
  /**
   * Records written per collection of the document (only the collections it has), plus the
   * child rows written with them when there were any: `draftMessages`, `threadMessages`,
   * `discoveryQueries`, `backlinkChecks`.
   */
  counts: Record<string, number>;
}

/**
 * A refused import. `collection` is the document key (empty for a problem with the document
 * itself), `index` the record's position in it (-1 when no record is concerned), `id` the
 * record's id when it has one, `field` the offending field's path (e.g. `checks[0].checkedAt`)
 * or null when the record as a whole is refused.
 *
 * Message: `backlinks[3] (id "bl_9"): status: Invalid option: expected one of "pending"|…`.
 */
export class ImportError extends Error {
  override readonly name = 'ImportError';
  constructor(
    readonly collection: string,
    readonly index: number,
    readonly id: string | null,
    readonly field: string | null,
    readonly reason: string,
  ) {
    const where =
      index >= 0
        ? `${collection}[${index}]${id === null ? '' : ` (id ${JSON.stringify(id)})`}: `
        : collection
          ? `${collection}: `
          : '';
    super(`${where}${field ? `${field}: ` : ''}${reason}`);
  }
}

const idOf = (record: unknown): string | null => {
  const id = record && typeof record === 'object' ? (record as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : null;
};

/** `['checks', 0, 'checkedAt']` → `checks[0].checkedAt`. */
const pathOf = (path: readonly PropertyKey[]): string | null =>
  path.length === 0
    ? null
    : path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');

/** Missing fields read "is required" rather than zod's "expected string, received undefined". */
const parseOptions = {
  error: (issue: { code?: string; input?: unknown }) =>
    issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : undefined,
};

/** Longest unknown field name quoted whole in a refusal, characters. */
const MAX_NAME_CHARS = 64;

/** What a schema holds inside its wrappers (default, optional, nullable, …). */
interface SchemaDef {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
}
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/** The field names the record schema knows for the object at `path` (`['checks', 0]` → a check's). */
function knownFields(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: z.ZodType | undefined = schema;
  let i = 0;
  while (node) {
    const def = defOf(node);
    if (def.innerType) node = def.innerType;
    else if (def.type === 'array' && typeof path[i] === 'number') {
      i++;
      node = def.element;
    } else if (def.type === 'object' && def.shape) {
      if (i === path.length) return Object.keys(def.shape);
      node = def.shape[String(path[i++])];
    } else node = undefined;
  }
  return [];
}

/**
 * The refusal of a record that fails its schema. A field the format does not know is reported
 * first (a misspelt `siteid` is the reason `siteId` is missing), with the known field it
 * resembles; otherwise the first problem.
 */
function refuse(collection: string, index: number, record: unknown, error: z.ZodError, schema: z.ZodType): ImportError {
  const unknown = error.issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown) {
    const key = unknown.keys[0]!;
    // A name is the document's: a long one is cut, so the message stays a line.
    const field = key.length > MAX_NAME_CHARS ? `${key.slice(0, MAX_NAME_CHARS)}…` : key;
    const near = closestName(field, knownFields(schema, unknown.path), resemblanceLimit(field));
    const reason = `unknown field${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}`;
    return new ImportError(collection, index, idOf(record), pathOf([...unknown.path, field]), reason);
  }
  const issue = error.issues[0]!;
  return new ImportError(collection, index, idOf(record), pathOf(issue.path), issue.message);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The counted tables (sql/sqlite/0003_row_counts.sql) each collection writes: its own, and its records' child rows. */
const COUNTED_ROWS: Record<string, { table: CountedTable; children?: { field: string; table: CountedTable } }> = {
  keywords: { table: 'keywords' },
  blockedDomains: { table: 'blocked_domains' },
  prospects: { table: 'prospects' },
  contacts: { table: 'contacts' },
  drafts: { table: 'drafts' },
  threads: { table: 'threads', children: { field: 'messages', table: 'thread_messages' } },
  discoveryJobs: { table: 'discovery_jobs', children: { field: 'queries', table: 'discovery_queries' } },
  leads: { table: 'leads' },
  backlinks: { table: 'backlinks', children: { field: 'checks', table: 'backlink_checks' } },
};

/**
 * A table is recounted rather than counted row by row when the document brings at least
 * 1/RECOUNT_SHARE as many rows as it holds (1/8 for a table counted per parent). Measured per
 * row: the triggers' upserts cost about 3.7 µs for a backlink or a check; a recount 0.2 µs per
 * stored backlink and 0.4 µs per stored check, so it wins up to about 18 and 9 times the rows
 * brought.
 */
const RECOUNT_SHARE = 16;
/** Tables counted per parent record (a backlink's checks, …): one counter row per parent, so a recount costs more. */
const PER_PARENT: ReadonlySet<CountedTable> = new Set([
  'backlink_checks',
  'contacts',
  'thread_messages',
  'discovery_queries',
]);

/** The counted tables this document loads in bulk (see `RECOUNT_SHARE`), to pause during the import. */
async function bulkTables(trx: Kysely<Database>, doc: Record<string, unknown>): Promise<CountedTable[]> {
  const brought = new Map<CountedTable, number>();
  const add = (table: CountedTable, n: number) => brought.set(table, (brought.get(table) ?? 0) + n);
  for (const [name, { table, children }] of Object.entries(COUNTED_ROWS)) {
    const records = doc[name] as unknown[] | undefined;
    if (!records?.length) continue;
    add(table, records.length);
    if (!children) continue;
    let n = 0;
    for (const record of records) {
      const rows = isPlainObject(record) ? record[children.field] : undefined;
      if (Array.isArray(rows)) n += rows.length;
    }
    if (n > 0) add(children.table, n);
  }
  const stored = async (table: CountedTable) =>
    Number((await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(trx)).rows[0]?.n ?? 0);
  const share = (table: CountedTable) => (PER_PARENT.has(table) ? RECOUNT_SHARE / 2 : RECOUNT_SHARE);
  const bulk: CountedTable[] = [];
  for (const [table, n] of brought) if (n * share(table) >= (await stored(table))) bulk.push(table);
  return bulk;
}

/**
 * Validates `doc` and writes it, all or nothing, in one transaction of `store`.
 *
 * Collections are imported parents first (accounts, tokens, projects, sites, keywords,
 * blockedDomains, prospects, contacts, drafts, threads, emailConnections, emailSenders,
 * discoveryJobs, leads, backlinks), whatever their order in the document. A record whose id
 * already exists replaces it (with its checks, messages or queries).
 *
 * List totals stay exact (sql/sqlite/0003_row_counts.sql): a counted table the document loads in bulk
 * (at least 1/16 of the rows it already holds) is recounted once at the end of the transaction
 * instead of row by row, which keeps a large import as fast as it was without counters.
 *
 * @param options.nowIso the import time (ISO 8601): `createdAt` of tokens and of records that
 *   give none, and the instant at which tokens are counted as active. Default: now.
 * @returns the number of records written per collection.
 * @throws ImportError on the first refused record (bad field, a NUL character (U+0000) in any
 *   text, which no store may hold (issue #28), unknown or mismatched parent, an 11th active
 *   token, an unknown top-level key, a document that is not an object); the database is then
 *   unchanged.
 */
export async function importDocument(
  store: Store,
  doc: unknown,
  options: { nowIso?: string } = {},
): Promise<ImportSummary> {
  if (!isPlainObject(doc))
    throw new ImportError('', -1, null, null, 'the import document must be a JSON object of collections');
  for (const [key, value] of Object.entries(doc)) {
    if (!(COLLECTION_NAMES as readonly string[]).includes(key)) {
      throw new ImportError(
        '',
        -1,
        null,
        null,
        `unknown collection ${JSON.stringify(key)}; known: ${COLLECTION_NAMES.join(', ')}`,
      );
    }
    if (!Array.isArray(value)) throw new ImportError(key, -1, null, null, 'must be an array of records');
  }
  const nowIso = options.nowIso ? new Date(options.nowIso).toISOString() : new Date().toISOString();

  return inTransaction(store.db, async (trx) => {
    // Row counters of the tables loaded in bulk are rebuilt once at the end rather than kept row
    // by row; a refused import rolls this back with everything else.
    const resumeRowCounts = await pauseRowCounts(trx, await bulkTables(trx, doc));
    const ctx = new ImportContext(trx, nowIso);
    const counts: Record<string, number> = {};
    for (const collection of COLLECTIONS) {
      const records = doc[collection.name] as unknown[] | undefined;
      if (!records) continue;
      const { schema, name } = collection;
      const write = collection.write as (record: unknown, ctx: ImportContext) => Promise<void>;
      for (let index = 0; index < records.length; index++) {
        const record = records[index];
        const parsed = schema.safeParse(record, parseOptions);
        if (!parsed.success) throw refuse(name, index, record, parsed.error, schema);
        const [nulAt] = nulPaths(parsed.data);
        if (nulAt) throw new ImportError(name, index, idOf(record), pathOf(nulAt), NUL_MESSAGE);
        try {
          await write(parsed.data, ctx);
        } catch (error) {
          if (error instanceof FieldError) throw new ImportError(name, index, idOf(record), error.field, error.message);
          // A constraint the checks above did not foresee: still name the record.
          throw new ImportError(name, index, idOf(record), null, (error as Error).message);
        }
      }
      counts[name] = records.length;
    }
    await resumeRowCounts();
    return { counts: { ...counts, ...ctx.childCounts } };
  });
}

/**
 * Reads the JSON document at `path` and imports it (see `importDocument`).
 * @throws ImportError when the file cannot be read or is not JSON, or when the import is refused.
 */
export async function importFile(
  store: Store,
  path: string,
  options: { nowIso?: string } = {},
): Promise<ImportSummary> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ImportError('', -1, null, null, `cannot read ${path}: ${(error as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new ImportError('', -1, null, null, `${path} is not valid JSON: ${(error as Error).message}`);
  }
  return await importDocument(store, doc, options);
}
