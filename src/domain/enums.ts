/**
 * Enumerated values: contract §3 and decisions.md §11, each list written once. Filters, import
 * validation, the table types of `db/schema.ts` and the OpenAPI document all use these lists; a
 * test (`test/store/enums.test.ts`) holds the store's SQL `CHECK` lists against them.
 */
export const BACKLINK_STATUSES = ['pending', 'live', 'changed', 'lost', 'blocked', 'error', 'closed'] as const;
export const DRAFT_STATUSES = ['draft', 'awaiting_approval', 'changes_requested', 'approved'] as const;
export const PROSPECT_STATUSES = ['proposed', 'rejected', 'blocked'] as const;
export const LEAD_STAGES = ['to_qualify', 'to_contact', 'in_conversation', 'closed'] as const;
export const LEAD_TIERS = ['hot', 'warm', 'explore'] as const;
export const LEAD_TYPES = ['competitor', 'describes_problem', 'looking_for_solution', 'other'] as const;
export const LEAD_VIEWS = ['quality', 'all', 'archived'] as const;
export const THREAD_STATUSES = ['open', 'awaiting_reply', 'replied', 'closed'] as const;
export const THREAD_OUTCOMES = ['none', 'positive', 'neutral', 'negative'] as const;
export const THREAD_CLASSIFICATIONS = [
  'interested',
  'not_interested',
  'question',
  'out_of_office',
  'auto_reply',
  'bounce',
  'unclassified',
] as const;
/** The classifications a human reply can get, from its phrases or a model (decisions.md §17). */
export const HUMAN_REPLY_CLASSIFICATIONS = ['interested', 'not_interested', 'question', 'unclassified'] as const;
export const MESSAGE_DIRECTIONS = ['inbound', 'outbound'] as const;
export const MESSAGE_STATUSES = ['queued', 'sent', 'failed'] as const;
export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed', 'canceled'] as const;
export const JOB_TYPES = ['prospect_discovery', 'contact_discovery'] as const;
export const QUERY_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
export const CONTACT_STATUSES = ['active', 'bounced', 'suppressed'] as const;
export const VERIFICATION_STATUSES = ['unverified', 'valid', 'invalid', 'risky', 'unknown'] as const;
export const CONNECTION_PROVIDERS = ['gmail', 'outlook', 'smtp'] as const;
export const CONNECTION_STATUSES = ['connected', 'disconnected', 'error'] as const;
export const SENDER_STATUSES = ['active', 'paused', 'disabled'] as const;
export const WARMUP_STATUSES = ['not_started', 'warming', 'warmed', 'paused'] as const;
export const HEALTH_STATUSES = ['healthy', 'degraded', 'unhealthy'] as const;
export const PLANS = ['free', 'pro', 'lifetime'] as const;
/** State of a stored idempotency key (decisions.md §3). */
export const IDEMPOTENCY_STATES = ['in_flight', 'completed'] as const;

export type BacklinkStatus = (typeof BACKLINK_STATUSES)[number];
export type DraftStatus = (typeof DRAFT_STATUSES)[number];
export type ProspectStatus = (typeof PROSPECT_STATUSES)[number];
export type LeadStage = (typeof LEAD_STAGES)[number];
export type LeadTier = (typeof LEAD_TIERS)[number];
export type LeadType = (typeof LEAD_TYPES)[number];
export type LeadView = (typeof LEAD_VIEWS)[number];
export type ThreadStatus = (typeof THREAD_STATUSES)[number];
export type ThreadOutcome = (typeof THREAD_OUTCOMES)[number];
export type ThreadClassification = (typeof THREAD_CLASSIFICATIONS)[number];
export type HumanReplyClassification = (typeof HUMAN_REPLY_CLASSIFICATIONS)[number];
export type MessageDirection = (typeof MESSAGE_DIRECTIONS)[number];
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
export type JobStatus = (typeof JOB_STATUSES)[number];
export type JobType = (typeof JOB_TYPES)[number];
export type QueryStatus = (typeof QUERY_STATUSES)[number];
export type ContactStatus = (typeof CONTACT_STATUSES)[number];
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];
export type ConnectionProvider = (typeof CONNECTION_PROVIDERS)[number];
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
export type SenderStatus = (typeof SENDER_STATUSES)[number];
export type WarmupStatus = (typeof WARMUP_STATUSES)[number];
export type HealthStatus = (typeof HEALTH_STATUSES)[number];
export type Plan = (typeof PLANS)[number];
export type IdempotencyState = (typeof IDEMPOTENCY_STATES)[number];
