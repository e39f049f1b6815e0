/**
 * The error vocabulary of the service (contract §7, decisions.md §4), without HTTP: code,
 * message and, for `VALIDATION_ERROR`, the problems. Repositories, workers and routes throw
 * `DomainError`; `src/http/errors.ts` maps each code to its status once.
 */

/**
 * Every error code of the contract and decisions.md §4/§14/§15. `BAD_REQUEST`: HTTP parsing
 * refused the request before routing; `FORBIDDEN`: the fixture admin API refused the caller;
 * `HEADERS_TOO_LARGE`: request headers or line too large; `SERVICE_UNAVAILABLE`: shutting down
 * or a fault rule; `NOT_READY`: `/readyz` while the service is not ready.
 */
export const ERROR_CODES = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'UPGRADE_REQUIRED',
  'SCOPE_REQUIRED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'IDEMPOTENCY_CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'VALIDATION_ERROR',
  'IDEMPOTENCY_KEY_REUSED',
  'RATE_LIMIT_EXCEEDED',
  'HEADERS_TOO_LARGE',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
  'NOT_READY',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** One problem of a 422 `VALIDATION_ERROR`: `path` is `query.limit`, `body.subject`, `header.idempotency-key`, … */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** A failure the client is told about: its `code` and `message` (and `details`) reach the envelope as they are. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ValidationIssue[],
  ) {
    super(message);
  }
}

/** `NOT_FOUND` for a missing resource, or one another tenant owns (decisions.md §1): "`what` not found". */
export const notFound = (what: string) => new DomainError('NOT_FOUND', `${what} not found`);

/** `VALIDATION_ERROR` listing every problem in its message and `details`. */
export const validationError = (details: ValidationIssue[]) =>
  new DomainError(
    'VALIDATION_ERROR',
    details.map((d) => `${d.path}: ${d.message}`).join('; ') || 'invalid request',
    details,
  );
