/**
 * Contact discovery (decisions.md §10): saving what a contact finder found, queueing a
 * `contact_discovery` job when the finder works outside the process, and the discovery worker
 * that runs those jobs after the request committed.
 *
 * A job moves queued → running → completed (a contact was created, or already existed) or
 * failed (nothing found, a final provider error, or `max_attempts` retryable errors, each retry
 * after `outbox.backoffMs` doubling). A job left `running` by a stopped process is queued again
 * at start-up (`recoverInterruptedJobs`); it may then be looked at twice, which only reads pages.
 */
import { isoAt, type Clock } from '../domain/clock.js';
import type { Config } from '../config.js';
import type { Store } from '../db/connection.js';
import type { ContactsTable } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { ProviderError, type ContactCandidate, type ContactFinder, type ProspectFacts } from '../providers/index.js';
import { toContact, type ContactRecord } from '../repos/contacts.js';
import { toDiscoveryJob, type DiscoveryJobRecord, type DiscoveryJobRow } from '../repos/discovery-jobs.js';
import { toProspect, type ProspectRow } from '../repos/prospects.js';
import { newId } from '../domain/ids.js';
import { createWorker, type Worker } from './worker.js';

/** Attempts of a contact-discovery job before it fails. */
export const DISCOVERY_MAX_ATTEMPTS = 3;
const BATCH = 10;

/** Where a prospect sits, for the records made from it. */
export interface ProspectPlace {
  id: string;
  siteId: string;
  projectId: string;
}

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

/** Statements of the contact-discovery writes, prepared once per store. */
export class ContactDiscoveryStore {
  private readonly findByEmail;
  private readonly insertContact;
  private readonly insertJob;
  private readonly insertWork;

  constructor(store: Store) {
    const { sqlite } = store;
    this.findByEmail = sqlite.prepare(
      'SELECT * FROM contacts WHERE prospect_id = ? AND email = ? COLLATE NOCASE ORDER BY created_at, id LIMIT 1',
    );
    this.insertContact =
      sqlite.prepare(`INSERT INTO contacts (id, prospect_id, site_id, project_id, email, full_name, role, role_category, company,
      source, source_provider, source_url, source_reference, status, verification_status, last_verified_at, suppression_reason, created_at, updated_at)
      VALUES (@id, @prospect_id, @site_id, @project_id, @email, @full_name, @role, @role_category, @company,
      @source, @source_provider, @source_url, @source_reference, @status, @verification_status, @last_verified_at, @suppression_reason, @created_at, @updated_at)`);
    this.insertJob =
      sqlite.prepare(`INSERT INTO discovery_jobs (id, site_id, project_id, type, status, subject_type, subject_id, current_attempt,
      max_attempts, scheduled_at, canceled_at, completed_at, last_error, created_at, updated_at)
      VALUES (@id, @site_id, @project_id, @type, @status, @subject_type, @subject_id, @current_attempt,
      @max_attempts, @scheduled_at, @canceled_at, @completed_at, @last_error, @created_at, @updated_at)`);
    this.insertWork = sqlite.prepare('INSERT INTO contact_discovery_work (job_id, prospect_id) VALUES (?, ?)');
  }

  /**
   * Inside a transaction: the best candidate as a contact of the prospect — the one it already
   * has with that address (case-insensitive), or a new one.
   */
  save(prospect: ProspectPlace, candidates: ContactCandidate[], provider: string, nowIso: string): DiscoveryOutcome {
    const best = candidates[0];
    if (!best) return { outcome: 'not_found', contact: null };
    const existing = this.findByEmail.get(prospect.id, best.email) as ContactsTable | undefined;
    if (existing) return { outcome: 'existing', contact: toContact(existing) };
    const row: ContactsTable = {
      id: newId('con'),
      prospect_id: prospect.id,
      site_id: prospect.siteId,
      project_id: prospect.projectId,
      email: best.email,
      full_name: best.fullName,
      role: best.role,
      role_category: null,
      company: null,
      source: 'contact_discovery',
      source_provider: provider,
      source_url: best.sourceUrl,
      source_reference: best.sourceReference,
      status: 'active',
      verification_status: 'unverified',
      last_verified_at: null,
      suppression_reason: null,
      created_at: nowIso,
      updated_at: nowIso,
    };
    this.insertContact.run(row);
    return { outcome: 'created', contact: toContact(row) };
  }

  /** Inside a transaction: a queued `contact_discovery` job for the prospect, due now. */
  enqueue(prospect: ProspectPlace, nowIso: string): DiscoveryJobRecord {
    const row: DiscoveryJobRow = {
      id: newId('job'),
      site_id: prospect.siteId,
      project_id: prospect.projectId,
      type: 'contact_discovery',
      status: 'queued',
      subject_type: 'prospect',
      subject_id: prospect.id,
      current_attempt: 0,
      max_attempts: DISCOVERY_MAX_ATTEMPTS,
      scheduled_at: nowIso,
      canceled_at: null,
      completed_at: null,
      last_error: null,
      created_at: nowIso,
      updated_at: nowIso,
    };
    this.insertJob.run(row);
    this.insertWork.run(row.id, prospect.id);
    return toDiscoveryJob(row);
  }
}

export interface DiscoveryWorkerDeps {
  store: Store;
  clock: Clock;
  config: Config;
  finder: ContactFinder;
  logger: Logger;
}

/** Queues again the API's jobs left `running` by a process that stopped; returns how many. */
export function recoverInterruptedJobs(store: Store, nowIso: string): number {
  return Number(
    store.sqlite
      .prepare(
        "UPDATE discovery_jobs SET status = 'queued', updated_at = ? WHERE status = 'running' AND id IN (SELECT job_id FROM contact_discovery_work)",
      )
      .run(nowIso).changes,
  );
}

/** The worker that runs queued contact-discovery jobs (polling every `outbox.pollIntervalMs`). */
export function createDiscoveryWorker({ store, clock, config, finder, logger }: DiscoveryWorkerDeps): Worker {
  const { sqlite } = store;
  const contacts = new ContactDiscoveryStore(store);
  const due = sqlite.prepare(`SELECT j.* FROM discovery_jobs j JOIN contact_discovery_work w ON w.job_id = j.id
    WHERE j.status = 'queued' AND j.scheduled_at <= ? ORDER BY j.scheduled_at, j.id LIMIT ?`);
  const claim = sqlite.prepare(
    "UPDATE discovery_jobs SET status = 'running', current_attempt = current_attempt + 1, updated_at = ? WHERE id = ? AND status = 'queued'",
  );
  const finish = sqlite.prepare(
    'UPDATE discovery_jobs SET status = ?, completed_at = ?, last_error = ?, updated_at = ? WHERE id = ?',
  );
  const retry = sqlite.prepare(
    "UPDATE discovery_jobs SET status = 'queued', scheduled_at = ?, last_error = ?, updated_at = ? WHERE id = ?",
  );
  const prospectOf = sqlite.prepare('SELECT * FROM prospects WHERE id = ?');

  const step = async () => {
    const jobs = due.all(isoAt(clock.now()), BATCH) as DiscoveryJobRow[];
    for (const job of jobs) {
      if (Number(claim.run(isoAt(clock.now()), job.id).changes) === 0) continue;
      const attempt = job.current_attempt + 1;
      const prospectRow = job.subject_id ? (prospectOf.get(job.subject_id) as ProspectRow | undefined) : undefined;
      if (!prospectRow) {
        finish.run('failed', null, 'the prospect no longer exists', isoAt(clock.now()), job.id);
        continue;
      }
      const prospect = toProspect(prospectRow);
      try {
        const candidates = await finder.find(prospectFacts(prospect));
        store.transaction(() => {
          const now = isoAt(clock.now());
          const result = contacts.save(
            { id: prospect.id, siteId: prospectRow.site_id, projectId: prospectRow.project_id },
            candidates,
            finder.name,
            now,
          );
          if (result.outcome === 'not_found') finish.run('failed', null, 'no contact address was found', now, job.id);
          else finish.run('completed', now, null, now, job.id);
        });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const retryable = !(error instanceof ProviderError) || error.retryable;
        const now = clock.now();
        if (retryable && attempt < job.max_attempts)
          retry.run(isoAt(now + config.outbox.backoffMs * 2 ** (attempt - 1)), message, isoAt(now), job.id);
        else finish.run('failed', null, message, isoAt(now), job.id);
        logger.log('warn', 'contact discovery attempt failed', { jobId: job.id, attempt, retryable, error: message });
      }
    }
    return jobs.length;
  };
  return createWorker('discovery', config.outbox.pollIntervalMs, step, logger);
}
