-- Contact discovery accepted through the API (decisions.md §10 `queued`): one row per
-- `contact_discovery` job this service must run. The discovery worker runs only these, so
-- imported job history is shown as it was and never re-run.
-- PostgreSQL twin of the SQLite migration 0002_contact_discovery_work.sql (conventions: the
-- header of 0001_init.sql).
CREATE TABLE contact_discovery_work (
  job_id       text COLLATE "C" PRIMARY KEY REFERENCES discovery_jobs (id) ON DELETE CASCADE,
  prospect_id  text COLLATE "C" NOT NULL REFERENCES prospects (id) ON DELETE CASCADE
);
