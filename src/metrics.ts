/**
 * Prometheus metrics (decisions.md §15), on a registry of their own per server (no global
 * state, so tests and embedders can run several). Served at `GET /metrics` when
 * `metrics.enabled`; see `src/http/operator.ts`.
 *
 * Labels hold only bounded values: HTTP methods (unknown ones become `OTHER`), route templates
 * such as `/api/public/v1/projects/:projectId` (`unmatched` when no route matched), status
 * codes and the enum values named below. Never a raw path, an id or a token.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  /** `http_requests_total{method, route, status}`. */
  httpRequests: Counter<'method' | 'route' | 'status'>;
  /** `http_request_duration_seconds{method, route}`: time to the response, in seconds. */
  httpDuration: Histogram<'method' | 'route'>;
  /** `outreach_rate_limit_rejections_total`: 429 answers of the per-token limiter. */
  rateLimitRejections: Counter;
  /**
   * `outreach_rate_limit_fallback_checks_total`: with `limits.store: redis`, requests this
   * instance counted in its own window because Redis could not be reached (decisions.md §16).
   */
  rateLimitFallbackChecks: Counter;
  /** `outreach_idempotent_replays_total`: stored responses replayed for a repeated Idempotency-Key. */
  idempotentReplays: Counter;
  /** `outreach_outbox_deliveries_total{result}`: each delivery attempt of the reply outbox. */
  outboxDeliveries: Counter<'result'>;
  /**
   * `outreach_backlink_checks_total{status}`: each backlink check of the monitor (decisions.md §13),
   * `status` being the backlink status the check found (`live`, `lost`, …, a bounded enum).
   */
  backlinkChecks: Counter<'status'>;
  /**
   * `outreach_settings_sign_ins_total{result}`: sign-in attempts of the settings area
   * (decisions.md §18): `ok`, `failed` (wrong email or password), `limited` (refused by the attempt limit).
   */
  settingsSignIns: Counter<'result'>;
  /**
   * `outreach_inbox_messages_total{result}`: each message the inbox sync read (decisions.md §17):
   * `matched`, `unmatched`, `duplicate`, `bounce`, `skipped` or `error`.
   */
  inboxMessages: Counter<'result'>;
}

export interface MetricsSources {
  /** Outbound reply messages by status (`queued`, `sent`, `failed`), read at each scrape. */
  outboxMessagesByStatus?: () => Promise<Record<string, number>>;
  /**
   * With `limits.store: redis`: whether the limiter's checks go to Redis now (1) or to this
   * instance's fallback window (0), read at each scrape as `outreach_rate_limit_redis_up`.
   */
  rateLimitRedisUp?: () => boolean;
}

/** HTTP methods kept as label values; anything else is counted as `OTHER`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const methodLabel = (method: string): string => (METHODS.has(method) ? method : 'OTHER');

/** Request duration buckets, seconds: 1 ms to 10 s. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Builds the registry with every series of decisions.md §15 and the process's own metrics
 * (`process_*`, `nodejs_*`: CPU, memory, event loop lag, GC, handles).
 */
export function createMetrics(sources: MetricsSources = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const metrics: Metrics = {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route template and status code.',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving an HTTP request to its response, by method and route template, in seconds.',
      labelNames: ['method', 'route'],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    rateLimitRejections: new Counter({
      name: 'outreach_rate_limit_rejections_total',
      help: 'Requests refused with 429 by the per-token rate limiter.',
      registers,
    }),
    rateLimitFallbackChecks: new Counter({
      name: 'outreach_rate_limit_fallback_checks_total',
      help: "Requests counted in this instance's own rate-limit window because Redis (limits.store: redis) could not be reached.",
      registers,
    }),
    idempotentReplays: new Counter({
      name: 'outreach_idempotent_replays_total',
      help: 'Write requests answered with the stored response of their Idempotency-Key.',
      registers,
    }),
    outboxDeliveries: new Counter({
      name: 'outreach_outbox_deliveries_total',
      help: 'Reply delivery attempts of the outbox, by result: sent, retry (failed, tried again later), failed (given up).',
      labelNames: ['result'],
      registers,
    }),
    backlinkChecks: new Counter({
      name: 'outreach_backlink_checks_total',
      help: 'Backlink checks of the monitor, by the status found.',
      labelNames: ['status'],
      registers,
    }),
    settingsSignIns: new Counter({
      name: 'outreach_settings_sign_ins_total',
      help: 'Sign-in attempts of the settings area, by result: ok, failed (wrong email or password), limited (refused by the attempt limit).',
      labelNames: ['result'],
      registers,
    }),
    inboxMessages: new Counter({
      name: 'outreach_inbox_messages_total',
      help: 'Messages read by the inbox sync, by result: matched, unmatched, duplicate, bounce, skipped, error.',
      labelNames: ['result'],
      registers,
    }),
  };
  // Every result from zero, so a rate over them is defined before the first sign-in.
  for (const result of ['ok', 'failed', 'limited']) metrics.settingsSignIns.inc({ result }, 0);
  for (const result of ['matched', 'unmatched', 'duplicate', 'bounce', 'skipped', 'error'])
    metrics.inboxMessages.inc({ result }, 0);
  const { outboxMessagesByStatus } = sources;
  if (outboxMessagesByStatus) {
    new Gauge({
      name: 'outreach_outbox_messages',
      help: 'Outbound reply messages in the outbox, by status (queued, sent, failed).',
      labelNames: ['status'],
      registers,
      async collect() {
        const counts = await outboxMessagesByStatus();
        this.reset();
        for (const [status, count] of Object.entries(counts)) this.set({ status }, count);
      },
    });
  }
  const { rateLimitRedisUp } = sources;
  if (rateLimitRedisUp) {
    new Gauge({
      name: 'outreach_rate_limit_redis_up',
      help: "With limits.store: redis, 1 while the rate limiter counts in Redis (shared by every instance), 0 while it falls back to this instance's own window.",
      registers,
      collect() {
        this.set(rateLimitRedisUp() ? 1 : 0);
      },
    });
  }
  return metrics;
}
