-- outreach-api schema, version 1.
--
-- Conventions (see src/db/schema.ts for the matching kysely types):
--   * ids are TEXT; date-times are TEXT in ISO 8601 UTC with milliseconds
--     ('2026-03-01T09:30:00.000Z'), which sort correctly as text;
--   * booleans are INTEGER 0/1; arrays and free-form objects are JSON TEXT;
--   * every record below a project carries `project_id` (and below a site, `site_id`),
--     denormalised from its parents, so that every list filters and orders on one index.
-- Frozen once shipped: change the schema with a new numbered file.

CREATE TABLE accounts (
  id               TEXT PRIMARY KEY,
  email            TEXT NOT NULL,
  name             TEXT NOT NULL,
  plan             TEXT NOT NULL CHECK (plan IN ('free', 'pro', 'lifetime')),
  plan_expires_at  TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);

CREATE TABLE api_tokens (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  scopes        TEXT NOT NULL,            -- JSON array of scope names
  token_hash    TEXT NOT NULL UNIQUE,     -- hex SHA-256 of the raw token; the token itself is never stored
  token_prefix  TEXT NOT NULL,            -- first characters, for display ("oapi_Ab3d")
  last_four     TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  expires_at    TEXT,
  revoked_at    TEXT,
  last_used_at  TEXT
);
CREATE INDEX api_tokens_account ON api_tokens (account_id, created_at);

CREATE TABLE projects (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX projects_account_order ON projects (account_id, created_at DESC, id DESC);

CREATE TABLE sites (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  domain      TEXT NOT NULL,
  url         TEXT NOT NULL,
  status      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX sites_project_order ON sites (project_id, created_at DESC, id DESC);

CREATE TABLE keywords (
  id          TEXT PRIMARY KEY,
  site_id     TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  keyword     TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
CREATE INDEX keywords_site_order ON keywords (site_id, created_at DESC, id DESC);

CREATE TABLE blocked_domains (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  domain      TEXT NOT NULL,
  reason      TEXT,
  created_at  TEXT NOT NULL
);
CREATE INDEX blocked_domains_project_order ON blocked_domains (project_id, created_at DESC, id DESC);

CREATE TABLE prospects (
  id                          TEXT PRIMARY KEY,
  site_id                     TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id                  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  source_job_id               TEXT,
  source                      TEXT,
  status                      TEXT NOT NULL CHECK (status IN ('proposed', 'rejected', 'blocked')),
  url                         TEXT NOT NULL,
  normalized_url              TEXT,
  canonical_url               TEXT,
  domain                      TEXT NOT NULL,
  title                       TEXT,
  description                 TEXT,
  content_excerpt             TEXT,
  page_type                   TEXT,
  opportunity_type            TEXT,
  suggested_placement         TEXT,
  contact_paths               TEXT NOT NULL DEFAULT '[]',   -- JSON array of objects
  relevance_score             REAL,
  quality_score               REAL,
  risk_score                  REAL,
  match_reasons               TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
  risk_flags                  TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
  domain_authority            REAL,
  estimated_monthly_traffic   REAL,
  ranking_position            REAL,
  ranking_keyword             TEXT,
  crawl_status                TEXT,
  last_crawled_at             TEXT,
  created_at                  TEXT NOT NULL,
  updated_at                  TEXT NOT NULL
);
CREATE INDEX prospects_project_order ON prospects (project_id, created_at DESC, id DESC);
CREATE INDEX prospects_project_status_order ON prospects (project_id, status, created_at DESC, id DESC);
CREATE INDEX prospects_site_order ON prospects (site_id, created_at DESC, id DESC);
CREATE INDEX prospects_site_status_order ON prospects (site_id, status, created_at DESC, id DESC);

-- Substring search (decisions.md §5): trigram FTS over title, domain, url, description.
CREATE VIRTUAL TABLE prospects_fts USING fts5 (
  title, domain, url, description,
  content = '', contentless_delete = 1, tokenize = 'trigram'
);
CREATE TRIGGER prospects_fts_insert AFTER INSERT ON prospects BEGIN
  INSERT INTO prospects_fts (rowid, title, domain, url, description)
  VALUES (new.rowid, new.title, new.domain, new.url, new.description);
END;
CREATE TRIGGER prospects_fts_delete AFTER DELETE ON prospects BEGIN
  DELETE FROM prospects_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER prospects_fts_update AFTER UPDATE OF title, domain, url, description ON prospects BEGIN
  DELETE FROM prospects_fts WHERE rowid = old.rowid;
  INSERT INTO prospects_fts (rowid, title, domain, url, description)
  VALUES (new.rowid, new.title, new.domain, new.url, new.description);
END;

CREATE TABLE contacts (
  id                   TEXT PRIMARY KEY,
  prospect_id          TEXT NOT NULL REFERENCES prospects (id) ON DELETE CASCADE,
  site_id              TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id           TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  email                TEXT NOT NULL,
  full_name            TEXT,
  role                 TEXT,
  role_category        TEXT,
  company              TEXT,
  source               TEXT,
  source_provider      TEXT,
  source_url           TEXT,
  source_reference     TEXT,
  status               TEXT NOT NULL CHECK (status IN ('active', 'bounced', 'suppressed')),
  verification_status  TEXT NOT NULL CHECK (verification_status IN ('unverified', 'valid', 'invalid', 'risky', 'unknown')),
  last_verified_at     TEXT,
  suppression_reason   TEXT,
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL
);
CREATE INDEX contacts_prospect_order ON contacts (prospect_id, created_at DESC, id DESC);
CREATE INDEX contacts_prospect_email ON contacts (prospect_id, email COLLATE NOCASE);
CREATE INDEX contacts_site ON contacts (site_id);

CREATE TABLE drafts (
  id          TEXT PRIMARY KEY,
  site_id     TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  prospect_id TEXT NOT NULL REFERENCES prospects (id) ON DELETE CASCADE,
  contact_id  TEXT NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  message_id  TEXT,                         -- the current message (draft_messages.id)
  status      TEXT NOT NULL CHECK (status IN ('draft', 'awaiting_approval', 'changes_requested', 'approved')),
  purpose     TEXT,
  starred_at  TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX drafts_site_order ON drafts (site_id, created_at DESC, id DESC);
CREATE INDEX drafts_site_status_order ON drafts (site_id, status, created_at DESC, id DESC);
CREATE INDEX drafts_prospect ON drafts (prospect_id);
CREATE INDEX drafts_contact ON drafts (contact_id);

-- Every message a draft has had; drafts.message_id points at the current one.
CREATE TABLE draft_messages (
  id                   TEXT PRIMARY KEY,
  draft_id             TEXT NOT NULL REFERENCES drafts (id) ON DELETE CASCADE,
  subject              TEXT NOT NULL,
  body                 TEXT NOT NULL,
  personalization      TEXT NOT NULL DEFAULT '{}',   -- JSON object
  grounding_summary    TEXT,
  generation_provider  TEXT,
  generation_model     TEXT,
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL
);
CREATE INDEX draft_messages_draft ON draft_messages (draft_id, created_at);

CREATE TABLE threads (
  id                  TEXT PRIMARY KEY,
  site_id             TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id          TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  prospect_id         TEXT NOT NULL REFERENCES prospects (id) ON DELETE CASCADE,
  contact_id          TEXT NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  provider_thread_id  TEXT NOT NULL,        -- the mail provider's conversation id (API field `threadId`)
  status              TEXT NOT NULL CHECK (status IN ('open', 'awaiting_reply', 'replied', 'closed')),
  outcome             TEXT NOT NULL CHECK (outcome IN ('none', 'positive', 'neutral', 'negative')),
  classification      TEXT NOT NULL CHECK (classification IN ('interested', 'not_interested', 'question', 'out_of_office', 'auto_reply', 'bounce', 'unclassified')),
  inbound_count       INTEGER NOT NULL DEFAULT 0,
  outbound_count      INTEGER NOT NULL DEFAULT 0,
  last_inbound_at     TEXT,
  last_outbound_at    TEXT,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL
);
CREATE INDEX threads_site_order ON threads (site_id, updated_at DESC, id DESC);
CREATE INDEX threads_site_provider_id ON threads (site_id, provider_thread_id);
CREATE INDEX threads_prospect ON threads (prospect_id);
CREATE INDEX threads_contact ON threads (contact_id);

-- Messages of a thread. Outbound replies accepted through the API start `queued` and are the
-- outbox: the delivery worker picks rows with status 'queued' and next_attempt_at <= now.
CREATE TABLE thread_messages (
  id               TEXT PRIMARY KEY,
  thread_id        TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  direction        TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  status           TEXT NOT NULL DEFAULT 'sent' CHECK (status IN ('queued', 'sent', 'failed')),
  from_email       TEXT,
  to_emails        TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
  cc_emails        TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
  subject          TEXT,
  body             TEXT NOT NULL,
  sent_at          TEXT,
  sender_id        TEXT,
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TEXT,
  last_error       TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX thread_messages_thread_order ON thread_messages (thread_id, sent_at, id);
CREATE INDEX thread_messages_outbox ON thread_messages (next_attempt_at) WHERE status = 'queued';

CREATE TABLE email_connections (
  id               TEXT PRIMARY KEY,
  site_id          TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id       TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  provider         TEXT NOT NULL CHECK (provider IN ('gmail', 'outlook', 'smtp')),
  status           TEXT NOT NULL CHECK (status IN ('connected', 'disconnected', 'error')),
  account_email    TEXT NOT NULL,
  provider_region  TEXT,
  has_error        INTEGER NOT NULL DEFAULT 0,
  connected_at     TEXT,
  last_tested_at   TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX email_connections_site_order ON email_connections (site_id, created_at DESC, id DESC);

CREATE TABLE email_senders (
  id                   TEXT PRIMARY KEY,
  site_id              TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id           TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  connection_id        TEXT NOT NULL REFERENCES email_connections (id) ON DELETE CASCADE,
  source               TEXT,
  status               TEXT NOT NULL CHECK (status IN ('active', 'paused', 'disabled')),
  verification_status  TEXT,
  display_name         TEXT,
  email                TEXT NOT NULL,
  reply_to_email       TEXT,
  daily_limit          INTEGER,
  health_status        TEXT CHECK (health_status IN ('healthy', 'degraded', 'unhealthy')),
  warmup_status        TEXT CHECK (warmup_status IN ('not_started', 'warming', 'warmed', 'paused')),
  health_score         REAL,
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL
);
CREATE INDEX email_senders_site_order ON email_senders (site_id, created_at DESC, id DESC);
CREATE INDEX email_senders_connection ON email_senders (connection_id);

CREATE TABLE discovery_jobs (
  id               TEXT PRIMARY KEY,
  site_id          TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id       TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  type             TEXT NOT NULL CHECK (type IN ('prospect_discovery', 'contact_discovery')),
  status           TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'canceled')),
  subject_type     TEXT,
  subject_id       TEXT,
  current_attempt  INTEGER NOT NULL DEFAULT 0,
  max_attempts     INTEGER NOT NULL DEFAULT 3,
  scheduled_at     TEXT,
  canceled_at      TEXT,
  completed_at     TEXT,
  last_error       TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX discovery_jobs_site_order ON discovery_jobs (site_id, created_at DESC, id DESC);
CREATE INDEX discovery_jobs_runnable ON discovery_jobs (scheduled_at) WHERE status = 'queued';

CREATE TABLE discovery_queries (
  id                      TEXT PRIMARY KEY,
  job_id                  TEXT NOT NULL REFERENCES discovery_jobs (id) ON DELETE CASCADE,
  query                   TEXT NOT NULL,
  status                  TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  opportunity_type        TEXT,
  raw_result_count        INTEGER NOT NULL DEFAULT 0,
  unique_candidate_count  INTEGER NOT NULL DEFAULT 0,
  qualified_count         INTEGER NOT NULL DEFAULT 0,
  started_at              TEXT,
  completed_at            TEXT,
  error_code              TEXT,
  has_error               INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX discovery_queries_job_order ON discovery_queries (job_id, started_at, id);

CREATE TABLE leads (
  id                TEXT PRIMARY KEY,
  site_id           TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id        TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  platform          TEXT NOT NULL,
  source_container  TEXT,
  kind              TEXT,
  title             TEXT,
  body              TEXT,
  author_handle     TEXT,
  permalink         TEXT,
  score             REAL NOT NULL DEFAULT 0,
  tier              TEXT NOT NULL CHECK (tier IN ('hot', 'warm', 'explore')),
  lead_type         TEXT NOT NULL CHECK (lead_type IN ('competitor', 'describes_problem', 'looking_for_solution', 'other')),
  sentiment         TEXT,
  evidence_quote    TEXT,
  reason            TEXT,
  stage             TEXT NOT NULL CHECK (stage IN ('to_qualify', 'to_contact', 'in_conversation', 'closed')),
  feedback          TEXT,
  dismissed         INTEGER NOT NULL DEFAULT 0,
  redacted          INTEGER NOT NULL DEFAULT 0,
  posted_at         TEXT,
  first_seen_at     TEXT,
  created_at        TEXT NOT NULL
);
-- `quality` (tier hot/warm), `all` and `archived` views all start from (project, dismissed).
CREATE INDEX leads_project_order ON leads (project_id, dismissed, score DESC, posted_at DESC, id DESC);
CREATE INDEX leads_site_order ON leads (site_id, dismissed, score DESC, posted_at DESC, id DESC);
CREATE INDEX leads_project_stage ON leads (project_id, stage, dismissed, score DESC, posted_at DESC, id DESC);
CREATE INDEX leads_project_tier ON leads (project_id, tier, dismissed, score DESC, posted_at DESC, id DESC);

-- Search (decisions.md §5): the text of a redacted lead is never indexed, so never matched.
CREATE VIRTUAL TABLE leads_fts USING fts5 (
  title, body, author_handle, evidence_quote,
  content = '', contentless_delete = 1, tokenize = 'trigram'
);
CREATE TRIGGER leads_fts_insert AFTER INSERT ON leads BEGIN
  INSERT INTO leads_fts (rowid, title, body, author_handle, evidence_quote)
  VALUES (new.rowid,
          CASE WHEN new.redacted THEN NULL ELSE new.title END,
          CASE WHEN new.redacted THEN NULL ELSE new.body END,
          new.author_handle,
          CASE WHEN new.redacted THEN NULL ELSE new.evidence_quote END);
END;
CREATE TRIGGER leads_fts_delete AFTER DELETE ON leads BEGIN
  DELETE FROM leads_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER leads_fts_update AFTER UPDATE OF title, body, author_handle, evidence_quote, redacted ON leads BEGIN
  DELETE FROM leads_fts WHERE rowid = old.rowid;
  INSERT INTO leads_fts (rowid, title, body, author_handle, evidence_quote)
  VALUES (new.rowid,
          CASE WHEN new.redacted THEN NULL ELSE new.title END,
          CASE WHEN new.redacted THEN NULL ELSE new.body END,
          new.author_handle,
          CASE WHEN new.redacted THEN NULL ELSE new.evidence_quote END);
END;

CREATE TABLE backlinks (
  id                  TEXT PRIMARY KEY,
  site_id             TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id          TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  source              TEXT NOT NULL,
  acquisition_origin  TEXT NOT NULL,
  source_url          TEXT NOT NULL,
  target_url          TEXT NOT NULL,
  category            TEXT,
  status              TEXT NOT NULL CHECK (status IN ('pending', 'live', 'changed', 'lost', 'blocked', 'error', 'closed')),
  observed_anchor     TEXT,
  last_checked_at     TEXT,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL
);
CREATE INDEX backlinks_project_order ON backlinks (project_id, created_at DESC, id DESC);
CREATE INDEX backlinks_project_status_order ON backlinks (project_id, status, created_at DESC, id DESC);
CREATE INDEX backlinks_site_order ON backlinks (site_id, created_at DESC, id DESC);
CREATE INDEX backlinks_site_status_order ON backlinks (site_id, status, created_at DESC, id DESC);

CREATE TABLE backlink_checks (
  id                    TEXT PRIMARY KEY,
  backlink_id           TEXT NOT NULL REFERENCES backlinks (id) ON DELETE CASCADE,
  status                TEXT NOT NULL,
  requested_source_url  TEXT,
  final_source_url      TEXT,
  http_status           INTEGER,
  target_found          INTEGER NOT NULL DEFAULT 0,
  observed_target_url   TEXT,
  observed_anchor       TEXT,
  observed_rel          TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
  has_error             INTEGER NOT NULL DEFAULT 0,
  checked_at            TEXT NOT NULL
);
CREATE INDEX backlink_checks_backlink_order ON backlink_checks (backlink_id, checked_at DESC, id DESC);

-- decisions.md §7: one row per (account, operation, key), kept 24 h.
CREATE TABLE idempotency_keys (
  account_id       TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  operation        TEXT NOT NULL,          -- e.g. 'POST /{group}/{id}/sites/{siteId}/threads/{threadId}/replies'
  key              TEXT NOT NULL,
  request_hash     TEXT NOT NULL,          -- SHA-256 of the path ids and canonical JSON body
  state            TEXT NOT NULL CHECK (state IN ('in_flight', 'completed')),
  response_status  INTEGER,
  response_body    TEXT,
  created_at       TEXT NOT NULL,
  expires_at       TEXT NOT NULL,
  PRIMARY KEY (account_id, operation, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
