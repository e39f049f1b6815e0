/**
 * Kysely types of the SQLite store; one interface per table of `sql/sqlite/0001_init.sql`.
 *
 * Column names are the SQL ones (snake_case); mappers in `src/repos/*` turn rows into the
 * contract's camelCase shapes. Date-times are ISO 8601 UTC strings with milliseconds,
 * booleans are 0/1 integers, and JSON columns are TEXT holding JSON.
 */
import type { ColumnType, Selectable } from 'kysely';
import type {
  BacklinkStatus,
  ConnectionProvider,
  ConnectionStatus,
  ContactStatus,
  DraftStatus,
  HealthStatus,
  IdempotencyState,
  JobStatus,
  JobType,
  LeadStage,
  LeadTier,
  LeadType,
  MessageDirection,
  MessageStatus,
  Plan,
  ProspectStatus,
  QueryStatus,
  SenderStatus,
  ThreadClassification,
  ThreadOutcome,
  ThreadStatus,
  VerificationStatus,
  WarmupStatus,
} from '../domain/enums.js';

/** 0 or 1: how SQLite stores a boolean. */
export type SqlBool = 0 | 1;

export interface AccountsTable {
  id: string;
  email: string;
  name: string;
  plan: Plan;
  plan_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiTokensTable {
  id: string;
  account_id: string;
  name: string;
  /** JSON array of scope names. */
  scopes: string;
  /** Hex SHA-256 of the raw token. */
  token_hash: string;
  token_prefix: string;
  last_four: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface ProjectsTable {
  id: string;
  account_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface SitesTable {
  id: string;
  project_id: string;
  name: string;
  domain: string;
  url: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export interface KeywordsTable {
  id: string;
  site_id: string;
  project_id: string;
  keyword: string;
  created_at: string;
}

export interface BlockedDomainsTable {
  id: string;
  project_id: string;
  domain: string;
  reason: string | null;
  created_at: string;
}

/**
 * `fold(<column>)`, the search's folded copy of a searched column (sql/sqlite/0008_search_folded.sql):
 * written by the store itself (SQLite's triggers, PostgreSQL's generated columns), never by a
 * statement, and read only by the search condition (src/db/search.ts).
 */
type Folded = ColumnType<string | null, never, never>;

export interface ProspectsTable {
  id: string;
  site_id: string;
  project_id: string;
  source_job_id: string | null;
  source: string | null;
  status: ProspectStatus;
  url: string;
  normalized_url: string | null;
  canonical_url: string | null;
  domain: string;
  title: string | null;
  description: string | null;
  content_excerpt: string | null;
  page_type: string | null;
  opportunity_type: string | null;
  suggested_placement: string | null;
  /** JSON array of objects. */
  contact_paths: string;
  relevance_score: number | null;
  quality_score: number | null;
  risk_score: number | null;
  /** JSON array of strings. */
  match_reasons: string;
  /** JSON array of strings. */
  risk_flags: string;
  domain_authority: number | null;
  estimated_monthly_traffic: number | null;
  ranking_position: number | null;
  ranking_keyword: string | null;
  crawl_status: string | null;
  last_crawled_at: string | null;
  created_at: string;
  updated_at: string;
  title_folded: Folded;
  domain_folded: Folded;
  url_folded: Folded;
  description_folded: Folded;
}

export interface ContactsTable {
  id: string;
  prospect_id: string;
  site_id: string;
  project_id: string;
  email: string;
  full_name: string | null;
  role: string | null;
  role_category: string | null;
  company: string | null;
  source: string | null;
  source_provider: string | null;
  source_url: string | null;
  source_reference: string | null;
  status: ContactStatus;
  verification_status: VerificationStatus;
  last_verified_at: string | null;
  suppression_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface DraftsTable {
  id: string;
  site_id: string;
  project_id: string;
  prospect_id: string;
  contact_id: string;
  message_id: string | null;
  status: DraftStatus;
  purpose: string | null;
  starred_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DraftMessagesTable {
  id: string;
  draft_id: string;
  subject: string;
  body: string;
  /** JSON object. */
  personalization: string;
  grounding_summary: string | null;
  generation_provider: string | null;
  generation_model: string | null;
  created_at: string;
  updated_at: string;
}

export interface ThreadsTable {
  id: string;
  site_id: string;
  project_id: string;
  prospect_id: string;
  contact_id: string;
  provider_thread_id: string;
  status: ThreadStatus;
  outcome: ThreadOutcome;
  classification: ThreadClassification;
  inbound_count: number;
  outbound_count: number;
  last_inbound_at: string | null;
  last_outbound_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ThreadMessagesTable {
  id: string;
  thread_id: string;
  direction: MessageDirection;
  status: MessageStatus;
  from_email: string | null;
  /** JSON array of strings. */
  to_emails: string;
  /** JSON array of strings. */
  cc_emails: string;
  subject: string | null;
  body: string;
  sent_at: string | null;
  sender_id: string | null;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  /**
   * An inbound message's Message-ID as received (`<…>`), or `hash:` + the hex SHA-256 of its
   * From, Date, Subject and body when it has none; NULL for outbound and imported messages
   * (decisions.md §17; unique per thread, 0006_inbox.sql).
   */
  inbound_message_id: string | null;
}

export interface EmailConnectionsTable {
  id: string;
  site_id: string;
  project_id: string;
  provider: ConnectionProvider;
  status: ConnectionStatus;
  account_email: string;
  provider_region: string | null;
  has_error: SqlBool;
  connected_at: string | null;
  last_tested_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface EmailSendersTable {
  id: string;
  site_id: string;
  project_id: string;
  connection_id: string;
  source: string | null;
  status: SenderStatus;
  verification_status: string | null;
  display_name: string | null;
  email: string;
  reply_to_email: string | null;
  daily_limit: number | null;
  health_status: HealthStatus | null;
  warmup_status: WarmupStatus | null;
  health_score: number | null;
  created_at: string;
  updated_at: string;
}

export interface DiscoveryJobsTable {
  id: string;
  site_id: string;
  project_id: string;
  type: JobType;
  status: JobStatus;
  subject_type: string | null;
  subject_id: string | null;
  current_attempt: number;
  max_attempts: number;
  scheduled_at: string | null;
  canceled_at: string | null;
  completed_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** A `contact_discovery` job accepted through the API, which the discovery worker runs (sql/sqlite/0002_contact_discovery_work.sql). */
export interface ContactDiscoveryWorkTable {
  job_id: string;
  prospect_id: string;
}

export interface DiscoveryQueriesTable {
  id: string;
  job_id: string;
  query: string;
  status: QueryStatus;
  opportunity_type: string | null;
  raw_result_count: number;
  unique_candidate_count: number;
  qualified_count: number;
  started_at: string | null;
  completed_at: string | null;
  error_code: string | null;
  has_error: SqlBool;
}

export interface LeadsTable {
  id: string;
  site_id: string;
  project_id: string;
  platform: string;
  source_container: string | null;
  kind: string | null;
  title: string | null;
  body: string | null;
  author_handle: string | null;
  permalink: string | null;
  score: number;
  tier: LeadTier;
  lead_type: LeadType;
  sentiment: string | null;
  evidence_quote: string | null;
  reason: string | null;
  stage: LeadStage;
  feedback: string | null;
  dismissed: SqlBool;
  redacted: SqlBool;
  posted_at: string | null;
  first_seen_at: string | null;
  created_at: string;
  title_folded: Folded;
  body_folded: Folded;
  author_handle_folded: Folded;
  evidence_quote_folded: Folded;
}

export interface BacklinksTable {
  id: string;
  site_id: string;
  project_id: string;
  source: string;
  acquisition_origin: string;
  source_url: string;
  target_url: string;
  category: string | null;
  status: BacklinkStatus;
  observed_anchor: string | null;
  last_checked_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface BacklinkChecksTable {
  id: string;
  backlink_id: string;
  status: string;
  requested_source_url: string | null;
  final_source_url: string | null;
  http_status: number | null;
  target_found: SqlBool;
  observed_target_url: string | null;
  observed_anchor: string | null;
  /** JSON array of strings. */
  observed_rel: string;
  has_error: SqlBool;
  checked_at: string;
}

export interface IdempotencyKeysTable {
  account_id: string;
  operation: string;
  key: string;
  request_hash: string;
  state: IdempotencyState;
  response_status: number | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
}

/** An account's password (0005_settings_area.sql of sql/sqlite/ and sql/postgres/): only its scrypt hash, never selected with the account. */
export interface AccountPasswordsTable {
  account_id: string;
  /** `scrypt$ln=…,r=…,p=…$<salt>$<key>` (src/domain/passwords.ts). */
  password_hash: string;
  set_at: string;
}

/** A settings-area session (decisions.md §18): the hash of the cookie's id, never the id. */
export interface SettingsSessionsTable {
  /** Hex SHA-256 of the session id. */
  id_hash: string;
  account_id: string;
  created_at: string;
  last_seen_at: string;
}

/** A failed sign-in, kept 15 minutes for the attempt limit. */
export interface SignInFailuresTable {
  id: string;
  /** Hex SHA-256 of the email as typed, trimmed and lower-cased. */
  email_hash: string;
  client_address: string;
  failed_at: string;
}

/** Where the inbox sync stands in one mailbox of a connection (decisions.md §17). */
export interface InboxMailboxesTable {
  connection_id: string;
  /** The mailbox's address, `imap://user@host:port/name`. */
  mailbox: string;
  /** The mailbox's UIDVALIDITY when `last_uid` was recorded (BIGINT: a string from PostgreSQL). */
  uid_validity: ColumnType<number | string, number, number>;
  /** The highest UID handled under that UIDVALIDITY, 0 when none yet (BIGINT, likewise). */
  last_uid: ColumnType<number | string, number, number>;
  synced_at: string;
}

/** Which instance syncs a connection now, until when (decisions.md §16, §17). */
export interface InboxLeasesTable {
  connection_id: string;
  /** The holder's id, one per process and pass runner. */
  holder: string;
  expires_at: string;
}

/** The install's identity (0007_install_id.sql): one row, made by the migration, never written from TypeScript. */
export interface InstallTable {
  /** 32 lower-case hex digits. */
  id: string;
}

/**
 * The list totals' counters (0003_row_counts.sql of sql/sqlite/ and sql/postgres/), kept by triggers: read by
 * `src/repos/row-counts.ts`, never written from TypeScript.
 */
export interface RowCountsTable {
  tbl: string;
  scope: string;
  key: string;
  n: number;
}

/** FTS5 index tables: only `rowid` and MATCH are used from TypeScript. */
export interface FtsTable {
  rowid: number;
}

export interface Database {
  accounts: AccountsTable;
  api_tokens: ApiTokensTable;
  projects: ProjectsTable;
  sites: SitesTable;
  keywords: KeywordsTable;
  blocked_domains: BlockedDomainsTable;
  prospects: ProspectsTable;
  prospects_fts: FtsTable;
  contacts: ContactsTable;
  drafts: DraftsTable;
  draft_messages: DraftMessagesTable;
  threads: ThreadsTable;
  thread_messages: ThreadMessagesTable;
  email_connections: EmailConnectionsTable;
  email_senders: EmailSendersTable;
  discovery_jobs: DiscoveryJobsTable;
  discovery_queries: DiscoveryQueriesTable;
  contact_discovery_work: ContactDiscoveryWorkTable;
  leads: LeadsTable;
  leads_fts: FtsTable;
  backlinks: BacklinksTable;
  backlink_checks: BacklinkChecksTable;
  idempotency_keys: IdempotencyKeysTable;
  account_passwords: AccountPasswordsTable;
  settings_sessions: SettingsSessionsTable;
  sign_in_failures: SignInFailuresTable;
  inbox_mailboxes: InboxMailboxesTable;
  inbox_leases: InboxLeasesTable;
  install: InstallTable;
  row_counts: RowCountsTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type ProjectRow = Selectable<ProjectsTable>;
export type SiteRow = Selectable<SitesTable>;
