/**
 * The backlink monitor (decisions.md §13): one implementation of a pass, run by `serve` as a
 * background worker (when `monitor.enabled`) and by `outreach-api backlinks check` in the
 * foreground.
 *
 * A pass walks the backlinks it may check (`../repos/backlink-checks.ts`: due ones, never-checked
 * first, then the oldest; or every non-closed one in scope), hands each to the host scheduler
 * (`./monitor-fetch.ts`), and records the checks whose fetches ended as a group commit at most
 * `COMMIT_EVERY_MS` later (one transaction, one disk sync, for up to `COMMIT_AT` checks, each
 * backlink's check and fields whole in it). A check is finished when it is recorded, and only then
 * reported (`onCheck`, the CLI's progress). So a pass stopped at any point (a crash, SIGKILL, a
 * shutdown) has lost no finished check and written no partial one; the backlinks whose checks
 * were not recorded are still due for the next pass.
 * At most a few batches of rows are held at once, and each fetch streams its page.
 */
import { isoAt, type Clock } from '../domain/clock.js';
import type { Config } from '../config.js';
import type { Store } from '../db/connection.js';
import { exclusivelyAcrossInstances } from '../db/locks.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import {
  countMonitorCandidates,
  nextMonitorCandidates,
  recordBacklinkChecks,
  type BacklinkScope,
  type CheckStatus,
  type MonitorCandidate,
  type Walk,
} from '../repos/backlink-checks.js';
import { newId } from '../domain/ids.js';
import { hostOf, HostScheduler, PageFetcher } from './monitor-fetch.js';
import { checkResult, type FetchOutcome } from './monitor-rules.js';
import { createWorker, type Worker } from './worker.js';

/** How often `serve`'s monitor looks for due backlinks (it also looks once at start). */
export const MONITOR_POLL_MS = 60_000;
/** Longest a fetched check waits to be recorded (a group commit). */
export const COMMIT_EVERY_MS = 50;
/** Checks that are recorded at once, without waiting longer. */
export const COMMIT_AT = 128;

export interface MonitorDeps {
  store: Store;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** Counts each recorded check by status (`outreach_backlink_checks_total`) when metrics are on. */
  metrics?: Metrics;
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

  const fetched: { row: MonitorCandidate; outcome: FetchOutcome; error: string | null }[] = [];
  let timer: NodeJS.Timeout | undefined;
  // Groups are written one after another, in the order they were cut; `written` is the last one's.
  let written: Promise<void> = Promise.resolve();
  const write = async (items: typeof fetched) => {
    let checks: Awaited<ReturnType<typeof recordBacklinkChecks>>;
    try {
      checks = await recordBacklinkChecks(
        store.db,
        items.map((item) => ({
          backlinkId: item.row.id,
          decide: (previous) => {
            const result = checkResult(item.outcome, previous);
            item.error = result.error;
            return {
              id: newId('chk'),
              status: result.status,
              requestedSourceUrl: item.row.sourceUrl,
              finalSourceUrl: result.finalSourceUrl,
              httpStatus: result.httpStatus,
              targetFound: result.targetFound,
              observedTargetUrl: result.observedTargetUrl,
              observedAnchor: result.observedAnchor,
              observedRel: result.observedRel,
              checkedAt: isoAt(clock.now()),
            };
          },
        })),
      );
    } catch (failure) {
      // Nothing of the group was written: those backlinks stay due for the next pass.
      logger.log('error', 'recording backlink checks failed', {
        checks: items.length,
        error: failure instanceof Error ? failure.message : String(failure),
      });
      return;
    }
    checks.forEach((check, i) => {
      if (!check) return;
      summary.checked++;
      summary[check.status]++;
      deps.metrics?.backlinkChecks.inc({ status: check.status });
      options.onCheck?.({ backlinkId: items[i]!.row.id, status: check.status, error: items[i]!.error });
    });
  };
  /** Cuts the checks fetched so far into a group to write after the groups before it; resolves when it is written. */
  const commit = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    const items = fetched.splice(0);
    if (items.length > 0) written = written.then(() => write(items));
    return written;
  };
  const record = (row: MonitorCandidate, outcome: FetchOutcome) => {
    fetched.push({ row, outcome, error: null });
    if (fetched.length >= COMMIT_AT) void commit();
    else timer ??= setTimeout(commit, COMMIT_EVERY_MS);
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
          record(row, {
            kind: 'failed',
            reason: url ? `refused to fetch a ${url.protocol} URL` : 'sourceUrl is not a URL',
            finalSourceUrl: null,
            httpStatus: null,
          });
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
    await commit();
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
  const none: PassSummary = { checked: 0, live: 0, changed: 0, lost: 0, blocked: 0, error: 0, ms: 0 };
  const step = async () => {
    // One instance's pass at a time (decisions.md §16): a due backlink is checked once per interval.
    const summary = await exclusivelyAcrossInstances(deps.store, 'monitorPass', none, () =>
      runMonitorPass(deps, { signal: controller.signal }),
    );
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
