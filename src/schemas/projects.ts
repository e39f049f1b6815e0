/** Project (workspace) and site shapes (contract §2; the project record is ours: decisions.md §1). */
import { z } from '@hono/zod-openapi';
import { DateTime, Id, Uri } from './common.js';

export const Project = z
  .object({
    id: Id.openapi({ example: 'prj_acme' }),
    name: z.string().openapi({ example: 'Acme Outdoor' }),
    siteCount: z.number().int().openapi({ description: 'Number of sites in the project' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('Project');

export const Site = z
  .object({
    id: Id.openapi({ example: 'site_acme_blog' }),
    name: z.string(),
    domain: z.string().openapi({ example: 'blog.acme.test' }),
    url: Uri,
    status: z.string().openapi({ example: 'active' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('Site');
