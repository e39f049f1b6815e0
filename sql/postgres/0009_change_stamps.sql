-- Change stamps (decisions.md §16 "Caches", issue #32): a counter that every transaction writing
-- a table some cache reads bumps, in that transaction, so an instance can tell with one cheap
-- read whether what it keeps in memory is still what the database holds. src/db/change-stamps.ts
-- reads `SELECT sum(n) FROM change_stamps` once per request; a different sum means some write
-- committed since, by any instance or command, and the caches start over.
--
-- The caches and the tables they read (a cache that reads another table adds it below, in a new
-- migration):
--   token and account rows (authentication)       api_tokens, accounts
--   GET /me's project and active token counts      projects, api_tokens
--   search totals                                  prospects, leads
--   deep-page anchors                              backlinks
--
-- The counter is sharded: 64 rows, and a transaction bumps the row of its connection
-- (pg_backend_pid() % 64), so writers on other connections seldom wait on one row lock until
-- the first commits. The trigger runs BEFORE each statement, so a single statement takes the
-- counter's lock before any row lock of its own and cannot be one side of a deadlock through
-- it; a transaction of several statements may (two connections on one shard), and is run again
-- (src/db/store.ts, inTransaction). The sum is read in one statement, so in one snapshot: it
-- counts every bump committed before it started and no other.
--
-- The bump is in the writing transaction: a rollback (or a crash before the commit) takes it
-- back with the write, and a commit makes both visible at once. TRUNCATE bumps too.

CREATE TABLE change_stamps (
  shard  integer NOT NULL PRIMARY KEY,
  n      bigint  NOT NULL DEFAULT 0
);
INSERT INTO change_stamps (shard) SELECT generate_series(0, 63);

CREATE FUNCTION bump_change_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE change_stamps SET n = n + 1 WHERE shard = pg_backend_pid() % 64;
  RETURN NULL;
END
$$;

CREATE TRIGGER accounts_change_stamp BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION bump_change_stamp();
CREATE TRIGGER api_tokens_change_stamp BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION bump_change_stamp();
CREATE TRIGGER projects_change_stamp BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON projects
  FOR EACH STATEMENT EXECUTE FUNCTION bump_change_stamp();
CREATE TRIGGER prospects_change_stamp BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON prospects
  FOR EACH STATEMENT EXECUTE FUNCTION bump_change_stamp();
CREATE TRIGGER leads_change_stamp BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON leads
  FOR EACH STATEMENT EXECUTE FUNCTION bump_change_stamp();
CREATE TRIGGER backlinks_change_stamp BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON backlinks
  FOR EACH STATEMENT EXECUTE FUNCTION bump_change_stamp();
