/** The account record of `GET /me` (contract §2 "Account"; field names are ours). */
import { z } from '@hono/zod-openapi';
import { PLANS } from '../domain/enums.js';
import { DateTime, Email, Id, NullableDateTime } from './common.js';

export const Me = z
  .object({
    owner: z.object({
      id: Id,
      email: Email,
      name: z.string(),
      plan: z.enum(PLANS),
      planExpiresAt: NullableDateTime.openapi({ description: 'End of a `pro` plan; null otherwise' }),
      createdAt: DateTime,
    }),
    token: z
      .object({
        id: Id,
        name: z.string(),
        scopes: z.array(z.string()),
        prefix: z.string().openapi({ description: 'First characters of the token', example: 'oapi_Ab3d' }),
        lastFour: z.string().openapi({ example: 'x9Qz' }),
        createdAt: DateTime,
        expiresAt: NullableDateTime,
        lastUsedAt: NullableDateTime,
      })
      .openapi({ description: 'The token of this request; never its secret' }),
    projectCount: z.number().int(),
    workspaceCount: z.number().int().openapi({ description: 'Same as projectCount: a workspace is a project' }),
    activeTokenCount: z.number().int().openapi({ description: 'Tokens neither revoked nor expired' }),
    limits: z.object({
      requestsPerMinute: z.number().int().openapi({ description: 'Per token, sliding 60 s window; 0 means no limit' }),
      activeTokensPerAccount: z.number().int(),
      pageSizeMax: z.number().int(),
      pageSizeDefault: z.number().int(),
      maxBodyBytes: z.number().int().openapi({ description: 'Largest accepted request body, bytes' }),
    }),
  })
  .openapi('Account');
