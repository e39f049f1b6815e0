-- Exact list totals without COUNT(*): counters kept by triggers, and the indexes the list
-- filters and orders were missing. PostgreSQL twin of the SQLite migration 0003_row_counts.sql
-- (conventions: 0001_init.sql): the same `row_counts` rows, key for key, after the same writes.
--
-- Every list endpoint returns `pagination.total` (decisions.md §5). A counter is one
-- primary-key lookup (src/repos/row-counts.ts reads these rows for every filter set); only a
-- search is counted with COUNT(*), over its trigram matches.
--
-- One row per (counted table, scope id, key). `scope` is the id of the record the list is
-- scoped to (project, site, prospect, backlink, job or thread); `key` names the scope kind and
-- the values of the filter columns, finest grain only: a coarser total is the sum of the fine
-- rows, so each write touches few counters.
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
-- `row_count_keys(<row>)` below, one overload per counted table, is the one definition of these
-- keys here: the triggers and the recount both use it.
--
-- ---- how the counters follow the rows --------------------------------------------------------
-- Each counted table has three statement-level triggers (`<table>_count_insert|delete|update`,
-- SQLite's names) that run `<table>_count()` once per statement over its transition tables: the
-- rows a statement removed count -1 under their keys, the rows it added +1, summed per key, and
-- only keys whose sum is not 0 are written, as one INSERT … ON CONFLICT DO UPDATE SET n = n + …
-- (a counter row appears on first use; one whose scope is gone stays with n = 0, harmless).
-- The result is SQLite's row for row: an UPDATE that moves a row to another scope or filter
-- value moves its count; one that changes no counted column writes nothing (SQLite's `WHEN`);
-- ON DELETE CASCADE deletes run the child tables' triggers; INSERT … ON CONFLICT counts the rows
-- it inserted and, DO UPDATE, the rows it changed. One statement per key, not one per row: a
-- cascade that deletes 50,000 backlinks updates each of their counters once (a counter updated
-- once per row in one transaction piles up row versions and slows every later update of it:
-- with row-level triggers, 50,000 backlinks took 19 s to insert, 122 s to update and 36 s to
-- delete in one statement each, against 3.0 s, 2.6 s and 0.5 s here). Many one-row statements
-- on one scope in one transaction still pile up (0.13 ms a row for 5,000 inserts, 0.24 ms for
-- 20,000): a bulk load pauses the counters instead (below; 0.03 ms a row).
-- TRUNCATE runs no trigger: never TRUNCATE a counted table (or recount it after).
--
-- ---- concurrent writers --------------------------------------------------------------------
-- The upsert is atomic per counter row under READ COMMITTED (PostgreSQL's default): concurrent
-- transactions that count the same key queue on that row, each adding its own delta, and a
-- key's first two writers both succeed (one inserts, the other updates). The counters stay
-- exact with any number of writers. Each statement locks its counter rows in (scope, key) order
-- (the ORDER BY below; without it, one-statement writers of one scope deadlocked 195 times in
-- 2,880 statements), so one-statement transactions never deadlock over counters. A transaction
-- of several statements can: it holds counters while it waits for a row another holds
-- (PostgreSQL aborts one with 40P01: run it again). Under REPEATABLE READ or
-- SERIALIZABLE, a concurrent update of the same counter fails with 40001: write counted tables
-- in READ COMMITTED transactions, or retry. A counter row is locked until its writer commits:
-- writers of one scope take turns at commit, as SQLite's single writer does for all.
--
-- ---- bulk loads: pause, recount, resume (src/repos/row-counts.ts `pauseRowCounts`) ----------
-- In the transaction of the bulk load, before its first write to the tables:
--     SELECT pause_row_counts(ARRAY['backlinks', 'leads']);
-- then load, then, before COMMIT:
--     SELECT resume_row_counts(ARRAY['backlinks', 'leads']);
-- pause_row_counts locks the tables IN SHARE ROW EXCLUSIVE MODE (readers go on and see the last
-- committed rows and counters; other writers of those tables, cascades included, wait for the
-- commit, as on SQLite; a second bulk load waits too) and sets `outreach.row_counts_paused`,
-- local to the transaction, which makes their `<table>_count()` return at once. It also lets
-- the tables' GIN (search) indexes queue new entries in a pending list of up to 64 MB.
-- resume_row_counts recounts each table from its rows (`recount_rows`: the table's counters
-- deleted, then one GROUP BY over its rows), merges the queued index entries
-- (gin_clean_pending_list) and sets `fastupdate = off` again, and clears the setting. A
-- rollback restores the counters, the setting and the index options with everything else.
-- Measured: 20,000 prospects loaded in 3.7 s this way (2.3 s insert, 1.4 s merge) against 21 s
-- with `fastupdate = off`, on the loaded 2-core development machine.
-- Triggers are not disabled: ALTER TABLE … DISABLE TRIGGER takes an ACCESS EXCLUSIVE lock,
-- which blocks every reader until commit. ALTER INDEX … SET (fastupdate) takes a SHARE UPDATE
-- EXCLUSIVE lock on the index, which blocks neither readers nor writers; both need the owner
-- of the tables, which is the role that ran the migrations.
-- The counting triggers of tables not paused keep counting (a cascade into them included).

CREATE TABLE row_counts (
  tbl    text COLLATE "C" NOT NULL,      -- the counted table
  scope  text COLLATE "C" NOT NULL,      -- id of the project, site, … the list is scoped to
  key    text COLLATE "C" NOT NULL,      -- scope kind and filter values, see above
  n      integer NOT NULL,
  PRIMARY KEY (tbl, scope, key)
);

-- ---- keys of a row ------------------------------------------------------------------------------
-- The (scope, key) pairs a row is counted under. Booleans become 1/0 with ::int, as SQLite
-- prints them.

CREATE FUNCTION row_count_keys(r backlinks) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.project_id, 'project:' || r.status), (r.site_id, 'site:' || r.status) $$;
CREATE FUNCTION row_count_keys(r prospects) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.project_id, 'project:' || r.status), (r.site_id, 'site:' || r.status) $$;
CREATE FUNCTION row_count_keys(r drafts) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.site_id, 'site:' || r.status) $$;
CREATE FUNCTION row_count_keys(r threads) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.site_id, 'site:' || r.status) $$;
CREATE FUNCTION row_count_keys(r backlink_checks) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.backlink_id, 'backlink') $$;
CREATE FUNCTION row_count_keys(r contacts) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.prospect_id, 'prospect') $$;
CREATE FUNCTION row_count_keys(r keywords) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.site_id, 'site') $$;
CREATE FUNCTION row_count_keys(r blocked_domains) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.project_id, 'project') $$;
CREATE FUNCTION row_count_keys(r discovery_jobs) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.site_id, 'site') $$;
CREATE FUNCTION row_count_keys(r discovery_queries) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.job_id, 'job:' || (r.started_at IS NOT NULL)::int) $$;
CREATE FUNCTION row_count_keys(r thread_messages) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES (r.thread_id, 'thread:' || (r.sent_at IS NOT NULL)::int) $$;
CREATE FUNCTION row_count_keys(r leads) RETURNS TABLE (scope text, key text)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ VALUES
    (r.project_id, 'project:' || r.dismissed || ':' || r.tier || ':' || r.stage || ':' || r.lead_type),
    (r.site_id, 'site:' || r.dismissed || ':' || r.tier || ':' || r.stage || ':' || r.lead_type),
    (r.project_id, 'project:' || r.dismissed || ':' || r.tier || ':' || r.stage || ':' || r.lead_type || ':platform=' || r.platform),
    (r.site_id, 'site:' || r.dismissed || ':' || r.tier || ':' || r.stage || ':' || r.lead_type || ':platform=' || r.platform) $$;

-- ---- the triggers ---------------------------------------------------------------------------------
-- create_row_count_triggers('backlinks') creates the trigger function backlinks_count() and the
-- triggers backlinks_count_insert, backlinks_count_delete and backlinks_count_update (SQLite's
-- names), all FOR EACH STATEMENT over the statement's transition tables. The function is plain
-- SQL with the table's name written in (a transition table's rows are of type `record`; the
-- cast picks the table's row_count_keys overload), so its plans are cached like any other.
-- A later migration that counts a new table defines its row_count_keys overload, then calls
-- this function.

CREATE FUNCTION create_row_count_triggers(tbl text) RETURNS void
  LANGUAGE plpgsql
  AS $create$
BEGIN
  EXECUTE format($function$
    CREATE FUNCTION %1$I() RETURNS trigger
      LANGUAGE plpgsql
      AS $body$
    BEGIN
      IF %2$L = ANY (string_to_array(current_setting('outreach.row_counts_paused', true), ',')) THEN
        RETURN NULL;
      END IF;
      IF TG_OP = 'INSERT' THEN
        INSERT INTO row_counts AS c (tbl, scope, key, n)
          SELECT %2$L, k.scope, k.key, count(*)
          FROM new_rows r CROSS JOIN LATERAL row_count_keys(r::%3$I) k
          GROUP BY k.scope, k.key ORDER BY k.scope, k.key
        ON CONFLICT (tbl, scope, key) DO UPDATE SET n = c.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO row_counts AS c (tbl, scope, key, n)
          SELECT %2$L, k.scope, k.key, -count(*)
          FROM old_rows r CROSS JOIN LATERAL row_count_keys(r::%3$I) k
          GROUP BY k.scope, k.key ORDER BY k.scope, k.key
        ON CONFLICT (tbl, scope, key) DO UPDATE SET n = c.n + excluded.n;
      ELSE
        INSERT INTO row_counts AS c (tbl, scope, key, n)
          SELECT %2$L, d.scope, d.key, sum(d.n)
          FROM (SELECT k.scope, k.key, -1 AS n FROM old_rows r CROSS JOIN LATERAL row_count_keys(r::%3$I) k
                UNION ALL
                SELECT k.scope, k.key, 1 FROM new_rows r CROSS JOIN LATERAL row_count_keys(r::%3$I) k) d
          GROUP BY d.scope, d.key HAVING sum(d.n) <> 0 ORDER BY d.scope, d.key
        ON CONFLICT (tbl, scope, key) DO UPDATE SET n = c.n + excluded.n;
      END IF;
      RETURN NULL;
    END
    $body$
  $function$, tbl || '_count', tbl, tbl);
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION %I()', tbl || '_count_insert', tbl, tbl || '_count');
  EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION %I()', tbl || '_count_delete', tbl, tbl || '_count');
  EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION %I()', tbl || '_count_update', tbl, tbl || '_count');
END
$create$;

SELECT create_row_count_triggers(tbl) FROM unnest(ARRAY['backlinks', 'prospects', 'drafts', 'threads',
  'backlink_checks', 'contacts', 'keywords', 'blocked_domains', 'discovery_jobs', 'discovery_queries',
  'thread_messages', 'leads']) AS tbl;

-- ---- recount, pause, resume (see "bulk loads" above) --------------------------------------------

-- Rebuilds every counter of the counted table `tbl` from its rows.
CREATE FUNCTION recount_rows(tbl text) RETURNS void
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgname = tbl || '_count_insert' AND tgrelid = to_regclass(quote_ident(tbl))) THEN
    RAISE EXCEPTION 'recount_rows: % is not a counted table', tbl;
  END IF;
  DELETE FROM row_counts WHERE row_counts.tbl = recount_rows.tbl;
  EXECUTE format('INSERT INTO row_counts (tbl, scope, key, n) SELECT %L, k.scope, k.key, count(*)
    FROM %I r CROSS JOIN LATERAL row_count_keys(r) k GROUP BY k.scope, k.key', tbl, tbl);
END
$$;

-- The GIN indexes of table `tbl` (the trigram search indexes), for a bulk load.
CREATE FUNCTION bulk_load_gin_indexes(tbl text) RETURNS SETOF regclass
  LANGUAGE sql STABLE
  AS $$ SELECT i.indexrelid::regclass FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_am am ON am.oid = c.relam WHERE i.indrelid = to_regclass(quote_ident(tbl)) AND am.amname = 'gin'
        ORDER BY 1 $$;

-- Stops counting `tbls` until resume_row_counts or the end of the transaction; waits for, then
-- holds off, other writers of those tables; lets their GIN indexes queue new entries.
CREATE FUNCTION pause_row_counts(tbls text[]) RETURNS void
  LANGUAGE plpgsql
  AS $$
DECLARE
  t text;
  i regclass;
BEGIN
  FOR t IN SELECT DISTINCT u FROM unnest(tbls) u ORDER BY u LOOP
    EXECUTE format('LOCK TABLE %I IN SHARE ROW EXCLUSIVE MODE', t);
    FOR i IN SELECT bulk_load_gin_indexes(t) LOOP
      EXECUTE format('ALTER INDEX %s SET (fastupdate = on, gin_pending_list_limit = 65536)', i);
    END LOOP;
  END LOOP;
  PERFORM set_config('outreach.row_counts_paused', array_to_string(ARRAY(
    SELECT DISTINCT u FROM unnest(tbls || string_to_array(current_setting('outreach.row_counts_paused', true), ',')) u
    WHERE u <> '' ORDER BY u), ','), true);
END
$$;

-- Recounts `tbls` from their rows and counts them again from the next statement on; merges
-- their GIN indexes' queued entries and turns the queue off again.
CREATE FUNCTION resume_row_counts(tbls text[]) RETURNS void
  LANGUAGE plpgsql
  AS $$
DECLARE
  t text;
  i regclass;
BEGIN
  FOR t IN SELECT DISTINCT u FROM unnest(tbls) u ORDER BY u LOOP
    PERFORM recount_rows(t);
    FOR i IN SELECT bulk_load_gin_indexes(t) LOOP
      PERFORM gin_clean_pending_list(i);
      EXECUTE format('ALTER INDEX %s SET (fastupdate = off)', i);
      EXECUTE format('ALTER INDEX %s RESET (gin_pending_list_limit)', i);
    END LOOP;
  END LOOP;
  PERFORM set_config('outreach.row_counts_paused', array_to_string(ARRAY(
    SELECT u FROM unnest(string_to_array(current_setting('outreach.row_counts_paused', true), ',')) u
    WHERE u <> '' AND u <> ALL (tbls) ORDER BY u), ','), true);
END
$$;

-- ---- backfill from the rows already stored --------------------------------------------------

SELECT recount_rows(tbl) FROM unnest(ARRAY['backlinks', 'prospects', 'drafts', 'threads', 'backlink_checks',
  'contacts', 'keywords', 'blocked_domains', 'discovery_jobs', 'discovery_queries', 'thread_messages', 'leads']) AS tbl;

-- ---- indexes the list filters and orders were missing ---------------------------------------

-- Leads: each filter column (stage, tier, leadType, platform) under site as under project,
-- followed by the list order, so a filtered list walks the filter's own range in order rather
-- than testing every lead of the scope until it has a page.
CREATE INDEX leads_site_stage ON leads (site_id, stage, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);
CREATE INDEX leads_site_tier ON leads (site_id, tier, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);
CREATE INDEX leads_project_type ON leads (project_id, lead_type, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);
CREATE INDEX leads_site_type ON leads (site_id, lead_type, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);
CREATE INDEX leads_project_platform ON leads (project_id, platform, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);
CREATE INDEX leads_site_platform ON leads (site_id, platform, dismissed, score DESC, posted_at DESC NULLS LAST, id DESC);

-- Thread messages not sent yet (queued, or failed delivery) are listed after the sent ones,
-- oldest createdAt first: a small partial index gives that order without a sort.
CREATE INDEX thread_messages_unsent_order ON thread_messages (thread_id, created_at, id) WHERE sent_at IS NULL;

-- A thread addressed by its provider id (decisions.md §10) is the lowest record id among the
-- site's threads with that id: with `id` in the index that is the first entry, not a sort.
DROP INDEX threads_site_provider_id;
CREATE INDEX threads_site_provider_order ON threads (site_id, provider_thread_id, id);
