-- decisions.md §13: the backlink monitor walks the non-closed backlinks never checked first,
-- then the oldest `last_checked_at`, ties by id (src/repos/backlink-checks.ts, the due walk).
-- The key is an expression so that a never-checked row ('') sorts first and row-value
-- comparisons on it stay total (no NULLs).
CREATE INDEX backlinks_monitor_due ON backlinks (coalesce(last_checked_at, ''), id) WHERE status <> 'closed';
