/**
 * What every handler can reach: the application's dependencies (built once by `createApp`) and
 * the per-request variables set by the middleware.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { Clock } from '../domain/clock.js';
import type { Config } from '../config.js';
import type { Store } from '../db/connection.js';
import type { AccountRow } from '../db/schema.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { ErrorCode } from '../domain/errors.js';
import type { ScryptQueue } from '../domain/passwords.js';
import type { RateLimiter } from '../limiter/index.js';
import type { Providers } from '../providers/index.js';
import type { ClientReader } from './client.js';
import type { ReadBody } from './request-body.js';
import type { Shutdown } from './shutdown.js';

export interface AppDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The store `limits.store` names (src/limiter/); absent when `limits.requestsPerMinute` is 0. */
  limiter?: RateLimiter;
  /** Generator, mail transport, verifier and contact finder chosen by the config. */
  providers: Providers;
  /** Prometheus series (decisions.md §15); absent when `metrics.enabled` is false. */
  metrics?: Metrics;
  /** Whether the background workers run, for `/readyz`; absent (an app without workers): ready. */
  workersRunning?: () => boolean;
  /**
   * Tells a background worker that work was just queued, so it starts now rather than at its
   * next poll. Optional: without it the work is found on the next poll all the same.
   */
  notify?: (worker: 'outbox' | 'discovery') => void;
  /** The CI-fixture control plane (decisions.md §14); present only with `fixture.enabled`. */
  fixture?: FixtureHooks;
  /**
   * Graceful shutdown (decisions.md §15), built by `createApp`: the requests in flight, and the
   * `signal` that aborts at the end of the grace (a write waiting on a provider then answers 503
   * and releases its idempotency key).
   */
  shutdown: Shutdown;
  /** Who sent a request (address, HTTPS, origin), believing `server.trustProxy` (./client.ts); built by `createApp`. */
  clientOf: ClientReader;
  /**
   * Where the settings area's sign-ins wait for their scrypt (src/domain/passwords.ts); absent:
   * the process's queue (2 at once, 16 waiting).
   */
  scrypt?: ScryptQueue;
}

/** Where the fixture control plane plugs into the app (built by `src/fixture/`). */
export interface FixtureHooks {
  /** First middleware of the public API: the request gate and the request journal. */
  track: MiddlewareHandler<AppEnv>;
  /** After authentication, before the rate limiter: fault rules. */
  inject(deps: AppDeps): MiddlewareHandler<AppEnv>;
  /** Mounts the admin API under `/__admin`, with its own OpenAPI document. */
  mount(app: OpenAPIHono<AppEnv>, deps: AppDeps): void;
}

/**
 * Where an area of server-rendered pages plugs into the app (the settings area, built by
 * `src/web/`, decisions.md §18): its own Hono app, and its failures answered as pages rather than
 * in the API's envelope, those met before its own handlers too (no route, a method not allowed,
 * shutting down).
 */
export interface PageArea {
  /** Mounts the pages on `app`, on their full paths. */
  mount(app: Hono<AppEnv>): void;
  /** Whether `path` is the area's (so its failures are answered as pages). */
  owns(path: string): boolean;
  /** A failure of the area as a page with the area's headers. */
  errorResponse(c: Context, status: number, message: string, headers?: Record<string, string>): Promise<Response>;
}

/** The authenticated caller (set by the auth middleware). */
export interface Caller {
  account: AccountRow;
  tokenId: string;
  scopes: ReadonlySet<string>;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    caller: Caller;
    /** The envelope's `error.code` of an error answer, set by `onError` (for the access log). */
    errorCode?: ErrorCode;
    /** Set when the answer is a stored one replayed for an idempotency key (for the metrics). */
    replayed?: true;
    /**
     * The request's body, read whole before the request went on (the fixture does so before its
     * request gate, ../fixture/journal.ts); absent when it was not read ahead.
     */
    bufferedBody?: ReadBody;
  };
}

export type AppContext = Context<AppEnv>;
