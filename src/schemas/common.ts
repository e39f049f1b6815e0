/**
 * Schemas shared by every resource: identifiers, date-times, the envelope (contract §2), the
 * pagination object and query (contract §4, §8; decisions.md §5) and the error responses.
 * Every route's OpenAPI description is generated from these.
 */
import { z } from '@hono/zod-openapi';
import { ERROR_CODES } from '../domain/errors.js';

export const Id = z.string().min(1).max(200);
/** ISO 8601 UTC date-time with milliseconds, or null. */
export const DateTime = z.string().openapi({ format: 'date-time', example: '2026-03-01T09:30:00.000Z' });
export const NullableDateTime = DateTime.nullable();
export const Uri = z.string().openapi({ format: 'uri', example: 'https://example.com/page' });
export const Email = z.string().openapi({ format: 'email', example: 'ana@example.com' });

/** The largest page size (`limit`, and `pageSize` where it is an alias), records (contract §9.3). */
export const PAGE_SIZE_MAX = 100;
/** The page size when none is given, records (contract §9.3). */
export const PAGE_SIZE_DEFAULT = 25;

export const Pagination = z
  .object({
    page: z.number().int().openapi({ example: 1 }),
    limit: z.number().int().openapi({ example: PAGE_SIZE_DEFAULT }),
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
    .openapi({
      param: { name, in: 'query' },
      type: 'integer',
      minimum: min,
      maximum: max,
      default: fallback,
      description,
      example: fallback,
    });

/** `page` (1–PAGE_MAX, default 1) and `limit` (1–PAGE_SIZE_MAX, default PAGE_SIZE_DEFAULT); anything else is 422, never clamped. */
export const PageQuery = z.object({
  page: pageParam('page', 1, PAGE_MAX, 1, 'Page number, from 1'),
  limit: pageParam('limit', 1, PAGE_SIZE_MAX, PAGE_SIZE_DEFAULT, `Page size, 1–${PAGE_SIZE_MAX}`),
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
      code: z.enum(ERROR_CODES).openapi({ description: 'Stable, machine-readable code', example: 'NOT_FOUND' }),
      message: z.string().openapi({ description: 'For humans; may change' }),
      details: z
        .array(z.object({ path: z.string().openapi({ example: 'query.limit' }), message: z.string() }))
        .optional()
        .openapi({ description: 'VALIDATION_ERROR only: one entry per problem' }),
    }),
  })
  .openapi('Error');

/**
 * The response headers of the API, registered once as `components.headers` (see `createApp`) and
 * referenced by every response (decisions.md §4, §7, §9; RFC 6750, RFC 9110, the IETF RateLimit
 * header draft).
 */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description: 'Identifies the request in the server logs; on every response',
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': { description: 'Requests allowed per 60 s window for this token', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': {
    description: 'When the window frees a request, Unix time in seconds',
    schema: { type: 'integer' },
  },
  RateLimit: {
    description: 'IETF RateLimit header: `"default";r=<remaining>;t=<seconds to reset>`',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'IETF RateLimit-Policy header: `"default";q=<limit>;w=60`',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying (at least 1)',
    schema: { type: 'integer', minimum: 1 },
  },
  'WWW-Authenticate': {
    description:
      'RFC 6750 challenge: `Bearer realm="outreach-api"`, with `, error="invalid_token"` when a token was sent',
    schema: { type: 'string' },
  },
  Allow: { description: 'The methods the path accepts', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer of an earlier request with the same key and body',
    schema: { type: 'string', const: 'true' },
  },
} as const;

type HeaderName = keyof typeof RESPONSE_HEADERS;
const headerRefs = (names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
/** The limiter's headers: on every response after authentication while `limits.requestsPerMinute` > 0. */
const RATE_LIMIT_HEADERS: HeaderName[] = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
];

const errorDescriptions = {
  401: 'UNAUTHORIZED: token missing, malformed, unknown, expired or revoked',
  402: 'UPGRADE_REQUIRED: the account plan does not allow writes',
  403: 'SCOPE_REQUIRED: the token lacks the required scope',
  404: 'NOT_FOUND: the resource is not available to this account',
  405: 'METHOD_NOT_ALLOWED: the path does not accept this method; Allow lists those it does',
  409: 'IDEMPOTENCY_CONFLICT: a request with this key is still in flight',
  413: 'PAYLOAD_TOO_LARGE: body over the size limit',
  415: 'UNSUPPORTED_MEDIA_TYPE: the body is not application/json',
  422: 'VALIDATION_ERROR (details name each problem) or IDEMPOTENCY_KEY_REUSED',
  429: 'RATE_LIMIT_EXCEEDED: see Retry-After',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE: the service is shutting down, or its database cannot serve now (unreachable, damaged, or a statement out of time); retry after Retry-After seconds',
} as const;

type ErrorStatus = keyof typeof errorDescriptions;

/** Headers by error status: 401 and 405 come before the limiter, so they carry none of its headers. */
const errorHeaders = (status: ErrorStatus): HeaderName[] =>
  status === 401
    ? ['X-Request-Id', 'WWW-Authenticate']
    : status === 405
      ? ['X-Request-Id', 'Allow']
      : status === 429
        ? ['X-Request-Id', ...RATE_LIMIT_HEADERS, 'Retry-After']
        : status === 503
          ? ['X-Request-Id', 'Retry-After']
          : ['X-Request-Id', ...RATE_LIMIT_HEADERS];

const errorResponse = (status: ErrorStatus) => ({
  description: errorDescriptions[status],
  headers: headerRefs(errorHeaders(status)),
  content: { 'application/json': { schema: ErrorEnvelope } },
});

/** The error responses of an operation; reads answer 401/403/404/405/422/429/500/503, writes add more. */
export function errorResponses(kind: 'read' | 'write' | 'me' = 'read') {
  const statuses: ErrorStatus[] =
    kind === 'me'
      ? [401, 405, 429, 500, 503]
      : kind === 'read'
        ? [401, 403, 404, 405, 422, 429, 500, 503]
        : [401, 402, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503];
  return Object.fromEntries(statuses.map((s) => [s, errorResponse(s)])) as Record<
    ErrorStatus,
    ReturnType<typeof errorResponse>
  >;
}

/**
 * A `200` (or other) JSON response wrapping `data` in the envelope, with its headers;
 * `replayable`: a write idempotent by key, whose stored answer is replayed with `Idempotent-Replayed`;
 * `rateLimited: false`: a response the limiter never sees (the fixture's admin API), without its headers.
 */
export const okResponse = <T extends z.ZodType>(
  data: T,
  description: string,
  options: { replayable?: boolean; rateLimited?: boolean } = {},
) => ({
  description,
  headers: headerRefs([
    'X-Request-Id',
    ...(options.rateLimited === false ? [] : RATE_LIMIT_HEADERS),
    ...(options.replayable ? (['Idempotent-Replayed'] as const) : []),
  ]),
  content: { 'application/json': { schema: envelope(data) } },
});

/** The pagination of the page `query` out of `total`. */
const paginationOf = (query: PageQuery, total: number) => ({
  page: query.page,
  limit: query.limit,
  total,
  hasMore: query.page * query.limit < total,
});

/** The pagination payload for a page of `items` out of `total`. */
export function page<T>(items: T[], query: PageQuery, total: number) {
  return { data: items, pagination: paginationOf(query, total) };
}

/**
 * The answer to a page whose items are JSON texts already (src/db/json-rows.ts): the bytes
 * `JSON.stringify({ ok: true, data: page(parsed items, query, total) })` would give.
 */
export function pageText(items: readonly string[], query: PageQuery, total: number): string {
  return `{"ok":true,"data":{"data":[${items.join(',')}],"pagination":${JSON.stringify(paginationOf(query, total))}}}`;
}

/** SQL OFFSET of a page. */
export const offsetOf = (query: PageQuery) => (query.page - 1) * query.limit;
