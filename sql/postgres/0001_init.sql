-- outreach-api schema, version 1, for PostgreSQL 14+ (decisions.md §16). The same tables,
-- columns, constraints and indexes as the SQLite migration 0001_init.sql, so that the
-- repositories' SQL, written once through kysely, reads and writes the same values on both
-- stores (test/store/postgres-schema.test.ts holds the two schemas together).
--
-- Conventions of every sql/postgres/ file (write 0005, 0006, … the same way):
--   * one file per SQLite migration, with the same number and name; index, trigger and
--     constraint names are the SQLite ones; columns are in the same order;
--   * TEXT is `text COLLATE "C"`: comparisons, ORDER BY and indexes go byte by byte, as SQLite's
--     BINARY does, whatever locale the database was created with (an en_US collation would
--     order ids and keys differently and ignore punctuation);
--   * date-times stay TEXT in ISO 8601 UTC with milliseconds, not timestamptz: the repositories
--     compare them as strings and return them as they are ('2026-03-01T09:30:00.000Z'); pg would
--     return a timestamptz as a Date and drop the format;
--   * INTEGER is `integer`: pg returns it as a JS number (an int8 comes back as a string);
--     booleans stay INTEGER 0/1, not boolean, since the repositories test `= 0` and `=== 1`;
--   * REAL is `double precision` (SQLite's REAL is an 8-byte float; `real` would round);
--   * arrays and free-form objects stay JSON TEXT, not jsonb: the repositories JSON.parse them,
--     and jsonb would reorder keys and rewrite the text;
--   * `WITHOUT ROWID` tables are plain tables (a heap with its primary-key index); there is no
--     `rowid`, so nothing below or in the repositories' PostgreSQL path uses it;
--   * FTS5 tables and their triggers have no counterpart: substring search is `pg_trgm` GIN
--     indexes over `fold(column)` expressions (below), kept by PostgreSQL itself;
--   * NULLs sort high on PostgreSQL and low on SQLite. Where a list's order walks NULLs (leads'
--     `posted_at`: the ones without come last), the index and the ORDER BY say SQLite's placement
--     explicitly (`DESC NULLS LAST`); elsewhere the queries exclude NULLs (`sent_at IS NOT NULL`,
--     `next_attempt_at <= ?`) and the default placement serves a plain ORDER BY;
--   * triggers are PL/pgSQL (sql/postgres/0003_row_counts.sql); never `INSERT OR …`; `||` on a
--     boolean needs `::int` (PostgreSQL prints true/false, SQLite 1/0).
-- Frozen once shipped: change the schema with a new numbered file, in both directories.
--
-- Requirements: the server is built with ICU (collations "und-x-icu", used by fold(), and
-- "nocase" below); `pg_trgm` ships with PostgreSQL (contrib) and is a trusted extension, so the
-- database owner can create it. A UTF-8 LC_CTYPE (C.UTF-8, en_US.UTF-8, …) lets pg_trgm index
-- letters of every script; under plain "C" it sees only ASCII letters and digits, and searches
-- in other scripts stay correct but scan.
--
-- ---- search (decisions.md §5, §16) -------------------------------------------------------------
-- Case-insensitive substring search for every script and term length. `fold(text)` is the
-- case folding of src/db/sql-functions.ts `foldCase` (SQLite's `fold()`): each character's own
-- Unicode lower case, no context rules. ICU's lower() ("und", the root locale) is that mapping
-- except for one context rule, the final sigma (Σ at a word's end → ς), so Σ becomes σ first.
-- lower() under the database's libc locale is not used: it maps İ to "i" (foldCase: "i̇") and
-- depends on the locale the database was created with (ASCII only under "C", I → ı under tr_TR).
-- A character whose case mapping is newer than the server's ICU (Unicode 16+ letters on ICU 72)
-- is left as it is; folding both sides in SQL keeps every search consistent on one server.
--
-- The WHERE condition of a search, the same for every term length (the trigram index serves
-- terms with 3+ characters of one word; shorter terms scan the scope, as on SQLite):
--
--   $p = '%' || fold($term) || '%', with `\`, `%` and `_` in $term escaped by a backslash
--        (LIKE's default escape): term.replace(/[\\%_]/g, '\\$&');
--   prospects:  (fold(title) LIKE $p OR fold(domain) LIKE $p OR fold(url) LIKE $p
--                OR fold(description) LIKE $p)
--   leads:      (fold(author_handle) LIKE $p OR (redacted = 0 AND (fold(title) LIKE $p
--                OR fold(body) LIKE $p OR fold(evidence_quote) LIKE $p)))
--
-- The expressions must be written exactly `fold(<column>)` to match the indexes. A redacted
-- lead's title, body and evidence quote are indexed like any other text but never match: the
-- condition tests them only when `redacted = 0` (SQLite leaves them out of leads_fts instead).
-- After an ICU upgrade of the server (its major version), run `REINDEX INDEX prospects_search,
-- leads_search` (PostgreSQL warns of the collation version change).
--
-- The two trigram indexes are `fastupdate = off`: every write updates them at once (1 to 3 ms a
-- prospect on the loaded development machine) instead of queueing entries in a pending list of
-- up to 4 MB, which every search reads through and which the write that fills it merges while
-- its client waits. Measured with a full list: a search of 81,400 prospects took 9 ms through
-- the index (0.15 ms at 20,000 with an empty list), and the planner, counting the list's cost,
-- chose a 165 ms sequential scan instead. A bulk load turns the list on for its own transaction
-- and merges it before it commits (pause_row_counts / resume_row_counts, 0003_row_counts.sql).

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE FUNCTION fold(value text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN lower(replace(value, 'Σ', 'σ') COLLATE "und-x-icu");

-- `COLLATE NOCASE` in the repositories' SQL (contacts by email): ICU, case-insensitive
-- (strength 2). SQLite's NOCASE folds ASCII letters only; this one folds the case of every
-- script (and treats width variants alike), so two addresses that differ only in the case of a
-- non-ASCII letter are one address here and two on SQLite. Equality only: LIKE cannot use it.
CREATE COLLATION nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);

CREATE TABLE accounts (
  id               text COLLATE "C" PRIMARY KEY,
  email            text COLLATE "C" NOT NULL,
  name             text COLLATE "C" NOT NULL,
  plan             text COLLATE "C" NOT NULL CHECK (plan IN ('free', 'pro', 'lifetime')),
  plan_expires_at  text COLLATE "C",
  created_at       text COLLATE "C" NOT NULL,
  updated_at       text COLLATE "C" NOT NULL
);

CREATE TABLE api_tokens (
  id            text COLLATE "C" PRIMARY KEY,
  account_id    text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name          text COLLATE "C" NOT NULL,
  scopes        text COLLATE "C" NOT NULL,            -- JSON array of scope names
  token_hash    text COLLATE "C" NOT NULL UNIQUE,     -- hex SHA-256 of the raw token; the token itself is never stored
  token_prefix  text COLLATE "C" NOT NULL,            -- first characters, for display ("oapi_Ab3d")
  last_four     text COLLATE "C" NOT NULL,
  created_at    text COLLATE "C" NOT NULL,
  expires_at    text COLLATE "C",
  revoked_at    text COLLATE "C",
  last_used_at  text COLLATE "C"
);
CREATE INDEX api_tokens_account ON api_tokens (account_id, created_at);

CREATE TABLE projects (
  id          text COLLATE "C" PRIMARY KEY,
  account_id  text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name        text COLLATE "C" NOT NULL,
  created_at  text COLLATE "C" NOT NULL,
  updated_at  text COLLATE "C" NOT NULL
);
CREATE INDEX projects_account_order ON projects (account_id, created_at DESC, id DESC);

CREATE TABLE sites (
  id          text COLLATE "C" PRIMARY KEY,
  project_id  text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name        text COLLATE "C" NOT NULL,
  domain      text COLLATE "C" NOT NULL,
  url         text COLLATE "C" NOT NULL,
  status      text COLLATE "C" NOT NULL,
  created_at  text COLLATE "C" NOT NULL,
  updated_at  text COLLATE "C" NOT NULL
);
CREATE INDEX sites_project_order ON sites (project_id, created_at DESC, id DESC);

CREATE TABLE keywords (
  id          text COLLATE "C" PRIMARY KEY,
  site_id     text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id  text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  keyword     text COLLATE "C" NOT NULL,
  created_at  text COLLATE "C" NOT NULL
);
CREATE INDEX keywords_site_order ON keywords (site_id, created_at DESC, id DESC);

CREATE TABLE blocked_domains (
  id          text COLLATE "C" PRIMARY KEY,
  project_id  text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  domain      text COLLATE "C" NOT NULL,
  reason      text COLLATE "C",
  created_at  text COLLATE "C" NOT NULL
);
CREATE INDEX blocked_domains_project_order ON blocked_domains (project_id, created_at DESC, id DESC);

CREATE TABLE prospects (
  id                          text COLLATE "C" PRIMARY KEY,
  site_id                     text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id                  text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  source_job_id               text COLLATE "C",
  source                      text COLLATE "C",
  status                      text COLLATE "C" NOT NULL CHECK (status IN ('proposed', 'rejected', 'blocked')),
  url                         text COLLATE "C" NOT NULL,
  normalized_url              text COLLATE "C",
  canonical_url               text COLLATE "C",
  domain                      text COLLATE "C" NOT NULL,
  title                       text COLLATE "C",
  description                 text COLLATE "C",
  content_excerpt             text COLLATE "C",
  page_type                   text COLLATE "C",
  opportunity_type            text COLLATE "C",
  suggested_placement         text COLLATE "C",
  contact_paths               text COLLATE "C" NOT NULL DEFAULT '[]',   -- JSON array of objects
  relevance_score             double precision,
  quality_score               double precision,
  risk_score                  double precision,
  match_reasons               text COLLATE "C" NOT NULL DEFAULT '[]',   -- JSON array of strings
  risk_flags                  text COLLATE "C" NOT NULL DEFAULT '[]',   -- JSON array of strings
  domain_authority            double precision,
  estimated_monthly_traffic   double precision,
  ranking_position            double precision,
  ranking_keyword             text COLLATE "C",
  crawl_status                text COLLATE "C",
  last_crawled_at             text COLLATE "C",
  created_at                  text COLLATE "C" NOT NULL,
  updated_at                  text COLLATE "C" NOT NULL
);
CREATE INDEX prospects_project_order ON prospects (project_id, created_at DESC, id DESC);
CREATE INDEX prospects_project_status_order ON prospects (project_id, status, created_at DESC, id DESC);
CREATE INDEX prospects_site_order ON prospects (site_id, created_at DESC, id DESC);
CREATE INDEX prospects_site_status_order ON prospects (site_id, status, created_at DESC, id DESC);

-- Substring search (decisions.md §5): trigrams of title, domain, url, description, folded (the
-- search condition is in the header). SQLite: the FTS5 table prospects_fts.
CREATE INDEX prospects_search ON prospects USING gin (
  fold(title) gin_trgm_ops, fold(domain) gin_trgm_ops, fold(url) gin_trgm_ops, fold(description) gin_trgm_ops
) WITH (fastupdate = off);

CREATE TABLE contacts (
  id                   text COLLATE "C" PRIMARY KEY,
  prospect_id          text COLLATE "C" NOT NULL REFERENCES prospects (id) ON DELETE CASCADE,
  site_id              text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id           text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  email                text COLLATE "C" NOT NULL,
  full_name            text COLLATE "C",
  role                 text COLLATE "C",
  role_category        text COLLATE "C",
  company              text COLLATE "C",
  source               text COLLATE "C",
  source_provider      text COLLATE "C",
  source_url           text COLLATE "C",
  source_reference     text COLLATE "C",
  status               text COLLATE "C" NOT NULL CHECK (status IN ('active', 'bounced', 'suppressed')),
  verification_status  text COLLATE "C" NOT NULL CHECK (verification_status IN ('unverified', 'valid', 'invalid', 'risky', 'unknown')),
  last_verified_at     text COLLATE "C",
  suppression_reason   text COLLATE "C",
  created_at           text COLLATE "C" NOT NULL,
  updated_at           text COLLATE "C" NOT NULL
);
CREATE INDEX contacts_prospect_order ON contacts (prospect_id, created_at DESC, id DESC);
CREATE INDEX contacts_prospect_email ON contacts (prospect_id, email COLLATE nocase);
CREATE INDEX contacts_site ON contacts (site_id);

CREATE TABLE drafts (
  id          text COLLATE "C" PRIMARY KEY,
  site_id     text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id  text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  prospect_id text COLLATE "C" NOT NULL REFERENCES prospects (id) ON DELETE CASCADE,
  contact_id  text COLLATE "C" NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  message_id  text COLLATE "C",                         -- the current message (draft_messages.id)
  status      text COLLATE "C" NOT NULL CHECK (status IN ('draft', 'awaiting_approval', 'changes_requested', 'approved')),
  purpose     text COLLATE "C",
  starred_at  text COLLATE "C",
  created_at  text COLLATE "C" NOT NULL,
  updated_at  text COLLATE "C" NOT NULL
);
CREATE INDEX drafts_site_order ON drafts (site_id, created_at DESC, id DESC);
CREATE INDEX drafts_site_status_order ON drafts (site_id, status, created_at DESC, id DESC);
CREATE INDEX drafts_prospect ON drafts (prospect_id);
CREATE INDEX drafts_contact ON drafts (contact_id);

-- Every message a draft has had; drafts.message_id points at the current one.
CREATE TABLE draft_messages (
  id                   text COLLATE "C" PRIMARY KEY,
  draft_id             text COLLATE "C" NOT NULL REFERENCES drafts (id) ON DELETE CASCADE,
  subject              text COLLATE "C" NOT NULL,
  body                 text COLLATE "C" NOT NULL,
  personalization      text COLLATE "C" NOT NULL DEFAULT '{}',   -- JSON object
  grounding_summary    text COLLATE "C",
  generation_provider  text COLLATE "C",
  generation_model     text COLLATE "C",
  created_at           text COLLATE "C" NOT NULL,
  updated_at           text COLLATE "C" NOT NULL
);
CREATE INDEX draft_messages_draft ON draft_messages (draft_id, created_at);

CREATE TABLE threads (
  id                  text COLLATE "C" PRIMARY KEY,
  site_id             text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id          text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  prospect_id         text COLLATE "C" NOT NULL REFERENCES prospects (id) ON DELETE CASCADE,
  contact_id          text COLLATE "C" NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  provider_thread_id  text COLLATE "C" NOT NULL,        -- the mail provider's conversation id (API field `threadId`)
  status              text COLLATE "C" NOT NULL CHECK (status IN ('open', 'awaiting_reply', 'replied', 'closed')),
  outcome             text COLLATE "C" NOT NULL CHECK (outcome IN ('none', 'positive', 'neutral', 'negative')),
  classification      text COLLATE "C" NOT NULL CHECK (classification IN ('interested', 'not_interested', 'question', 'out_of_office', 'auto_reply', 'bounce', 'unclassified')),
  inbound_count       integer NOT NULL DEFAULT 0,
  outbound_count      integer NOT NULL DEFAULT 0,
  last_inbound_at     text COLLATE "C",
  last_outbound_at    text COLLATE "C",
  created_at          text COLLATE "C" NOT NULL,
  updated_at          text COLLATE "C" NOT NULL
);
CREATE INDEX threads_site_order ON threads (site_id, updated_at DESC, id DESC);
CREATE INDEX threads_site_provider_id ON threads (site_id, provider_thread_id);
CREATE INDEX threads_prospect ON threads (prospect_id);
CREATE INDEX threads_contact ON threads (contact_id);

-- Messages of a thread. Outbound replies accepted through the API start `queued` and are the
-- outbox: the delivery worker picks rows with status 'queued' and next_attempt_at <= now.
CREATE TABLE thread_messages (
  id               text COLLATE "C" PRIMARY KEY,
  thread_id        text COLLATE "C" NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  direction        text COLLATE "C" NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  status           text COLLATE "C" NOT NULL DEFAULT 'sent' CHECK (status IN ('queued', 'sent', 'failed')),
  from_email       text COLLATE "C",
  to_emails        text COLLATE "C" NOT NULL DEFAULT '[]',   -- JSON array of strings
  cc_emails        text COLLATE "C" NOT NULL DEFAULT '[]',   -- JSON array of strings
  subject          text COLLATE "C",
  body             text COLLATE "C" NOT NULL,
  sent_at          text COLLATE "C",
  sender_id        text COLLATE "C",
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  text COLLATE "C",
  last_error       text COLLATE "C",
  created_at       text COLLATE "C" NOT NULL,
  updated_at       text COLLATE "C" NOT NULL
);
CREATE INDEX thread_messages_thread_order ON thread_messages (thread_id, sent_at, id);
CREATE INDEX thread_messages_outbox ON thread_messages (next_attempt_at) WHERE status = 'queued';

CREATE TABLE email_connections (
  id               text COLLATE "C" PRIMARY KEY,
  site_id          text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id       text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  provider         text COLLATE "C" NOT NULL CHECK (provider IN ('gmail', 'outlook', 'smtp')),
  status           text COLLATE "C" NOT NULL CHECK (status IN ('connected', 'disconnected', 'error')),
  account_email    text COLLATE "C" NOT NULL,
  provider_region  text COLLATE "C",
  has_error        integer NOT NULL DEFAULT 0,
  connected_at     text COLLATE "C",
  last_tested_at   text COLLATE "C",
  created_at       text COLLATE "C" NOT NULL,
  updated_at       text COLLATE "C" NOT NULL
);
CREATE INDEX email_connections_site_order ON email_connections (site_id, created_at DESC, id DESC);

CREATE TABLE email_senders (
  id                   text COLLATE "C" PRIMARY KEY,
  site_id              text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id           text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  connection_id        text COLLATE "C" NOT NULL REFERENCES email_connections (id) ON DELETE CASCADE,
  source               text COLLATE "C",
  status               text COLLATE "C" NOT NULL CHECK (status IN ('active', 'paused', 'disabled')),
  verification_status  text COLLATE "C",
  display_name         text COLLATE "C",
  email                text COLLATE "C" NOT NULL,
  reply_to_email       text COLLATE "C",
  daily_limit          integer,
  health_status        text COLLATE "C" CHECK (health_status IN ('healthy', 'degraded', 'unhealthy')),
  warmup_status        text COLLATE "C" CHECK (warmup_status IN ('not_started', 'warming', 'warmed', 'paused')),
  health_score         double precision,
  created_at           text COLLATE "C" NOT NULL,
  updated_at           text COLLATE "C" NOT NULL
);
CREATE INDEX email_senders_site_order ON email_senders (site_id, created_at DESC, id DESC);
CREATE INDEX email_senders_connection ON email_senders (connection_id);

CREATE TABLE discovery_jobs (
  id               text COLLATE "C" PRIMARY KEY,
  site_id          text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id       text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  type             text COLLATE "C" NOT NULL CHECK (type IN ('prospect_discovery', 'contact_discovery')),
  status           text COLLATE "C" NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'canceled')),
  subject_type     text COLLATE "C",
  subject_id       text COLLATE "C",
  current_attempt  integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL DEFAULT 3,
  scheduled_at     text COLLATE "C",
  canceled_at      text COLLATE "C",
  completed_at     text COLLATE "C",
  last_error       text COLLATE "C",
  created_at       text COLLATE "C" NOT NULL,
  updated_at       text COLLATE "C" NOT NULL
);
CREATE INDEX discovery_jobs_site_order ON discovery_jobs (site_id, created_at DESC, id DESC);
CREATE INDEX discovery_jobs_runnable ON discovery_jobs (scheduled_at) WHERE status = 'queued';

CREATE TABLE discovery_queries (
  id                      text COLLATE "C" PRIMARY KEY,
  job_id                  text COLLATE "C" NOT NULL REFERENCES discovery_jobs (id) ON DELETE CASCADE,
  query                   text COLLATE "C" NOT NULL,
  status                  text COLLATE "C" NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  opportunity_type        text COLLATE "C",
  raw_result_count        integer NOT NULL DEFAULT 0,
  unique_candidate_count  integer NOT NULL DEFAULT 0,
  qualified_count         integer NOT NULL DEFAULT 0,
  started_at              text COLLATE "C",
  completed_at            text COLLATE "C",
  error_code              text COLLATE "C",
  has_error               integer NOT NULL DEFAULT 0
);
CREATE INDEX discovery_queries_job_order ON discovery_queries (job_id, started_at, id);

CREATE TABLE leads (
  id                text COLLATE "C" PRIMARY KEY,
  site_id           text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id        text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  platform          text COLLATE "C" NOT NULL,
  source_container  text COLLATE "C",
  kind              text COLLATE "C",
  title             text COLLATE "C",
  body              text COLLATE "C",
  author_handle     text COLLATE "C",
  permalink         text COLLATE "C",
  score             double precision NOT NULL DEFAULT 0,
  tier              text COLLATE "C" NOT NULL CHECK (tier IN ('hot', 'warm', 'explore')),
  lead_type         text COLLATE "C" NOT NULL CHECK (lead_type IN ('competitor', 'describes_problem', 'looking_for_solution', 'other')),
  sentiment         text COLLATE "C",
  evidence_quote    text COLLATE "C",
  reason            text COLLATE "C",
  stage             text COLLATE "C" NOT NULL CHECK (stage IN ('to_qualify', 'to_contact', 'in_conversation', 'closed')),
  feedback          text COLLATE "C",
  dismissed         integer NOT NULL DEFAULT 0,
  redacted          integer NOT NULL DEFAULT 0,
  posted_at         text COLLATE "C",
  first_seen_at     text COLLATE "C",
  created_at        text COLLATE "C" NOT NULL
);
-- `quality` (tier hot/warm), `all` and `archived` views all start from (project, dismissed).
-- Leads without `posted_at` come last (decisions.md §5): SQLite's NULLs sort low, so DESC puts
-- them last there; PostgreSQL's sort high, so its indexes (and the list's ORDER BY, on both
-- stores) say `posted_at DESC NULLS LAST`.
CREATE INDEX leads_project_order ON leads (project_id, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);
CREATE INDEX leads_site_order ON leads (site_id, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);
CREATE INDEX leads_project_stage ON leads (project_id, stage, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);
CREATE INDEX leads_project_tier ON leads (project_id, tier, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);

-- Search (decisions.md §5): trigrams of title, body, author_handle, evidence_quote, folded. The
-- condition (header) never matches a redacted lead's title, body or evidence quote.
-- SQLite: the FTS5 table leads_fts.
CREATE INDEX leads_search ON leads USING gin (
  fold(title) gin_trgm_ops, fold(body) gin_trgm_ops, fold(author_handle) gin_trgm_ops, fold(evidence_quote) gin_trgm_ops
) WITH (fastupdate = off);

CREATE TABLE backlinks (
  id                  text COLLATE "C" PRIMARY KEY,
  site_id             text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  project_id          text COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  source              text COLLATE "C" NOT NULL,
  acquisition_origin  text COLLATE "C" NOT NULL,
  source_url          text COLLATE "C" NOT NULL,
  target_url          text COLLATE "C" NOT NULL,
  category            text COLLATE "C",
  status              text COLLATE "C" NOT NULL CHECK (status IN ('pending', 'live', 'changed', 'lost', 'blocked', 'error', 'closed')),
  observed_anchor     text COLLATE "C",
  last_checked_at     text COLLATE "C",
  created_at          text COLLATE "C" NOT NULL,
  updated_at          text COLLATE "C" NOT NULL
);
CREATE INDEX backlinks_project_order ON backlinks (project_id, created_at DESC, id DESC);
CREATE INDEX backlinks_project_status_order ON backlinks (project_id, status, created_at DESC, id DESC);
CREATE INDEX backlinks_site_order ON backlinks (site_id, created_at DESC, id DESC);
CREATE INDEX backlinks_site_status_order ON backlinks (site_id, status, created_at DESC, id DESC);

CREATE TABLE backlink_checks (
  id                    text COLLATE "C" PRIMARY KEY,
  backlink_id           text COLLATE "C" NOT NULL REFERENCES backlinks (id) ON DELETE CASCADE,
  status                text COLLATE "C" NOT NULL,
  requested_source_url  text COLLATE "C",
  final_source_url      text COLLATE "C",
  http_status           integer,
  target_found          integer NOT NULL DEFAULT 0,
  observed_target_url   text COLLATE "C",
  observed_anchor       text COLLATE "C",
  observed_rel          text COLLATE "C" NOT NULL DEFAULT '[]',   -- JSON array of strings
  has_error             integer NOT NULL DEFAULT 0,
  checked_at            text COLLATE "C" NOT NULL
);
CREATE INDEX backlink_checks_backlink_order ON backlink_checks (backlink_id, checked_at DESC, id DESC);

-- decisions.md §7: one row per (account, operation, key), kept 24 h.
CREATE TABLE idempotency_keys (
  account_id       text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  operation        text COLLATE "C" NOT NULL,          -- e.g. 'POST /{group}/{id}/sites/{siteId}/threads/{threadId}/replies'
  key              text COLLATE "C" NOT NULL,
  request_hash     text COLLATE "C" NOT NULL,          -- SHA-256 of the path ids and canonical JSON body
  state            text COLLATE "C" NOT NULL CHECK (state IN ('in_flight', 'completed')),
  response_status  integer,
  response_body    text COLLATE "C",
  created_at       text COLLATE "C" NOT NULL,
  expires_at       text COLLATE "C" NOT NULL,
  PRIMARY KEY (account_id, operation, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
