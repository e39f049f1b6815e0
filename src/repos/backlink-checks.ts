/**
 * The backlink monitor's statements (decisions.md §13): which backlinks a pass checks, in what
 * order, and recording checks — each one's `backlink_checks` row and the backlink's new `status`,
 * `observed_anchor`, `last_checked_at` and `updated_at` — in one transaction. The `row_counts`
 * triggers (sql/sqlite/0003_row_counts.sql) keep the list totals and pipeline counts exact.
 */
import { sql, type Kysely } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import { inTransaction } from '../db/connection.js';
import type { BacklinksTable, Database, SqlBool } from '../db/schema.js';
import type { BacklinkCheckRecord } from './backlinks.js';

/** Which backlinks a pass may check; every given field narrows it (all of them: every backlink). */
export interface BacklinkScope {
  projectId?: string;
  siteId?: string;
  /** These backlinks only. */
  backlinkIds?: readonly string[];
}

/** A backlink as the monitor reads it. */
export interface MonitorCandidate {
  id: string;
  sourceUrl: string;
  targetUrl: string;
  /** The position of the row in the walk (`''` for a never-checked one), for the next batch. */
  cursor: string;
}

/**
 * What a pass walks: `due` (decisions.md §13 "What is checked"): non-`closed` backlinks never
 * checked or last checked before `before` (ISO), never-checked first, then the oldest, ties by id;
 * `all`: every non-`closed` backlink in scope, by id.
 */
export type Walk = { kind: 'due'; before: string } | { kind: 'all' };

// The due walk's key: `coalesce(last_checked_at, '')` sorts a never-checked row first and lets
// the partial index backlinks_monitor_due (sql/sqlite/0004_backlink_monitor.sql) serve the walk.
const dueKey = sql<string>`coalesce(last_checked_at, '')`;

function scoped(db: Kysely<Database>, scope: BacklinkScope, walk: Walk) {
  return (
    db
      .selectFrom('backlinks')
      // A literal, not a parameter, so the planner can match the partial index's WHERE.
      .where(sql<boolean>`status <> 'closed'`)
      .$if(scope.projectId !== undefined, (qb) => qb.where('project_id', '=', scope.projectId!))
      .$if(scope.siteId !== undefined, (qb) => qb.where('site_id', '=', scope.siteId!))
      .$if(scope.backlinkIds !== undefined, (qb) =>
        qb.where('id', 'in', scope.backlinkIds!.length ? scope.backlinkIds! : ['']),
      )
      .$if(walk.kind === 'due', (qb) => qb.where(dueKey, '<', walk.kind === 'due' ? walk.before : ''))
  );
}

/** How many backlinks `walk` would check now (for a progress bar). */
export async function countMonitorCandidates(db: Kysely<Database>, scope: BacklinkScope, walk: Walk): Promise<number> {
  const row = await scoped(db, scope, walk)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The next `limit` backlinks of `walk` after position `after` (null: from the start). A row
 * checked meanwhile leaves a due walk (its `last_checked_at` moves past `before`) and keeps its
 * place in an `all` walk, so a walk visits every row at most once.
 */
export async function nextMonitorCandidates(
  db: Kysely<Database>,
  scope: BacklinkScope,
  walk: Walk,
  after: { cursor: string; id: string } | null,
  limit: number,
): Promise<MonitorCandidate[]> {
  if (walk.kind === 'all') {
    const rows = await scoped(db, scope, walk)
      .select(['id', 'source_url', 'target_url'])
      .$if(after !== null, (qb) => qb.where('id', '>', after!.id))
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, sourceUrl: r.source_url, targetUrl: r.target_url, cursor: '' }));
  }
  const rows = await scoped(db, scope, walk)
    .select(['id', 'source_url', 'target_url'])
    .select(dueKey.as('due_key'))
    .$if(after !== null, (qb) =>
      qb.where((eb) => eb(eb.tuple(dueKey, eb.ref('id')), '>', eb.tuple(after!.cursor, after!.id))),
    )
    .orderBy(dueKey)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, sourceUrl: r.source_url, targetUrl: r.target_url, cursor: String(r.due_key) }));
}

/** The newest check of a backlink, as rule 5 of decisions.md §13 compares with it. */
export interface PreviousCheckRow {
  targetFound: boolean;
  observedAnchor: string | null;
  observedRel: string[];
}

/** The statuses a check can set (decisions.md §13 "Status rules"). */
export type CheckStatus = Exclude<BacklinksTable['status'], 'pending' | 'closed'>;

/** A check to record (decisions.md §13 "The check record"): the API's shape, `hasError` following from `status`. */
export type NewCheck = Omit<BacklinkCheckRecord, 'status' | 'hasError' | 'requestedSourceUrl'> & {
  status: CheckStatus;
  requestedSourceUrl: string;
};

/** The statements of `recordBacklinkChecks`, each compiled once. */
const st = {
  previous: precompiledQuery((db, param) =>
    db
      .selectFrom('backlink_checks')
      .select(['target_found', 'observed_anchor', 'observed_rel'])
      .where('backlink_id', '=', param('backlinkId'))
      .orderBy('checked_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1),
  ),
  insert: precompiledQuery((db, param) =>
    db.insertInto('backlink_checks').values({
      id: param('id'),
      backlink_id: param('backlinkId'),
      status: param<CheckStatus>('status'),
      requested_source_url: param('requestedSourceUrl'),
      final_source_url: param('finalSourceUrl'),
      http_status: param<number | null>('httpStatus'),
      target_found: param<SqlBool>('targetFound'),
      observed_target_url: param('observedTargetUrl'),
      observed_anchor: param('observedAnchor'),
      observed_rel: param('observedRel'),
      has_error: param<SqlBool>('hasError'),
      checked_at: param('checkedAt'),
    }),
  ),
  // decisions.md §13: observed_anchor moves only when the link was found.
  update: precompiledQuery((db, param) =>
    db
      .updateTable('backlinks')
      .set((eb) => ({
        status: param<CheckStatus>('status'),
        last_checked_at: param('checkedAt'),
        updated_at: param('checkedAt'),
        observed_anchor: eb
          .case()
          .when(eb.val(param<SqlBool>('targetFound')), '=', 1)
          .then(param<string | null>('observedAnchor'))
          .else(eb.ref('observed_anchor'))
          .end(),
      }))
      .where('id', '=', param('backlinkId'))
      .where('status', '<>', sql.lit<BacklinksTable['status']>('closed')),
  ),
};

/** One check to record: the backlink, and how its new check follows from its newest one. */
export interface CheckToRecord {
  backlinkId: string;
  decide: (previous: PreviousCheckRow | null) => NewCheck;
}

/**
 * Records checks in one transaction (a group commit: one disk sync for many checks), each whole:
 * for each backlink it reads its newest check, lets `decide` turn it into the new check, inserts
 * that and moves the backlink's `status`, `last_checked_at`, `updated_at` and (when found)
 * `observed_anchor`. Either every check of the call is written or none is.
 * @returns per item, the recorded check, or null (nothing written for it) when the backlink is
 * gone or `closed`.
 * @throws what SQLite throws (e.g. SQLITE_BUSY past the busy timeout); nothing is written then.
 */
export function recordBacklinkChecks(
  db: Kysely<Database>,
  items: readonly CheckToRecord[],
): Promise<(NewCheck | null)[]> {
  return inTransaction(db, async (trx) => {
    const recorded: (NewCheck | null)[] = [];
    for (const { backlinkId, decide } of items) {
      const row = await st.previous.first(trx, { backlinkId });
      const check = decide(
        row
          ? {
              targetFound: row.target_found === 1,
              observedAnchor: row.observed_anchor,
              observedRel: JSON.parse(row.observed_rel) as string[],
            }
          : null,
      );
      const targetFound = check.targetFound ? 1 : 0;
      // Each statement gets exactly its own parameters (node:sqlite refuses unknown ones).
      // The update first: it finds nothing for a closed or deleted backlink, and then nothing is written.
      const { status, checkedAt, observedAnchor } = check;
      if ((await st.update.run(trx, { backlinkId, status, checkedAt, targetFound, observedAnchor })) === 0) {
        recorded.push(null);
        continue;
      }
      await st.insert.run(trx, {
        ...check,
        backlinkId,
        targetFound,
        observedRel: JSON.stringify(check.observedRel),
        hasError: check.status === 'error' ? 1 : 0,
      });
      recorded.push(check);
    }
    return recorded;
  });
}

/** The ids of `scope` (project, site, backlinks) that name no record, e.g. `project prj_x`. */
export async function unknownScopeIds(db: Kysely<Database>, scope: BacklinkScope): Promise<string[]> {
  const unknown: string[] = [];
  if (
    scope.projectId !== undefined &&
    !(await db.selectFrom('projects').select('id').where('id', '=', scope.projectId).executeTakeFirst())
  ) {
    unknown.push(`project ${scope.projectId}`);
  }
  if (
    scope.siteId !== undefined &&
    !(await db.selectFrom('sites').select('id').where('id', '=', scope.siteId).executeTakeFirst())
  )
    unknown.push(`site ${scope.siteId}`);
  if (scope.backlinkIds?.length) {
    const found = new Set(
      (await db.selectFrom('backlinks').select('id').where('id', 'in', scope.backlinkIds).execute()).map((r) => r.id),
    );
    for (const id of scope.backlinkIds) if (!found.has(id)) unknown.push(`backlink ${id}`);
  }
  return unknown;
}
