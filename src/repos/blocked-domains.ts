/** Blocked domains of a project: the list query and the row → API mapper. */
import type { Kysely, Selectable } from 'kysely';
import type { BlockedDomainsTable, Database } from '../db/schema.js';
import { newestFirstPage } from './newest-first-page.js';
import type { z } from '@hono/zod-openapi';
import type { BlockedDomain } from '../schemas/resources.js';

export type BlockedDomainRow = Selectable<BlockedDomainsTable>;

export type BlockedDomainRecord = z.output<typeof BlockedDomain>;

/** Row → API (schema `BlockedDomain`); `project_id` stays internal. */
export const toBlockedDomain = (row: BlockedDomainRow): BlockedDomainRecord => ({
  id: row.id,
  domain: row.domain,
  reason: row.reason,
  createdAt: row.created_at,
});

/**
 * One page of the blocked domains of project `projectId` (already checked to be the caller's),
 * newest `createdAt` first (ties: `id` descending; index `blocked_domains_project_order`), and
 * the exact number of them (the `project` counter).
 */
export async function listBlockedDomains(db: Kysely<Database>, projectId: string, limit: number, offset: number) {
  const { rows, total } = await newestFirstPage(db, 'blocked_domains', projectId, limit, offset);
  return { items: rows.map(toBlockedDomain), total };
}
