/** Projects (workspaces): queries scoped to an account, and the row → API mapper. */
import type { Kysely } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import type { Database, ProjectRow } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { cachedValue } from './data-cache.js';
import type { z } from '@hono/zod-openapi';
import type { Project } from '../schemas/projects.js';

export type ProjectRecord = z.output<typeof Project>;

type ProjectWithCount = ProjectRow & { site_count: number };

export const toProject = (row: ProjectWithCount): ProjectRecord => ({
  id: row.id,
  name: row.name,
  siteCount: row.site_count,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const withSiteCount = (db: Kysely<Database>) =>
  db
    .selectFrom('projects')
    .selectAll('projects')
    .select((eb) =>
      eb
        .selectFrom('sites')
        .whereRef('sites.project_id', '=', 'projects.id')
        .select(eb.fn.countAll<number>().as('n'))
        .as('site_count'),
    );

/** One page of the account's projects, newest first, and the total. */
export async function listProjects(db: Kysely<Database>, accountId: string, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    withSiteCount(db)
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
    db
      .selectFrom('projects')
      .where('account_id', '=', accountId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { items: (rows as ProjectWithCount[]).map(toProject), total: Number(total.n) };
}

const projectOfAccount = precompiledQuery<'projectId' | 'accountId', ProjectWithCount>((db, param) =>
  withSiteCount(db).where('id', '=', param('projectId')).where('account_id', '=', param('accountId')),
);

/** What `projectOfAccount` reads. */
const PROJECT_TABLES = ['projects', 'sites'] as const;

/**
 * The project `projectId` if it belongs to `accountId`: every project route's first read, kept in
 * the store's data cache of projects and sites while neither changes (decisions.md §16 "Caches").
 * The record is shared by the requests it serves: callers do not change it.
 * @throws ApiError NOT_FOUND otherwise (another account's project answers like a missing one).
 */
export async function requireProject(
  db: Kysely<Database>,
  accountId: string,
  projectId: string,
): Promise<ProjectRecord> {
  return cachedValue(db, PROJECT_TABLES, `project|${accountId}|${projectId}`, async () => {
    const row = await projectOfAccount.first(db, { projectId, accountId });
    if (!row) throw notFound('Project');
    return toProject(row);
  });
}
