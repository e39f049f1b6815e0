-- Change stamps by table (decisions.md §16 "Caches", issue #32), SQLite's twin of
-- sql/postgres/0010_change_stamps_by_table.sql: nothing to create. The connection's own writes
-- are told per table by TEMP triggers it puts in place itself (src/db/sqlite/change-tracking.ts);
-- other processes' commits move `PRAGMA data_version`, for every table at once.
SELECT 1;
