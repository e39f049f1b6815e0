-- Contact discovery accepted through the API (decisions.md §10 `queued`): one row per
-- `contact_discovery` job this service must run. The discovery worker runs only these, so
-- imported job history is shown as it was and never re-run.
CREATE TABLE contact_discovery_work (
  job_id       TEXT PRIMARY KEY REFERENCES discovery_jobs (id) ON DELETE CASCADE,
  prospect_id  TEXT NOT NULL REFERENCES prospects (id) ON DELETE CASCADE
);
