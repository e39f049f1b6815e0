/**
 * `createApp(input, parts)` builds the HTTP application around the parts it is given (assembled
 * by `src/app.ts`): the request pipeline of decisions.md §3 (request id → auth → rate limit →
 * per-route scope → validation → handler), the public API's routes under `/api/public/v1`, the
 * generated OpenAPI 3.1 document at `/api/public/openapi.json`, the operator's endpoints, the
 * reference page, and, when given, an area of pages (the settings area) and the fixture's admin
 * API. Every response of the API, errors included, is the JSON envelope. This module knows none
 * of the parts: they plug in through `AppParts`, `PageArea` and `FixtureHooks` (./context.ts).
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { RESPONSE_HEADERS } from '../schemas/common.js';
import { clientReader } from './client.js';
import type { AppDeps, AppEnv, PageArea } from './context.js';
import { storeFailureOf } from '../db/failures.js';
import { ShareFullError } from '../db/share.js';
import { DomainError, validationError } from '../domain/errors.js';
import { ApiError, errorBody } from './errors.js';
import { bearerAuth } from './middleware/auth.js';
import { describeError } from './refusals.js';
import { observe } from './middleware/observe.js';
import { registerDocsRoutes } from './docs.js';
import { registerOperatorRoutes } from './operator.js';
import { API_BASE, OPENAPI_PATH } from './paths.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestId } from './middleware/request-id.js';
import { Shutdown } from './shutdown.js';
import { validationHook } from './validation.js';

export interface App {
  /** The Hono application; `app.fetch` serves requests. */
  app: Hono<AppEnv>;
  /**
   * The generated OpenAPI 3.1 document, built on first use (here or at `GET /api/public/openapi.json`):
   * building it takes about 120 ms, which a server's start no longer waits for.
   */
  readonly openapi: Record<string, unknown>;
  deps: AppDeps;
}

/** What the app is built around, above the pipeline: given by `src/app.ts`. */
export interface AppParts {
  /** Registers every operation of the public API on the API's own app (served under `API_BASE`). */
  registerRoutes(api: OpenAPIHono<AppEnv>, deps: AppDeps): void;
  /** The OpenAPI tags of those operations, each with what it groups, in the document's order. */
  tags: { name: string; description: string }[];
  /** Builds an area of pages over the app's dependencies (the settings area); absent: none. */
  pages?(deps: AppDeps): PageArea;
}

/**
 * Builds the app over `input` (`input.limiter` is the one `startServer` opened, src/limiter/;
 * without it, nothing is limited) and around `parts`.
 */
export function createApp(input: Omit<AppDeps, 'shutdown' | 'clientOf'>, parts: AppParts): App {
  const deps: AppDeps = {
    ...input,
    shutdown: new Shutdown(),
    clientOf: clientReader(input.config.server.trustProxy),
  };

  const api = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  api.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API token (`oapi_…`) in `Authorization: Bearer <token>`; never in the URL.',
  });
  for (const [name, header] of Object.entries(RESPONSE_HEADERS))
    api.openAPIRegistry.registerComponent('headers', name, header);
  parts.registerRoutes(api, deps);

  // An area of pages (the settings area, decisions.md §18), not the API: its failures are pages too.
  const pages = parts.pages?.(deps);
  const inPages = (c: Context) => pages?.owns(c.req.path) === true;

  const app = new OpenAPIHono<AppEnv>();
  app.use('*', observe(deps));
  app.use('*', requestId());
  app.use('*', deps.shutdown.middleware());
  app.use(
    '*',
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) => {
        if (inPages(c))
          return pages!.errorResponse(c, 405, 'This page does not take that kind of request.', {
            Allow: methods.join(', '),
          });
        throw new ApiError('METHOD_NOT_ALLOWED', `Method not allowed; allowed: ${methods.join(', ')}`, undefined, {
          Allow: methods.join(', '),
        });
      },
    }),
  );
  if (deps.fixture) app.use(`${API_BASE}/*`, deps.fixture.track);
  app.use(`${API_BASE}/*`, bearerAuth(deps));
  if (deps.fixture) app.use(`${API_BASE}/*`, deps.fixture.inject(deps));
  if (deps.limiter) app.use(`${API_BASE}/*`, rateLimit(deps.limiter));
  app.route(API_BASE, api);

  const openapi = servedDocument(api, parts.tags);
  app.get(OPENAPI_PATH, (c) => c.body(openapi().body, 200, { 'Content-Type': 'application/json' }));
  registerOperatorRoutes(app, deps);
  registerDocsRoutes(app);
  pages?.mount(app);
  deps.fixture?.mount(app, deps);

  // Returned, not thrown: methodNotAllowed turns this 404 into a 405 when another method matches.
  app.notFound((c) =>
    inPages(c)
      ? pages!.errorResponse(c, 404, 'There is no such page.')
      : c.json(errorBody(new ApiError('NOT_FOUND', 'No such route')), 404),
  );
  const answerAsApi = failureAnswer(deps);
  app.onError((error, c) => {
    const apiError = answerAsApi(error, c);
    // A failure before the area's own handlers (shutting down, say) is still answered as a page.
    if (inPages(c)) return pages!.errorResponse(c, apiError.status, apiError.message, apiError.headers);
    for (const [name, value] of Object.entries(apiError.headers ?? {})) c.header(name, value);
    return c.json(errorBody(apiError), apiError.status);
  });
  return {
    app,
    get openapi() {
      return openapi().document;
    },
    deps,
  };
}

/**
 * The public API's OpenAPI 3.1 document and its JSON text, built on the first call (about 120 ms)
 * and kept.
 */
function servedDocument(api: OpenAPIHono<AppEnv>, tags: AppParts['tags']) {
  let built: { document: Record<string, unknown>; body: string } | undefined;
  return () => {
    if (!built) {
      const document = api.getOpenAPI31Document({
        openapi: '3.1.0',
        info: {
          title: 'Scoped Outreach, Prospecting and Backlink REST API',
          version: '1.0.0',
          description:
            'Token-scoped JSON API over a link-building and outreach workspace. Every response is the envelope ' +
            '`{ ok, data }` or `{ ok: false, error: { code, message, details? } }`. Served by outreach-api.',
          // OpenAPI 3.1's SPDX `identifier` (as package.json); the generator's type predates it.
          license: { name: 'MIT', identifier: 'MIT' } as { name: string },
          contact: { name: 'The operator of this outreach-api server' },
        },
        tags,
        servers: [{ url: API_BASE }],
        security: [{ bearerAuth: [] }],
      }) as unknown as Record<string, unknown>;
      built = { document, body: JSON.stringify(document) };
    }
    return built;
  };
}

/**
 * What the app answers for anything thrown while serving a request, logged as it must be: a store
 * that cannot serve (down, or a statement out of time) is no fault of the request, 503 with
 * `Retry-After`; an unexpected failure is a bare 500, its message and stack in the log only.
 * Sets the context's `errorCode` for the access log.
 */
function failureAnswer(deps: AppDeps): (error: unknown, c: Context<AppEnv>) => ApiError {
  const retryAfter = String(Math.max(1, Math.ceil(deps.config.db.statementTimeoutMs / 1000)));
  return (error, c) => {
    const failure = storeFailureOf(error);
    if (failure)
      deps.logger.log('warn', 'the database could not serve a request', {
        requestId: c.get('requestId'),
        route: c.req.routePath,
        failure,
        code: (error as { code?: unknown }).code,
      });
    const apiError = !failure
      ? toApiError(error)
      : error instanceof ShareFullError
        ? new ApiError('SERVICE_UNAVAILABLE', 'Too many searches are running; retry later', undefined, {
            'Retry-After': String(error.retryAfterSeconds),
          })
        : new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry later', undefined, {
            'Retry-After': retryAfter,
          });
    c.set('errorCode', apiError.code);
    if (apiError.status === 500) {
      deps.logger.log('error', 'unexpected failure', {
        requestId: c.get('requestId'),
        method: c.req.method,
        route: c.req.routePath,
        // decisions.md §4, §15: message and stack in the server's log only, never in the body.
        error: describeError(error),
        code: (error as { code?: unknown }).code,
      });
    }
    return apiError;
  };
}

/** Maps anything thrown to the API's error vocabulary; unknown failures become a bare 500. */
function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof DomainError) return new ApiError(error.code, error.message, error.details);
  if (error instanceof HTTPException) {
    if (error.status === 415)
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json');
    if (error.status === 413) return new ApiError('PAYLOAD_TOO_LARGE', 'The request body is too large');
    if (error.status === 400) return toApiError(validationError([{ path: 'body', message: 'Malformed JSON' }]));
  }
  return new ApiError('INTERNAL_ERROR', 'An unexpected error occurred');
}
