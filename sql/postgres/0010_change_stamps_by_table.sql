-- Change stamps by table (decisions.md §16 "Caches", issue #32): the counters of
-- 0009_change_stamps.sql kept for each table a cache reads, so a cache read from some tables is
-- kept through writes to the others (a token's last_used_at, written once a minute per token,
-- no longer empties the backlinks' totals and anchors of every instance). src/db/change-stamps.ts
-- reads the sum of each column once per request, in one statement (one snapshot), and a cache
-- compares the sums of the tables it read.
--
-- The caches and the tables they read (a cache that reads another table adds a column and a
-- trigger here, in a new migration, and the table to STAMPED_TABLES):
--   token and account rows (authentication)              api_tokens, accounts
--   GET /me's project and active token counts             projects, api_tokens
--   the caller's project with its site count; a site      projects, sites
--   list totals (row_counts), search totals               backlinks, prospects, leads
--   deep-page anchors                                     backlinks
--
-- `n` still counts every bump, as 0009 did, so an instance of the previous version that reads
-- `sum(n)` stays exact while instances are upgraded one by one. Everything else of 0009 holds:
-- the shards, the bump BEFORE each statement in the writing transaction, TRUNCATE.

ALTER TABLE change_stamps
  ADD COLUMN accounts   bigint NOT NULL DEFAULT 0,
  ADD COLUMN api_tokens bigint NOT NULL DEFAULT 0,
  ADD COLUMN projects   bigint NOT NULL DEFAULT 0,
  ADD COLUMN sites      bigint NOT NULL DEFAULT 0,
  ADD COLUMN prospects  bigint NOT NULL DEFAULT 0,
  ADD COLUMN leads      bigint NOT NULL DEFAULT 0,
  ADD COLUMN backlinks  bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION bump_change_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE change_stamps SET
    n          = n + 1,
    accounts   = accounts   + (TG_TABLE_NAME = 'accounts')::int,
    api_tokens = api_tokens + (TG_TABLE_NAME = 'api_tokens')::int,
    projects   = projects   + (TG_TABLE_NAME = 'projects')::int,
    sites      = sites      + (TG_TABLE_NAME = 'sites')::int,
    prospects  = prospects  + (TG_TABLE_NAME = 'prospects')::int,
    leads      = leads      + (TG_TABLE_NAME = 'leads')::int,
    backlinks  = backlinks  + (TG_TABLE_NAME = 'backlinks')::int
  WHERE shard = pg_backend_pid() % 64;
  RETURN NULL;
END
$$;

CREATE TRIGGER sites_change_stamp BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON sites
  FOR EACH STATEMENT EXECUTE FUNCTION bump_change_stamp();
