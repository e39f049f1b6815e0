/**
 * The `CHECK (column IN (…))` lists each store's schema must hold, as `table.column` → the list
 * of `src/domain/enums.ts` (one enum module for both stores): test/store/enums.test.ts reads
 * them back from SQLite, test/store/postgres-schema.test.ts from PostgreSQL.
 */
import * as enums from '../../src/domain/enums.js';

export const ENUM_CHECKS: Readonly<Record<string, readonly string[]>> = {
  'accounts.plan': enums.PLANS,
  'prospects.status': enums.PROSPECT_STATUSES,
  'contacts.status': enums.CONTACT_STATUSES,
  'contacts.verification_status': enums.VERIFICATION_STATUSES,
  'drafts.status': enums.DRAFT_STATUSES,
  'threads.status': enums.THREAD_STATUSES,
  'threads.outcome': enums.THREAD_OUTCOMES,
  'threads.classification': enums.THREAD_CLASSIFICATIONS,
  'thread_messages.direction': enums.MESSAGE_DIRECTIONS,
  'thread_messages.status': enums.MESSAGE_STATUSES,
  'email_connections.provider': enums.CONNECTION_PROVIDERS,
  'email_connections.status': enums.CONNECTION_STATUSES,
  'email_senders.status': enums.SENDER_STATUSES,
  'email_senders.health_status': enums.HEALTH_STATUSES,
  'email_senders.warmup_status': enums.WARMUP_STATUSES,
  'discovery_jobs.type': enums.JOB_TYPES,
  'discovery_jobs.status': enums.JOB_STATUSES,
  'discovery_queries.status': enums.QUERY_STATUSES,
  'leads.tier': enums.LEAD_TIERS,
  'leads.lead_type': enums.LEAD_TYPES,
  'leads.stage': enums.LEAD_STAGES,
  'backlinks.status': enums.BACKLINK_STATUSES,
  'idempotency_keys.state': enums.IDEMPOTENCY_STATES,
};
