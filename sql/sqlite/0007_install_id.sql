-- decisions.md §16: the install's identity, a random id made once, when this migration runs on
-- the database, and never changed. Every instance of one install reads the same database and so
-- the same id; another install (another database) has another. The rate limiter's Redis keys
-- default to `outreach:<id>:` (src/server.ts), so installs that share one Redis never share a
-- window, and a copy of the database (a backup restored) is the same install.
-- One row, written here and nowhere else.
CREATE TABLE install (
  id  TEXT NOT NULL PRIMARY KEY                 -- 32 lower-case hex digits (128 random bits)
);
INSERT INTO install (id) VALUES (lower(hex(randomblob(16))));
