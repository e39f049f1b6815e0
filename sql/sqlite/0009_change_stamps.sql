-- Change stamps (decisions.md §16 "Caches", issue #32), SQLite's twin of
-- sql/postgres/0009_change_stamps.sql: nothing to create. One process serves the file, so its
-- own writes mark the caches without a statement (src/db/sqlite/store.ts), and commits by other
-- processes (`outreach-api import`, `tokens revoke`, a second server) change the connection's
-- `PRAGMA data_version`, which src/db/change-stamps.ts reads once per request.
SELECT 1;
