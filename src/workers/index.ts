/**
 * The background workers of the server process: the reply outbox, contact discovery, the
 * purge of expired idempotency keys, the backlink monitor (started when `monitor.enabled`) and
 * the inbox sync (started when `inbox.enabled`).
 * `startServer` builds, starts and stops them; tests drive them with `runOnce()` / `drain()` and
 * a fake clock.
 */
import { isoAt, type Clock } from '../domain/clock.js';
import type { Config } from '../config.js';
import type { Store } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Providers } from '../providers/index.js';
import { onOneInstance } from '../db/locks.js';
import { purgeExpiredKeys, releaseAbandonedKeys } from '../repos/idempotency-keys.js';
import { createDiscoveryWorker, recoverInterruptedJobs } from './contact-discovery.js';
import { createInboxWorker } from './inbox/pass.js';
import { createMonitorWorker } from './monitor.js';
import { createOutboxWorker } from './outbox.js';
import { createWorker, type Worker } from './worker.js';

/** How often expired idempotency keys are deleted (they are ignored once expired anyway). */
export const PURGE_INTERVAL_MS = 10 * 60 * 1000;

export interface Workers {
  outbox: Worker;
  discovery: Worker;
  /** Deletes idempotency keys past their 24 h. */
  purge: Worker;
  /** The backlink monitor (decisions.md §13); its timer runs only when `monitor.enabled`. */
  monitor: Worker;
  /** The inbox sync (decisions.md §17); its timer runs only when `inbox.enabled`. */
  inbox: Worker;
  /** Recovers what a stopped process left mid-way, then starts every timer. */
  start(): Promise<void>;
  /** True from `start()` until `stop()` (for `/readyz`). */
  readonly running: boolean;
  stop(): Promise<void>;
}

export interface WorkerDeps {
  store: Store;
  clock: Clock;
  config: Config;
  providers: Providers;
  logger: Logger;
  /** Counts outbox deliveries, backlink checks and inbox messages when metrics are on. */
  metrics?: Metrics;
}

export function createWorkers({ store, clock, config, providers, logger, metrics }: WorkerDeps): Workers {
  const outbox = createOutboxWorker({ store, clock, config, mail: providers.mail, logger, metrics });
  const discovery = createDiscoveryWorker({ store, clock, config, finder: providers.contactFinder, logger });
  const purge = createWorker(
    'idempotency-purge',
    PURGE_INTERVAL_MS,
    // One instance at a time (an advisory lock on PostgreSQL; the others skip this round).
    () => onOneInstance(store.db, 'keyPurge', 0, (trx) => purgeExpiredKeys(trx, isoAt(clock.now()))),
    logger,
  );
  const monitor = createMonitorWorker({ store, clock, config, logger, metrics });
  const inbox = createInboxWorker({ store, clock, config, logger, metrics, classifier: providers.replyClassifier });
  const all = [
    outbox,
    discovery,
    purge,
    ...(config.monitor.enabled ? [monitor] : []),
    ...(config.inbox.enabled ? [inbox] : []),
  ];
  let running = false;
  return {
    outbox,
    discovery,
    purge,
    monitor,
    inbox,
    async start() {
      // No request is served yet: on a store this process serves alone, whatever is in flight
      // belongs to a process that is gone; among instances, only what outlived its lease.
      const now = clock.now();
      const cutoff = isoAt(store.sharedByInstances ? now - config.workers.leaseMs : now);
      const released = await releaseAbandonedKeys(store.db, cutoff);
      const requeued = await recoverInterruptedJobs(store, isoAt(now), cutoff);
      if (released || requeued)
        logger.log('info', 'recovered interrupted work', { releasedIdempotencyKeys: released, requeuedJobs: requeued });
      for (const worker of all) worker.start();
      running = true;
    },
    get running() {
      return running;
    },
    async stop() {
      running = false;
      await Promise.all([outbox, discovery, purge, monitor, inbox].map((w) => w.stop()));
    },
  };
}
