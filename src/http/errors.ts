/**
 * The one error vocabulary of the API (contract §7, decisions.md §4): every failure becomes an
 * `ApiError` and every `ApiError` becomes the envelope `{ ok: false, error: { code, message } }`
 * with the status of `STATUS_BY_CODE`.
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export const STATUS_BY_CODE = {
  /** HTTP parsing refused the request before routing (decisions.md §4). */
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  UPGRADE_REQUIRED: 402,
  SCOPE_REQUIRED: 403,
  /** The fixture admin API refused the caller (decisions.md §14). */
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  /** Request headers (or the request line) too large (decisions.md §4). */
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  /** Shutting down, or a fault rule (decisions.md §14, §15). */
  SERVICE_UNAVAILABLE: 503,
  /** `/readyz` while the service is not ready (decisions.md §15). */
  NOT_READY: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof STATUS_BY_CODE;
export const ERROR_CODES = Object.keys(STATUS_BY_CODE) as ErrorCode[];

/** One problem of a 422 `VALIDATION_ERROR`: `path` is `query.limit`, `body.subject`, `header.idempotency-key`, … */
export interface ValidationIssue {
  path: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ValidationIssue[],
    /** Extra response headers (`Allow`, `Retry-After`). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = STATUS_BY_CODE[code];
  }
}

export const notFound = (what: string) => new ApiError('NOT_FOUND', `${what} not found`);

export const validationError = (details: ValidationIssue[]) =>
  new ApiError('VALIDATION_ERROR', details.map((d) => `${d.path}: ${d.message}`).join('; ') || 'invalid request', details);

/** The JSON body of an error response. */
export function errorBody(error: ApiError) {
  return {
    ok: false as const,
    error: error.details ? { code: error.code, message: error.message, details: error.details } : { code: error.code, message: error.message },
  };
}
