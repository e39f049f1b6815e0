/**
 * Schemas shared by every resource: identifiers, date-times, the envelope (contract §2), the
 * pagination object and query (contract §4, §8; decisions.md §5) and the error responses.
 * Every route's OpenAPI description is generated from these.
 */
import { z } from '@hono/zod-openapi';

export const Id = z.string().min(1).max(200);
/** ISO 8601 UTC date-time with milliseconds, or null. */
export const DateTime = z.string().openapi({ format: 'date-time', example: '2026-03-01T09:30:00.000Z' });
export const NullableDateTime = DateTime.nullable();
export const Uri = z.string().openapi({ format: 'uri', example: 'https://example.com/page' });
export const Email = z.string().openapi({ format: 'email', example: 'ana@example.com' });

export const Pagination = z
  .object({
    page: z.number().int().openapi({ example: 1 }),
    limit: z.number().int().openapi({ example: 25 }),
    total: z.number().int().openapi({ description: 'Number of records matching the filters', example: 120 }),
    hasMore: z.boolean().openapi({ description: '`page * limit < total`' }),
  })
  .openapi('Pagination');

/** The largest `page` accepted: far past any real list, and safe for SQLite's OFFSET. */
export const PAGE_MAX = 1_000_000_000;

/**
 * A whole-number query parameter `name` in [min, max]: decimal digits only (`abc`, `2.5`, `1e3`,
 * `0x10`, `+1` and the empty string are 422 `VALIDATION_ERROR`s naming the parameter), never
 * clamped. Undefined when absent. Contract §9.3, decisions.md §5.
 */
export const queryInteger = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, `${name} must be a whole number`)
    .transform(Number)
    .pipe(z.number().min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`))
    .optional();

const pageParam = (name: string, min: number, max: number, fallback: number, description: string) =>
  queryInteger(name, min, max)
    .transform((value) => value ?? fallback)
    .openapi({ param: { name, in: 'query' }, type: 'integer', minimum: min, maximum: max, default: fallback, description, example: fallback });

/** `page` (1–PAGE_MAX, default 1) and `limit` (1–100, default 25); anything else is 422, never clamped. */
export const PageQuery = z.object({
  page: pageParam('page', 1, PAGE_MAX, 1, 'Page number, from 1'),
  limit: pageParam('limit', 1, 100, 25, 'Page size, 1–100'),
});
export type PageQuery = z.infer<typeof PageQuery>;

/** `{ ok: true, data }` around a payload schema. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ ok: z.literal(true), data });

/** A paginated list payload: `{ data: [...], pagination }`. */
export const paginated = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), pagination: Pagination });

export const ErrorEnvelope = z
  .object({
    ok: z.literal(false),
    error: z.object({
      code: z.string().openapi({ description: 'Stable, machine-readable code', example: 'NOT_FOUND' }),
      message: z.string().openapi({ description: 'For humans; may change' }),
      details: z
        .array(z.object({ path: z.string().openapi({ example: 'query.limit' }), message: z.string() }))
        .optional()
        .openapi({ description: 'VALIDATION_ERROR only: one entry per problem' }),
    }),
  })
  .openapi('Error');

const errorDescriptions = {
  401: 'UNAUTHORIZED: token missing, malformed, unknown, expired or revoked',
  402: 'UPGRADE_REQUIRED: the account plan does not allow writes',
  403: 'SCOPE_REQUIRED: the token lacks the required scope',
  404: 'NOT_FOUND: the resource is not available to this account',
  409: 'IDEMPOTENCY_CONFLICT: a request with this key is still in flight',
  413: 'PAYLOAD_TOO_LARGE: body over the size limit',
  415: 'UNSUPPORTED_MEDIA_TYPE: the body is not application/json',
  422: 'VALIDATION_ERROR (details name each problem) or IDEMPOTENCY_KEY_REUSED',
  429: 'RATE_LIMIT_EXCEEDED: see Retry-After',
  500: 'INTERNAL_ERROR',
} as const;

type ErrorStatus = keyof typeof errorDescriptions;

const errorResponse = (status: ErrorStatus) => ({
  description: errorDescriptions[status],
  content: { 'application/json': { schema: ErrorEnvelope } },
});

/** The error responses of an operation; reads answer 401/403/404/422/429/500, writes add more. */
export function errorResponses(kind: 'read' | 'write' | 'me' = 'read') {
  const statuses: ErrorStatus[] =
    kind === 'me' ? [401, 429, 500] : kind === 'read' ? [401, 403, 404, 422, 429, 500] : [401, 402, 403, 404, 409, 413, 415, 422, 429, 500];
  return Object.fromEntries(statuses.map((s) => [s, errorResponse(s)])) as Record<ErrorStatus, ReturnType<typeof errorResponse>>;
}

/** A `200` (or other) JSON response wrapping `data` in the envelope. */
export const okResponse = <T extends z.ZodType>(data: T, description: string) => ({
  description,
  content: { 'application/json': { schema: envelope(data) } },
});

/** The pagination payload for a page of `items` out of `total`. */
export function page<T>(items: T[], query: PageQuery, total: number) {
  return {
    data: items,
    pagination: { page: query.page, limit: query.limit, total, hasMore: query.page * query.limit < total },
  };
}

/** SQL OFFSET of a page. */
export const offsetOf = (query: PageQuery) => (query.page - 1) * query.limit;
