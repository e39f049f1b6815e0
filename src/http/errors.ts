/**
 * The HTTP side of the error vocabulary (contract §7, decisions.md §4): every failure becomes an
 * `ApiError` and every `ApiError` becomes the envelope `{ ok: false, error: { code, message } }`
 * with the status of `STATUS_BY_CODE`, the one table from a `DomainError` code to a status.
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { DomainError, type ErrorCode, type ValidationIssue } from '../domain/errors.js';

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
} as const satisfies Record<ErrorCode, ContentfulStatusCode>;

/**
 * A `DomainError` raised at the HTTP edge (auth, limiter, body, routing), or mapped from one
 * thrown deeper: carries its status and any extra response headers.
 */
export class ApiError extends DomainError {
  readonly status: ContentfulStatusCode;
  constructor(
    code: ErrorCode,
    message: string,
    details?: ValidationIssue[],
    /** Extra response headers (`Allow`, `Retry-After`). */
    readonly headers?: Record<string, string>,
  ) {
    super(code, message, details);
    this.status = STATUS_BY_CODE[code];
  }
}

/**
 * 401 `UNAUTHORIZED` with its RFC 6750 challenge: `WWW-Authenticate: Bearer realm="outreach-api"`,
 * plus `error="invalid_token"` when the request sent credentials (`authorization`: the request's
 * `Authorization` header). The message is the same whatever was wrong, so it reveals nothing.
 */
export const unauthorized = (authorization: string | undefined) =>
  new ApiError('UNAUTHORIZED', 'A valid bearer token is required', undefined, {
    'WWW-Authenticate': authorization
      ? 'Bearer realm="outreach-api", error="invalid_token"'
      : 'Bearer realm="outreach-api"',
  });

/** The JSON body of an error response. */
export function errorBody(error: DomainError) {
  return {
    ok: false as const,
    error: error.details
      ? { code: error.code, message: error.message, details: error.details }
      : { code: error.code, message: error.message },
  };
}
