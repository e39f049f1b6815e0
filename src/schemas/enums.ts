/**
 * Enumerated values: contract §3 and decisions.md §11. Filters, import validation, the store's
 * CHECK constraints and the OpenAPI document all use these lists.
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
export const THREAD_CLASSIFICATIONS = ['interested', 'not_interested', 'question', 'out_of_office', 'auto_reply', 'bounce', 'unclassified'] as const;
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
