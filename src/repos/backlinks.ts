/**
 * Tracked backlinks and their checks: queries and the row → API mappers (contract §2 "Backlink",
 * "Backlink check"; decisions.md §5 for order and `hasCheckError`).
 */
import type { Kysely, Selectable } from 'kysely';
import { type ParamOf, precompiledQuery } from '../db/compiled.js';
import { type JsonMembers, jsonRows } from '../db/json-rows.js';
import type { BacklinkChecksTable, BacklinksTable, Database } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { BACKLINK_STATUSES } from '../domain/enums.js';
import { type OrderKey, pageStart } from './page-anchors.js';
import { countedTotal, keysOf } from './row-counts.js';
import type { z } from '@hono/zod-openapi';
import type { Backlink, BacklinkCheck } from '../schemas/resources.js';

export type BacklinkRow = Selectable<BacklinksTable>;
export type BacklinkCheckRow = Selectable<BacklinkChecksTable>;

export type BacklinkRecord = z.output<typeof Backlink>;

export type BacklinkCheckRecord = z.output<typeof BacklinkCheck>;

/** Row → API (contract §2 "Backlink"); `project_id` stays internal. */
export const toBacklink = (row: BacklinkRow): BacklinkRecord => ({
  id: row.id,
  siteId: row.site_id,
  source: row.source,
  acquisitionOrigin: row.acquisition_origin,
  sourceUrl: row.source_url,
  targetUrl: row.target_url,
  category: row.category,
  status: row.status,
  observedAnchor: row.observed_anchor,
  lastCheckedAt: row.last_checked_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * `toBacklink`'s members, in its order, as the store writes them (`listBacklinks`):
 * test/store/json-rows.test.ts checks that both give the same bytes.
 */
const BACKLINK_MEMBERS: JsonMembers<keyof BacklinkRow> = [
  ['id', 'id'],
  ['siteId', 'site_id'],
  ['source', 'source'],
  ['acquisitionOrigin', 'acquisition_origin'],
  ['sourceUrl', 'source_url'],
  ['targetUrl', 'target_url'],
  ['category', 'category'],
  ['status', 'status'],
  ['observedAnchor', 'observed_anchor'],
  ['lastCheckedAt', 'last_checked_at'],
  ['createdAt', 'created_at'],
  ['updatedAt', 'updated_at'],
];

/** Row → API (contract §2 "Backlink check"): 0/1 → booleans, `observed_rel` JSON → array. */
export const toBacklinkCheck = (row: BacklinkCheckRow): BacklinkCheckRecord => ({
  id: row.id,
  status: row.status,
  requestedSourceUrl: row.requested_source_url,
  finalSourceUrl: row.final_source_url,
  httpStatus: row.http_status,
  targetFound: row.target_found === 1,
  observedTargetUrl: row.observed_target_url,
  observedAnchor: row.observed_anchor,
  observedRel: JSON.parse(row.observed_rel) as string[],
  hasError: row.has_error === 1,
  checkedAt: row.checked_at,
});

export interface BacklinkFilter {
  /** The caller's project (already checked). */
  projectId: string;
  /** A site of that project (already checked); narrows the list to it. */
  siteId?: string;
  status?: BacklinkRow['status'];
}

/**
 * The backlink list in order, starting at the row whose key is `(fromCreatedAt, fromId)` when the
 * shape has `from` (newest first, so keys at or below it). The WHERE clause is exactly the
 * leading columns of one of the four `backlinks_{project,site}[_status]_order` indexes, so the
 * list walks it in order; a site filter replaces the project one (the site was checked to belong
 * to the project). Shape: `project|site`, `+status`, `+from`.
 */
const inListOrder = (db: Kysely<Database>, param: ParamOf<ListParam>, shape: string) =>
  db
    .selectFrom('backlinks')
    .$if(shape.startsWith('site'), (qb) => qb.where('site_id', '=', param('scope')))
    .$if(shape.startsWith('project'), (qb) => qb.where('project_id', '=', param('scope')))
    .$if(shape.includes('+status'), (qb) => qb.where('status', '=', param<BacklinkRow['status']>('status')))
    .$if(shape.includes('+from'), (qb) =>
      qb.where((eb) => eb(eb.refTuple('created_at', 'id'), '<=', eb.tuple(param('fromCreatedAt'), param('fromId')))),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc');

type ListParam = 'scope' | 'status' | 'fromCreatedAt' | 'fromId' | 'limit' | 'offset';

/** The page's items, as JSON text (src/db/json-rows.ts), newest first. */
const listPage = precompiledQuery<ListParam, { item: string }, string>((db, param, shape) =>
  jsonRows(
    db,
    inListOrder(db, param, shape).limit(param<number>('limit')).offset(param<number>('offset')),
    BACKLINK_MEMBERS,
    [
      ['createdAt', 'desc'],
      ['id', 'desc'],
    ],
  ),
);
const listKey = precompiledQuery<ListParam, { created_at: string; id: string }, string>((db, param, shape) =>
  inListOrder(db, param, shape).select(['created_at', 'id']).limit(1).offset(param<number>('offset')),
);

/**
 * One page of a project's backlinks matching `filter`, newest `createdAt` first (ties: `id`
 * descending), each item the JSON text of its API record (`toBacklink`'s, written by the store:
 * src/db/json-rows.ts), and the exact number of matches, from the `project:<status>` or `site:<status>`
 * counters (sql/sqlite/0003_row_counts.sql). A deep page seeks from the nearest anchor
 * (`./page-anchors.ts`) rather than walking the whole OFFSET.
 */
export async function listBacklinks(db: Kysely<Database>, filter: BacklinkFilter, limit: number, offset: number) {
  const [scope, kind] = filter.siteId !== undefined ? [filter.siteId, 'site'] : [filter.projectId, 'project'];
  const shapeOf = (from: OrderKey | null) =>
    `${kind}${filter.status !== undefined ? '+status' : ''}${from !== null ? '+from' : ''}`;
  const paramsOf = (from: OrderKey | null, rows: number, skip: number) => ({
    scope,
    status: filter.status,
    fromCreatedAt: from === null ? undefined : String(from[0]),
    fromId: from?.[1],
    limit: rows,
    offset: skip,
  });
  const start = await pageStart(
    db,
    'backlinks',
    `backlinks|${kind}:${scope}|${filter.status ?? '*'}`,
    offset,
    async (from, skip) => {
      const row = await listKey.first(db, paramsOf(from, 1, skip), shapeOf(from));
      return row && ([row.created_at, row.id] as const);
    },
  );
  const [rows, total] = await Promise.all([
    listPage.all(db, paramsOf(start.from, limit, start.skip), shapeOf(start.from)),
    countedTotal(
      db,
      'backlinks',
      scope,
      keysOf(kind, filter.status !== undefined ? [filter.status] : BACKLINK_STATUSES),
    ),
  ]);
  return { items: rows.map((row) => row.item), total };
}

const backlinkOfProject = precompiledQuery<'backlinkId' | 'projectId', BacklinkRow>((db, param) =>
  db
    .selectFrom('backlinks')
    .selectAll()
    .where('id', '=', param('backlinkId'))
    .where('project_id', '=', param('projectId')),
);

/**
 * The backlink `backlinkId` of project `projectId` (already checked to be the caller's).
 * @throws ApiError NOT_FOUND when it is missing or belongs to another project.
 */
export async function requireBacklink(
  db: Kysely<Database>,
  projectId: string,
  backlinkId: string,
): Promise<BacklinkRecord> {
  const row = await backlinkOfProject.first(db, { backlinkId, projectId });
  if (!row) throw notFound('Backlink');
  return toBacklink(row);
}

/**
 * One page of a backlink's checks, newest `checkedAt` first (ties: `id` descending), the exact
 * number of checks (its `backlink` counter), and `hasCheckError`: the `hasError` of the newest
 * check, false when none (decisions.md §5).
 */
export async function listBacklinkChecks(db: Kysely<Database>, backlinkId: string, limit: number, offset: number) {
  const [rows, total, newest] = await Promise.all([
    checksPage.all(db, { backlinkId, limit, offset }),
    countedTotal(db, 'backlink_checks', backlinkId, ['backlink']),
    newestCheckError.first(db, { backlinkId }),
  ]);
  return { items: rows.map(toBacklinkCheck), total, hasCheckError: newest?.has_error === 1 };
}

const checksNewestFirst = (db: Kysely<Database>, backlinkId: string) =>
  db
    .selectFrom('backlink_checks')
    .where('backlink_id', '=', backlinkId)
    .orderBy('checked_at', 'desc')
    .orderBy('id', 'desc');
const checksPage = precompiledQuery<'backlinkId' | 'limit' | 'offset', BacklinkCheckRow>((db, param) =>
  checksNewestFirst(db, param('backlinkId')).selectAll().limit(param<number>('limit')).offset(param<number>('offset')),
);
const newestCheckError = precompiledQuery<'backlinkId', { has_error: number }>((db, param) =>
  checksNewestFirst(db, param('backlinkId')).select('has_error').limit(1),
);
