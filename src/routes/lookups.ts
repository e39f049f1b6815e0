/**
 * The lookups every grouped route starts with (decisions.md §1, §3 "lookups"): the caller's
 * project addressed by the group id of the path, then a site of it. A record of another
 * account answers exactly like a missing one.
 */
import type { Context } from 'hono';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { AppEnv } from '../http/context.js';
import { type Group, groupIdOf } from '../http/groups.js';
import { type ProjectRecord, requireProject } from '../repos/projects.js';
import { type SiteRecord, requireSite } from '../repos/sites.js';

/**
 * The calling account's project named by `params` (`projectId` or `workspaceId`, per `group`).
 * @throws ApiError NOT_FOUND when it is missing or another account's.
 */
export function requireCallerProject(
  c: Context<AppEnv>,
  db: Kysely<Database>,
  group: Group,
  params: object,
): Promise<ProjectRecord> {
  return requireProject(db, c.get('caller').account.id, groupIdOf(group, params));
}

/**
 * The calling account's project named by `params` and its site `params.siteId`.
 * @throws ApiError NOT_FOUND when either is missing, or the site belongs to another project.
 */
export async function requireCallerSite(
  c: Context<AppEnv>,
  db: Kysely<Database>,
  group: Group,
  params: { siteId: string },
): Promise<{ project: ProjectRecord; site: SiteRecord }> {
  const project = await requireCallerProject(c, db, group, params);
  return { project, site: await requireSite(db, project.id, params.siteId) };
}
