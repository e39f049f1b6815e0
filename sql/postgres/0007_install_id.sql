-- decisions.md §16: the install's identity, a random id made once, when this migration runs on
-- the database, and never changed. PostgreSQL twin of the SQLite migration 0007_install_id.sql
-- (conventions: the header of 0001_init.sql). Every instance of one install reads the same
-- database and so the same id; another install (another database) has another. The rate
-- limiter's Redis keys default to `outreach:<id>:` (src/server.ts).
-- One row, written here and nowhere else.
CREATE TABLE install (
  id  text COLLATE "C" PRIMARY KEY              -- 32 lower-case hex digits (gen_random_uuid: 122 random bits)
);
INSERT INTO install (id) VALUES (replace(gen_random_uuid()::text, '-', ''));
