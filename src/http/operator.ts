/**
 * The operator's endpoints (decisions.md §15), outside `/api/public/v1`: no token, no rate limit.
 * - `GET /healthz`: 200 `{ ok: true, data: { status: "ok", version } }` while the process serves.
 * - `GET /readyz`: 200 `{ ok: true, data: { status: "ready", version } }` when the database
 *   answers (`checkStore`: on SQLite the file itself is read, not a page cache; decisions.md
 *   §16, issue #21 item 3), its connections are not saturated (`Store.saturated`: PostgreSQL's
 *   pool, issue #28), its schema is the newest migration and the background workers run; else
 *   503 `NOT_READY` with the reason, without internals.
 * - `GET /metrics` (only when `metrics.enabled`): the Prometheus text format, behind
 *   `Authorization: Bearer <metrics.token>` when that is set (else 401 `UNAUTHORIZED`).
 */
import type { Hono } from 'hono';
import { timingSafeEqual } from 'node:crypto';
import { checkStore } from '../db/failures.js';
import { schemaIsCurrent } from '../db/migrate.js';
import { VERSION } from '../version.js';
import type { AppDeps, AppEnv } from './context.js';
import { ApiError, unauthorized } from './errors.js';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';
export const METRICS_PATH = '/metrics';

/** Why the service is not ready, or null when it is. */
async function notReadyReason(deps: AppDeps): Promise<string | null> {
  // Said before anything waits for a connection itself (src/db/postgres/store.ts, issue #28).
  if (deps.store.saturated()) return 'every database connection is in use and requests wait for one';
  if (!(await checkStore(deps.store))) return 'the database cannot be reached or read';
  try {
    if (!(await schemaIsCurrent(deps.store))) return 'the database schema is not the latest migration';
  } catch {
    return 'the database does not answer';
  }
  if (deps.workersRunning && !deps.workersRunning()) return 'the background workers are not running';
  return null;
}

/** Compares a presented bearer token with the configured one in constant time. */
function bearerMatches(header: string | undefined, expected: string): boolean {
  const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const wanted = Buffer.from(expected);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

export function registerOperatorRoutes(app: Hono<AppEnv>, deps: AppDeps): void {
  app.get(HEALTH_PATH, (c) => c.json({ ok: true, data: { status: 'ok', version: VERSION } }));
  app.get(READY_PATH, async (c) => {
    const reason = await notReadyReason(deps);
    if (reason) throw new ApiError('NOT_READY', `Not ready: ${reason}`);
    return c.json({ ok: true, data: { status: 'ready', version: VERSION } });
  });
  const { metrics } = deps;
  if (!metrics) return;
  const token = deps.config.metrics.token;
  app.get(METRICS_PATH, async (c) => {
    const authorization = c.req.header('authorization');
    if (token && !bearerMatches(authorization, token)) throw unauthorized(authorization);
    return c.body(await metrics.registry.metrics(), 200, { 'Content-Type': metrics.registry.contentType });
  });
}
