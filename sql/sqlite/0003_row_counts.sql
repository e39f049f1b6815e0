-- Exact list totals without COUNT(*): counters kept by triggers, and the indexes the list
-- filters and orders were missing.
--
-- Every list endpoint returns `pagination.total` (decisions.md §5). Counting the matches of a
-- large scope (50,000 backlinks of a project) walks as many index entries on every request;
-- a counter is one primary-key lookup. The repositories (src/repos/row-counts.ts) read these
-- rows for every filter set; only a search is counted with COUNT(*), over its trigram matches
-- (and kept until the data changes, src/repos/data-cache.ts).
--
-- One row per (counted table, scope id, key). `scope` is the id of the record the list is
-- scoped to (project, site, prospect, backlink, job or thread); `key` names the scope kind and
-- the values of the filter columns, finest grain only: a coarser total is the sum of the fine
-- rows (read by primary key, at most 48 of them), so each write touches few counters.
--
--   backlinks          project:<status>, site:<status>
--   prospects          project:<status>, site:<status>
--   drafts             site:<status>
--   threads            site:<status>
--   backlink_checks    backlink
--   contacts           prospect
--   keywords           site
--   blocked_domains    project
--   discovery_jobs     site
--   discovery_queries  job:<1 when started_at is set, else 0>   (the list pages started ones first)
--   thread_messages    thread:<1 when sent_at is set, else 0>  (the list pages sent ones first)
--   leads              project:<dismissed>:<tier>:<stage>:<lead_type>, site:<same>,
--                      project:<dismissed>:<tier>:<stage>:<lead_type>:platform=<platform>, site:<same>
--
-- Enumerated values never contain ':', and a free-text value (a platform) only ever ends a key,
-- so no two (scope, key) pairs can describe different sets. A lead is counted twice per scope:
-- without and with its platform; the view (dismissed, tier), tier, stage and leadType filters,
-- in any combination, select the keys to add up, and a platform filter picks the second family.
-- Only a search is counted with COUNT(*) (over the trigram matches).
--
-- The triggers see every write: the API, the workers and ON DELETE CASCADE (whose deletes fire
-- the child tables' triggers). They add +1 / -1 by UPSERT, so a counter row appears on first
-- use; a row whose scope is gone stays behind with n = 0, harmless. An UPDATE that moves a row
-- to another scope or filter value moves its count. An import that loads a table in bulk drops
-- that table's triggers inside its transaction, recounts the table from its rows and recreates
-- them before it commits (src/repos/row-counts.ts `pauseRowCounts`), with the statements of
-- the backfill below. Write to these tables with INSERT, UPDATE and DELETE, never
-- INSERT OR REPLACE / REPLACE: the rows REPLACE deletes fire DELETE triggers only when
-- recursive_triggers is on, which depends on how SQLite was built.

CREATE TABLE row_counts (
  tbl    TEXT NOT NULL,      -- the counted table
  scope  TEXT NOT NULL,      -- id of the project, site, … the list is scoped to
  key    TEXT NOT NULL,      -- scope kind and filter values, see above
  n      INTEGER NOT NULL,
  PRIMARY KEY (tbl, scope, key)
) WITHOUT ROWID;

-- ---- backfill from the rows already stored --------------------------------------------------

INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'backlinks', project_id, 'project:' || status, count(*) FROM backlinks GROUP BY project_id, status;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'backlinks', site_id, 'site:' || status, count(*) FROM backlinks GROUP BY site_id, status;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'prospects', project_id, 'project:' || status, count(*) FROM prospects GROUP BY project_id, status;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'prospects', site_id, 'site:' || status, count(*) FROM prospects GROUP BY site_id, status;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'drafts', site_id, 'site:' || status, count(*) FROM drafts GROUP BY site_id, status;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'threads', site_id, 'site:' || status, count(*) FROM threads GROUP BY site_id, status;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'backlink_checks', backlink_id, 'backlink', count(*) FROM backlink_checks GROUP BY backlink_id;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'contacts', prospect_id, 'prospect', count(*) FROM contacts GROUP BY prospect_id;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'keywords', site_id, 'site', count(*) FROM keywords GROUP BY site_id;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'blocked_domains', project_id, 'project', count(*) FROM blocked_domains GROUP BY project_id;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'discovery_jobs', site_id, 'site', count(*) FROM discovery_jobs GROUP BY site_id;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'discovery_queries', job_id, 'job:' || (started_at IS NOT NULL), count(*) FROM discovery_queries GROUP BY job_id, started_at IS NOT NULL;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'thread_messages', thread_id, 'thread:' || (sent_at IS NOT NULL), count(*) FROM thread_messages GROUP BY thread_id, sent_at IS NOT NULL;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'leads', project_id, 'project:' || dismissed || ':' || tier || ':' || stage || ':' || lead_type, count(*)
  FROM leads GROUP BY project_id, dismissed, tier, stage, lead_type;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'leads', site_id, 'site:' || dismissed || ':' || tier || ':' || stage || ':' || lead_type, count(*)
  FROM leads GROUP BY site_id, dismissed, tier, stage, lead_type;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'leads', project_id, 'project:' || dismissed || ':' || tier || ':' || stage || ':' || lead_type || ':platform=' || platform, count(*)
  FROM leads GROUP BY project_id, dismissed, tier, stage, lead_type, platform;
INSERT INTO row_counts (tbl, scope, key, n)
  SELECT 'leads', site_id, 'site:' || dismissed || ':' || tier || ':' || stage || ':' || lead_type || ':platform=' || platform, count(*)
  FROM leads GROUP BY site_id, dismissed, tier, stage, lead_type, platform;

-- ---- triggers ---------------------------------------------------------------------------------
-- Per table: AFTER INSERT adds 1 to the new row's counters, AFTER DELETE takes 1 from the old
-- row's, AFTER UPDATE OF the counted columns (when one really changed) does both.

CREATE TRIGGER backlinks_count_insert AFTER INSERT ON backlinks BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('backlinks', new.project_id, 'project:' || new.status, 1),
    ('backlinks', new.site_id, 'site:' || new.status, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER backlinks_count_delete AFTER DELETE ON backlinks BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('backlinks', old.project_id, 'project:' || old.status, -1),
    ('backlinks', old.site_id, 'site:' || old.status, -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER backlinks_count_update AFTER UPDATE OF project_id, site_id, status ON backlinks
WHEN old.project_id IS NOT new.project_id OR old.site_id IS NOT new.site_id OR old.status IS NOT new.status BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('backlinks', old.project_id, 'project:' || old.status, -1),
    ('backlinks', old.site_id, 'site:' || old.status, -1),
    ('backlinks', new.project_id, 'project:' || new.status, 1),
    ('backlinks', new.site_id, 'site:' || new.status, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER prospects_count_insert AFTER INSERT ON prospects BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('prospects', new.project_id, 'project:' || new.status, 1),
    ('prospects', new.site_id, 'site:' || new.status, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER prospects_count_delete AFTER DELETE ON prospects BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('prospects', old.project_id, 'project:' || old.status, -1),
    ('prospects', old.site_id, 'site:' || old.status, -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER prospects_count_update AFTER UPDATE OF project_id, site_id, status ON prospects
WHEN old.project_id IS NOT new.project_id OR old.site_id IS NOT new.site_id OR old.status IS NOT new.status BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('prospects', old.project_id, 'project:' || old.status, -1),
    ('prospects', old.site_id, 'site:' || old.status, -1),
    ('prospects', new.project_id, 'project:' || new.status, 1),
    ('prospects', new.site_id, 'site:' || new.status, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER drafts_count_insert AFTER INSERT ON drafts BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('drafts', new.site_id, 'site:' || new.status, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER drafts_count_delete AFTER DELETE ON drafts BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('drafts', old.site_id, 'site:' || old.status, -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER drafts_count_update AFTER UPDATE OF site_id, status ON drafts
WHEN old.site_id IS NOT new.site_id OR old.status IS NOT new.status BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('drafts', old.site_id, 'site:' || old.status, -1),
    ('drafts', new.site_id, 'site:' || new.status, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER threads_count_insert AFTER INSERT ON threads BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('threads', new.site_id, 'site:' || new.status, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER threads_count_delete AFTER DELETE ON threads BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('threads', old.site_id, 'site:' || old.status, -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER threads_count_update AFTER UPDATE OF site_id, status ON threads
WHEN old.site_id IS NOT new.site_id OR old.status IS NOT new.status BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('threads', old.site_id, 'site:' || old.status, -1),
    ('threads', new.site_id, 'site:' || new.status, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER backlink_checks_count_insert AFTER INSERT ON backlink_checks BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('backlink_checks', new.backlink_id, 'backlink', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER backlink_checks_count_delete AFTER DELETE ON backlink_checks BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('backlink_checks', old.backlink_id, 'backlink', -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER backlink_checks_count_update AFTER UPDATE OF backlink_id ON backlink_checks
WHEN old.backlink_id IS NOT new.backlink_id BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('backlink_checks', old.backlink_id, 'backlink', -1),
    ('backlink_checks', new.backlink_id, 'backlink', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER contacts_count_insert AFTER INSERT ON contacts BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('contacts', new.prospect_id, 'prospect', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER contacts_count_delete AFTER DELETE ON contacts BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('contacts', old.prospect_id, 'prospect', -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER contacts_count_update AFTER UPDATE OF prospect_id ON contacts
WHEN old.prospect_id IS NOT new.prospect_id BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('contacts', old.prospect_id, 'prospect', -1),
    ('contacts', new.prospect_id, 'prospect', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER keywords_count_insert AFTER INSERT ON keywords BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('keywords', new.site_id, 'site', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER keywords_count_delete AFTER DELETE ON keywords BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('keywords', old.site_id, 'site', -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER keywords_count_update AFTER UPDATE OF site_id ON keywords
WHEN old.site_id IS NOT new.site_id BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('keywords', old.site_id, 'site', -1),
    ('keywords', new.site_id, 'site', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER blocked_domains_count_insert AFTER INSERT ON blocked_domains BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('blocked_domains', new.project_id, 'project', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER blocked_domains_count_delete AFTER DELETE ON blocked_domains BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('blocked_domains', old.project_id, 'project', -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER blocked_domains_count_update AFTER UPDATE OF project_id ON blocked_domains
WHEN old.project_id IS NOT new.project_id BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('blocked_domains', old.project_id, 'project', -1),
    ('blocked_domains', new.project_id, 'project', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER discovery_jobs_count_insert AFTER INSERT ON discovery_jobs BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('discovery_jobs', new.site_id, 'site', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER discovery_jobs_count_delete AFTER DELETE ON discovery_jobs BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('discovery_jobs', old.site_id, 'site', -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER discovery_jobs_count_update AFTER UPDATE OF site_id ON discovery_jobs
WHEN old.site_id IS NOT new.site_id BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('discovery_jobs', old.site_id, 'site', -1),
    ('discovery_jobs', new.site_id, 'site', 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER discovery_queries_count_insert AFTER INSERT ON discovery_queries BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('discovery_queries', new.job_id, 'job:' || (new.started_at IS NOT NULL), 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER discovery_queries_count_delete AFTER DELETE ON discovery_queries BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('discovery_queries', old.job_id, 'job:' || (old.started_at IS NOT NULL), -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER discovery_queries_count_update AFTER UPDATE OF job_id, started_at ON discovery_queries
WHEN old.job_id IS NOT new.job_id OR (old.started_at IS NULL) IS NOT (new.started_at IS NULL) BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('discovery_queries', old.job_id, 'job:' || (old.started_at IS NOT NULL), -1),
    ('discovery_queries', new.job_id, 'job:' || (new.started_at IS NOT NULL), 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER thread_messages_count_insert AFTER INSERT ON thread_messages BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('thread_messages', new.thread_id, 'thread:' || (new.sent_at IS NOT NULL), 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER thread_messages_count_delete AFTER DELETE ON thread_messages BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES ('thread_messages', old.thread_id, 'thread:' || (old.sent_at IS NOT NULL), -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER thread_messages_count_update AFTER UPDATE OF thread_id, sent_at ON thread_messages
WHEN old.thread_id IS NOT new.thread_id OR (old.sent_at IS NULL) IS NOT (new.sent_at IS NULL) BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('thread_messages', old.thread_id, 'thread:' || (old.sent_at IS NOT NULL), -1),
    ('thread_messages', new.thread_id, 'thread:' || (new.sent_at IS NOT NULL), 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER leads_count_insert AFTER INSERT ON leads BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('leads', new.project_id, 'project:' || new.dismissed || ':' || new.tier || ':' || new.stage || ':' || new.lead_type, 1),
    ('leads', new.site_id, 'site:' || new.dismissed || ':' || new.tier || ':' || new.stage || ':' || new.lead_type, 1),
    ('leads', new.project_id, 'project:' || new.dismissed || ':' || new.tier || ':' || new.stage || ':' || new.lead_type || ':platform=' || new.platform, 1),
    ('leads', new.site_id, 'site:' || new.dismissed || ':' || new.tier || ':' || new.stage || ':' || new.lead_type || ':platform=' || new.platform, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER leads_count_delete AFTER DELETE ON leads BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('leads', old.project_id, 'project:' || old.dismissed || ':' || old.tier || ':' || old.stage || ':' || old.lead_type, -1),
    ('leads', old.site_id, 'site:' || old.dismissed || ':' || old.tier || ':' || old.stage || ':' || old.lead_type, -1),
    ('leads', old.project_id, 'project:' || old.dismissed || ':' || old.tier || ':' || old.stage || ':' || old.lead_type || ':platform=' || old.platform, -1),
    ('leads', old.site_id, 'site:' || old.dismissed || ':' || old.tier || ':' || old.stage || ':' || old.lead_type || ':platform=' || old.platform, -1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER leads_count_update AFTER UPDATE OF project_id, site_id, dismissed, tier, stage, lead_type, platform ON leads
WHEN old.project_id IS NOT new.project_id OR old.site_id IS NOT new.site_id OR old.dismissed IS NOT new.dismissed
  OR old.tier IS NOT new.tier OR old.stage IS NOT new.stage OR old.lead_type IS NOT new.lead_type OR old.platform IS NOT new.platform BEGIN
  INSERT INTO row_counts (tbl, scope, key, n) VALUES
    ('leads', old.project_id, 'project:' || old.dismissed || ':' || old.tier || ':' || old.stage || ':' || old.lead_type, -1),
    ('leads', old.site_id, 'site:' || old.dismissed || ':' || old.tier || ':' || old.stage || ':' || old.lead_type, -1),
    ('leads', old.project_id, 'project:' || old.dismissed || ':' || old.tier || ':' || old.stage || ':' || old.lead_type || ':platform=' || old.platform, -1),
    ('leads', old.site_id, 'site:' || old.dismissed || ':' || old.tier || ':' || old.stage || ':' || old.lead_type || ':platform=' || old.platform, -1),
    ('leads', new.project_id, 'project:' || new.dismissed || ':' || new.tier || ':' || new.stage || ':' || new.lead_type, 1),
    ('leads', new.site_id, 'site:' || new.dismissed || ':' || new.tier || ':' || new.stage || ':' || new.lead_type, 1),
    ('leads', new.project_id, 'project:' || new.dismissed || ':' || new.tier || ':' || new.stage || ':' || new.lead_type || ':platform=' || new.platform, 1),
    ('leads', new.site_id, 'site:' || new.dismissed || ':' || new.tier || ':' || new.stage || ':' || new.lead_type || ':platform=' || new.platform, 1)
  ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

-- ---- indexes the list filters and orders were missing ---------------------------------------

-- Leads: each filter column (stage, tier, leadType, platform) under site as under project,
-- followed by the list order, so a filtered list walks the filter's own range in order rather
-- than testing every lead of the scope until it has a page.
CREATE INDEX leads_site_stage ON leads (site_id, stage, dismissed, score DESC, posted_at DESC, id DESC);
CREATE INDEX leads_site_tier ON leads (site_id, tier, dismissed, score DESC, posted_at DESC, id DESC);
CREATE INDEX leads_project_type ON leads (project_id, lead_type, dismissed, score DESC, posted_at DESC, id DESC);
CREATE INDEX leads_site_type ON leads (site_id, lead_type, dismissed, score DESC, posted_at DESC, id DESC);
CREATE INDEX leads_project_platform ON leads (project_id, platform, dismissed, score DESC, posted_at DESC, id DESC);
CREATE INDEX leads_site_platform ON leads (site_id, platform, dismissed, score DESC, posted_at DESC, id DESC);

-- Thread messages not sent yet (queued, or failed delivery) are listed after the sent ones,
-- oldest createdAt first: a small partial index gives that order without a sort.
CREATE INDEX thread_messages_unsent_order ON thread_messages (thread_id, created_at, id) WHERE sent_at IS NULL;

-- A thread addressed by its provider id (decisions.md §10) is the lowest record id among the
-- site's threads with that id: with `id` in the index that is the first entry, not a sort.
DROP INDEX threads_site_provider_id;
CREATE INDEX threads_site_provider_order ON threads (site_id, provider_thread_id, id);
