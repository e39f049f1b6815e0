/** Sites of a project: queries and the row → API mapper (contract §2 "Site"). */
import type { Kysely } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import type { Database, SiteRow } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import { cachedValue } from './data-cache.js';
import type { z } from '@hono/zod-openapi';
import type { Site } from '../schemas/projects.js';

export type SiteRecord = z.output<typeof Site>;

export const toSite = (row: SiteRow): SiteRecord => ({
  id: row.id,
  name: row.name,
  domain: row.domain,
  url: row.url,
  status: row.status,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** One page of a project's sites, newest first, and the total. */
export async function listSites(db: Kysely<Database>, projectId: string, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('sites')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
    db
      .selectFrom('sites')
      .where('project_id', '=', projectId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(toSite), total: Number(total.n) };
}

const siteOfProject = precompiledQuery<'siteId' | 'projectId', SiteRow>((db, param) =>
  db.selectFrom('sites').selectAll().where('id', '=', param('siteId')).where('project_id', '=', param('projectId')),
);

/** What `siteOfProject` reads. */
const SITE_TABLES = ['sites'] as const;

/**
 * The site `siteId` of project `projectId` (already checked to be the caller's): every site
 * route's second read, kept in the store's data cache of sites while they are unchanged
 * (decisions.md §16 "Caches"). The record is shared by the requests it serves: callers do not
 * change it.
 * @throws ApiError NOT_FOUND when the site is missing or belongs to another project.
 */
export async function requireSite(db: Kysely<Database>, projectId: string, siteId: string): Promise<SiteRecord> {
  return cachedValue(db, SITE_TABLES, `site|${projectId}|${siteId}`, async () => {
    const row = await siteOfProject.first(db, { siteId, projectId });
    if (!row) throw notFound('Site');
    return toSite(row);
  });
}
