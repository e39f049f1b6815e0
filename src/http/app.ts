/**
 * `createApp(deps)` builds the whole HTTP application: the request pipeline of decisions.md §3
 * (request id → auth → rate limit → per-route scope → validation → handler) and every resource's
 * routes under `/api/public/v1`, plus the generated OpenAPI 3.1 document at
 * `/api/public/openapi.json`. Every response, errors included, is the JSON envelope.
 */
import { OpenAPIHono, type Hook } from '@hono/zod-openapi';
import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { TAGS, registerRoutes } from '../routes/index.js';
import { RESPONSE_HEADERS } from '../schemas/common.js';
import { clientReader } from './client.js';
import type { AppDeps, AppEnv } from './context.js';
import { storeFailureOf } from '../db/failures.js';
import { ShareFullError } from '../db/share.js';
import { DomainError, validationError } from '../domain/errors.js';
import { ApiError, errorBody } from './errors.js';
import { bearerAuth } from './middleware/auth.js';
import { describeError } from './refusals.js';
import { NUL_MESSAGE, nulPaths } from './nul.js';
import { observe } from './middleware/observe.js';
import { registerDocsRoutes } from './docs.js';
import { registerOperatorRoutes } from './operator.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestId } from './middleware/request-id.js';
import { Shutdown } from './shutdown.js';
import { settingsArea } from '../web/index.js';

export const API_BASE = '/api/public/v1';
export const OPENAPI_PATH = '/api/public/openapi.json';

const TARGET_NAMES: Record<string, string> = { json: 'body', param: 'path', query: 'query', header: 'header' };

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

/**
 * decisions.md §4: a request that fails its route's schemas is 422 VALIDATION_ERROR with one
 * `{ path, message }` per problem; so is one whose validated path, query, headers or body hold a
 * NUL character anywhere (`nulPaths`: no store may be given one, issue #28).
 */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  const target = TARGET_NAMES[result.target] ?? result.target;
  if (result.success) {
    const found = nulPaths(result.data, target);
    if (found.length > 0) throw validationError(found.map((path) => ({ path, message: NUL_MESSAGE })));
    return;
  }
  throw validationError(
    result.error.issues.map((issue) => ({
      path: [target, ...issue.path.map(String)].join('.'),
      message: issue.message,
    })),
  );
};

/** `input.limiter` is the one `startServer` opened (src/limiter/); without it, nothing is limited. */
export function createApp(input: Omit<AppDeps, 'shutdown' | 'clientOf'>): App {
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
  registerRoutes(api, deps);

  // The settings area (decisions.md §18): pages, not the API; its failures are pages too.
  const settings = deps.config.settings.enabled ? settingsArea(deps) : undefined;
  const inSettings = (c: Context) => settings?.owns(c.req.path) === true;

  const app = new OpenAPIHono<AppEnv>();
  app.use('*', observe(deps));
  app.use('*', requestId());
  app.use('*', deps.shutdown.middleware());
  app.use(
    '*',
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) => {
        if (inSettings(c))
          return settings!.errorResponse(c, 405, 'This page does not take that kind of request.', {
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

  const buildDocument = () =>
    api.getOpenAPI31Document({
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
      tags: TAGS,
      servers: [{ url: API_BASE }],
      security: [{ bearerAuth: [] }],
    }) as unknown as Record<string, unknown>;
  let built: { document: Record<string, unknown>; body: string } | undefined;
  const openapi = () => {
    if (!built) {
      const document = buildDocument();
      built = { document, body: JSON.stringify(document) };
    }
    return built;
  };
  app.get(OPENAPI_PATH, (c) => c.body(openapi().body, 200, { 'Content-Type': 'application/json' }));
  registerOperatorRoutes(app, deps);
  registerDocsRoutes(app);
  if (settings) app.route('/', settings.app);
  deps.fixture?.mount(app, deps);

  // Returned, not thrown: methodNotAllowed turns this 404 into a 405 when another method matches.
  app.notFound((c) =>
    inSettings(c)
      ? settings!.errorResponse(c, 404, 'There is no such page.')
      : c.json(errorBody(new ApiError('NOT_FOUND', 'No such route')), 404),
  );
  // A store that cannot serve (down, or a statement out of time) is no fault of the request: 503.
  const retryAfter = String(Math.max(1, Math.ceil(deps.config.db.statementTimeoutMs / 1000)));
  app.onError((error, c) => {
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
    // A failure before the area's own handlers (shutting down, say) is still answered as a page.
    if (inSettings(c)) return settings!.errorResponse(c, apiError.status, apiError.message, apiError.headers);
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
