/** Keywords of a site: the list query and the row → API mapper. */
import type { Kysely, Selectable } from 'kysely';
import type { Database, KeywordsTable } from '../db/schema.js';
import { newestFirstPage } from './newest-first-page.js';
import type { z } from '@hono/zod-openapi';
import type { Keyword } from '../schemas/resources.js';

export type KeywordRow = Selectable<KeywordsTable>;

export type KeywordRecord = z.output<typeof Keyword>;

/** Row → API (schema `Keyword`); `project_id` stays internal. */
export const toKeyword = (row: KeywordRow): KeywordRecord => ({
  id: row.id,
  siteId: row.site_id,
  keyword: row.keyword,
  createdAt: row.created_at,
});

/**
 * One page of the keywords of site `siteId` (already checked to be in the caller's project),
 * newest `createdAt` first (ties: `id` descending; index `keywords_site_order`), and the exact
 * number of them (the `site` counter).
 */
export async function listKeywords(db: Kysely<Database>, siteId: string, limit: number, offset: number) {
  const { rows, total } = await newestFirstPage(db, 'keywords', siteId, limit, offset);
  return { items: rows.map(toKeyword), total };
}
