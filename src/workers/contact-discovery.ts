/**
 * Contact discovery (decisions.md §10): saving what a contact finder found, queueing a
 * `contact_discovery` job when the finder works outside the process, and the discovery worker
 * that runs those jobs after the request committed.
 *
 * A job moves queued → running → completed (a contact was created, or already existed) or
 * failed (nothing found, a final provider error, or `max_attempts` retryable errors, each retry
 * after `outbox.backoffMs` doubling). Taking a job (`running`) is one conditional update, so of
 * several instances one takes it (decisions.md §16). A job left `running` by a stopped process
 * is queued again at start-up (`recoverInterruptedJobs`) and, once its lease (`workers.leaseMs`)
 * ran out, by any instance's next pass; it may then be looked at twice, which only reads pages.
 */
import { isoAt, type Clock } from '../domain/clock.js';
import type { Config } from '../config.js';
import type { Store } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { ContactCandidate, ContactFinder, ProspectFacts } from '../providers/index.js';
import type { Kysely } from 'kysely';
import { inTransaction } from '../db/connection.js';
import type { Database } from '../db/schema.js';
import { type ContactRecord, saveDiscoveredContact } from '../repos/contacts.js';
import {
  contactDiscoveryJobs as jobs,
  type DiscoveryJobRecord,
  type DiscoveryJobRow,
  type ProspectPlace,
} from '../repos/discovery-jobs.js';
import { findProspectRow, toProspect } from '../repos/prospects.js';
import { leasedPass, type LeasedQueue } from './lease.js';
import { createWorker, type Worker } from './worker.js';

/** Attempts of a contact-discovery job before it fails. */
export const DISCOVERY_MAX_ATTEMPTS = 3;
const BATCH = 10;

export type DiscoveryOutcome =
  | { outcome: 'created' | 'existing'; contact: ContactRecord }
  | { outcome: 'not_found'; contact: null };

/** A prospect as a finder reads it. */
export const prospectFacts = (p: {
  id: string;
  url: string;
  domain: string;
  title: string | null;
  description: string | null;
  contentExcerpt: string | null;
  contactPaths: unknown[];
}): ProspectFacts => ({
  id: p.id,
  url: p.url,
  domain: p.domain,
  title: p.title,
  description: p.description,
  contentExcerpt: p.contentExcerpt,
  contactPaths: p.contactPaths,
});

/** The writes of contact discovery (the route's and the worker's), over the store's repositories. */
export const contactDiscovery = {
  /**
   * In a transaction: the best candidate as a contact of the prospect — the one it already has
   * with that address (case-insensitive), or a new one.
   */
  async save(
    trx: Kysely<Database>,
    prospect: ProspectPlace,
    candidates: ContactCandidate[],
    provider: string,
    nowIso: string,
  ): Promise<DiscoveryOutcome> {
    const best = candidates[0];
    if (!best) return { outcome: 'not_found', contact: null };
    return saveDiscoveredContact(trx, prospect, best, provider, nowIso);
  },

  /** In a transaction: a queued `contact_discovery` job for the prospect, due now. */
  enqueue(trx: Kysely<Database>, prospect: ProspectPlace, nowIso: string): Promise<DiscoveryJobRecord> {
    return jobs.enqueue(trx, prospect, DISCOVERY_MAX_ATTEMPTS, nowIso);
  },
};

export interface DiscoveryWorkerDeps {
  store: Store;
  clock: Clock;
  config: Config;
  finder: ContactFinder;
  logger: Logger;
}

/**
 * Queues again the API's jobs left `running` by a process that stopped, taken at or before
 * `cutoffIso` (a start-up that serves the store alone passes now; one among instances, a lease
 * ago); resolves with how many.
 */
export function recoverInterruptedJobs(store: Store, nowIso: string, cutoffIso: string): Promise<number> {
  return jobs.recoverInterrupted(store.db, nowIso, cutoffIso);
}

/** The worker that runs queued contact-discovery jobs (polling every `outbox.pollIntervalMs`). */
export function createDiscoveryWorker({ store, clock, config, finder, logger }: DiscoveryWorkerDeps): Worker {
  const queue: LeasedQueue<DiscoveryJobRow> = {
    due: async (now, limit) => {
      // Jobs whose taker stopped (on this instance or another) are due again after a lease.
      await jobs.recoverInterrupted(store.db, isoAt(now), isoAt(now - config.workers.leaseMs));
      return jobs.dueJobs(store.db, isoAt(now), limit);
    },
    lease: async (job, now) =>
      (await jobs.claimAttempt(store.db, job.id, isoAt(now))) ? job.current_attempt + 1 : null,
    attempt: async (job) => {
      const prospectRow = job.subject_id ? await findProspectRow(store.db, job.subject_id) : undefined;
      if (!prospectRow) {
        await jobs.finishJob(
          store.db,
          job.id,
          { status: 'failed', error: 'the prospect no longer exists' },
          isoAt(clock.now()),
        );
        return;
      }
      const prospect = toProspect(prospectRow);
      const candidates = await finder.find(prospectFacts(prospect));
      await inTransaction(store.db, async (trx) => {
        const now = isoAt(clock.now());
        const result = await contactDiscovery.save(
          trx,
          { id: prospect.id, siteId: prospectRow.site_id, projectId: prospectRow.project_id },
          candidates,
          finder.name,
          now,
        );
        await jobs.finishJob(
          trx,
          job.id,
          result.outcome === 'not_found'
            ? { status: 'failed', error: 'no contact address was found' }
            : { status: 'completed' },
          now,
        );
      });
    },
    failed: async (job, { error, givenUp, now, retryAt }) => {
      if (givenUp) await jobs.finishJob(store.db, job.id, { status: 'failed', error }, isoAt(now));
      else await jobs.retryLater(store.db, job.id, isoAt(retryAt), error, isoAt(now));
    },
    maxAttempts: (job) => job.max_attempts,
    failureLog: { message: 'contact discovery attempt failed', fields: (job) => ({ jobId: job.id }) },
  };
  const step = leasedPass(queue, { clock, logger, batch: BATCH, backoffMs: config.outbox.backoffMs });
  return createWorker('discovery', config.outbox.pollIntervalMs, step, logger);
}
