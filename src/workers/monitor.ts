/**
 * The backlink monitor (decisions.md §13): one implementation of a pass, run by `serve` as a
 * background worker (when `monitor.enabled`) and by `outreach-api backlinks check` in the
 * foreground.
 *
 * A pass walks the backlinks it may check (`../repos/backlink-checks.ts`: due ones, never-checked
 * first, then the oldest; or every non-closed one in scope), hands each to the host scheduler
 * (`./monitor-fetch.ts`), and records each check in its own transaction as soon as its fetch
 * ends. So a pass stopped at any point (a crash, SIGKILL, a shutdown) has lost no finished check
 * and written no partial one; the backlinks it did not reach are still due for the next pass.
 * At most a few batches of rows are held at once, and each fetch streams its page.
 */
import { isoAt, type Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Store } from '../db/connection.js';
import type { Logger } from '../logger.js';
import { countMonitorCandidates, nextMonitorCandidates, recordBacklinkCheck, type BacklinkScope, type MonitorCandidate, type Walk } from '../repos/backlink-checks.js';
import { newId } from '../repos/tokens.js';
import { hostOf, HostScheduler, PageFetcher } from './monitor-fetch.js';
import { checkResult, type CheckStatus, type FetchOutcome } from './monitor-rules.js';
import { createWorker, type Worker } from './worker.js';

/** How often `serve`'s monitor looks for due backlinks (it also looks once at start). */
export const MONITOR_POLL_MS = 60_000;

export interface MonitorDeps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
}

export interface PassOptions {
  /** Narrows the pass (CLI `--project`, `--site`, `--backlink`). */
  scope?: BacklinkScope;
  /** Every non-closed backlink in scope, due or not (CLI `--all`). */
  all?: boolean;
  /** Stops the pass: no new fetch starts; the fetches in hand finish and are recorded. */
  signal?: AbortSignal;
  /** Called after each recorded check. */
  onCheck?: (check: { backlinkId: string; status: CheckStatus; error: string | null }) => void;
}

/** What a pass did: checks recorded, by the status they set, and its wall time in ms. */
export interface PassSummary {
  checked: number;
  live: number;
  changed: number;
  lost: number;
  blocked: number;
  error: number;
  ms: number;
}

function walkOf(deps: MonitorDeps, options: PassOptions): Walk {
  if (options.all) return { kind: 'all' };
  return { kind: 'due', before: isoAt(deps.clock.now() - deps.config.monitor.intervalHours * 3_600_000) };
}

/** How many backlinks a pass with `options` would check if it started now. */
export function countPass(deps: MonitorDeps, options: PassOptions = {}): Promise<number> {
  return countMonitorCandidates(deps.store.db, options.scope ?? {}, walkOf(deps, options));
}

/**
 * Runs one pass (decisions.md §13) and resolves when every check it started is recorded.
 * @throws only what the store throws while reading the backlinks to check (the pass could not
 * run); a fetch or a page never makes it throw: those end in a check.
 */
export async function runMonitorPass(deps: MonitorDeps, options: PassOptions = {}): Promise<PassSummary> {
  const { store, clock, config, logger } = deps;
  const started = performance.now();
  const summary: PassSummary = { checked: 0, live: 0, changed: 0, lost: 0, blocked: 0, error: 0, ms: 0 };
  const walk = walkOf(deps, options);
  const scope = options.scope ?? {};
  const fetcher = new PageFetcher(config.monitor);
  const scheduler = new HostScheduler(config.monitor.concurrency, config.monitor.perHostDelayMs);
  // Rows held at once: a batch being read while up to one more waits in the scheduler.
  const batch = Math.max(256, config.monitor.concurrency * 16);
  const stop = () => scheduler.stop();
  options.signal?.addEventListener('abort', stop);

  const record = (row: MonitorCandidate, outcome: FetchOutcome) => {
    let error: string | null = null;
    try {
      const check = recordBacklinkCheck(store, row.id, (previous) => {
        const result = checkResult(outcome, previous);
        error = result.error;
        return {
          id: newId('chk'),
          status: result.status,
          requestedSourceUrl: row.sourceUrl,
          finalSourceUrl: result.finalSourceUrl,
          httpStatus: result.httpStatus,
          targetFound: result.targetFound,
          observedTargetUrl: result.observedTargetUrl,
          observedAnchor: result.observedAnchor,
          observedRel: result.observedRel,
          checkedAt: isoAt(clock.now()),
        };
      });
      if (!check) return;
      summary.checked++;
      summary[check.status]++;
      options.onCheck?.({ backlinkId: row.id, status: check.status, error });
    } catch (failure) {
      logger.log('error', 'recording a backlink check failed', { backlinkId: row.id, error: failure instanceof Error ? failure.message : String(failure) });
    }
  };

  try {
    let after: MonitorCandidate | null = null;
    while (!options.signal?.aborted) {
      const rows = await nextMonitorCandidates(store.db, scope, walk, after, batch);
      if (rows.length === 0 || options.signal?.aborted) break;
      after = rows[rows.length - 1]!;
      for (const row of rows) {
        let url: URL | null = null;
        try {
          url = new URL(row.sourceUrl);
        } catch {
          // recorded below as a check without a response
        }
        if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
          record(row, { kind: 'failed', reason: url ? `refused to fetch a ${url.protocol} URL` : 'sourceUrl is not a URL', finalSourceUrl: null, httpStatus: null });
          continue;
        }
        const host = hostOf(row.sourceUrl);
        const robots = fetcher.robotsTask(row.sourceUrl);
        if (robots) scheduler.add(host, robots);
        scheduler.add(host, async () => record(row, await fetcher.check(row.sourceUrl, row.targetUrl)));
      }
      await scheduler.below(batch);
    }
    await scheduler.idle();
  } finally {
    options.signal?.removeEventListener('abort', stop);
    scheduler.stop();
    await scheduler.idle();
    fetcher.close();
  }
  summary.ms = Math.round(performance.now() - started);
  return summary;
}

/**
 * The monitor as a worker of `serve`: a pass at start, then every `MONITOR_POLL_MS`, over the
 * due backlinks. `stop()` ends the pass in progress after the fetches in hand (decisions.md §15).
 */
export function createMonitorWorker(deps: MonitorDeps): Worker {
  const controller = new AbortController();
  const step = async () => {
    const summary = await runMonitorPass(deps, { signal: controller.signal });
    if (summary.checked > 0) deps.logger.log('info', 'backlink monitor pass', { ...summary });
    return summary.checked;
  };
  const worker = createWorker('monitor', MONITOR_POLL_MS, step, deps.logger);
  return {
    ...worker,
    async stop() {
      controller.abort();
      await worker.stop();
    },
  };
}
