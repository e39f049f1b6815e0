-- Search over stored folded text (issue #28): `<column>_folded` is fold(<column>), a generated
-- column PostgreSQL computes on every write, the same columns SQLite's triggers keep
-- (sql/sqlite/0008_search_folded.sql). A search no longer calls fold() on every row it reads: a
-- term without trigrams (1–2 characters, or punctuation such as `!!!`) scanned the scope calling
-- ICU's lower() four times a row (1.05 s at 200,000 prospects) and now compares stored text; the
-- trigram indexes are rebuilt over the stored columns, under the same names.
--
-- The WHERE condition of a search, replacing the one of the header of 0001_init.sql:
--
--   3+ characters, through the trigram indexes; $p = '%' || fold($term) || '%', with `\`, `%`
--   and `_` in $term escaped by a backslash (LIKE's default escape):
--   prospects:  (title_folded LIKE $p OR domain_folded LIKE $p OR url_folded LIKE $p
--                OR description_folded LIKE $p)
--   leads:      (author_handle_folded LIKE $p OR (redacted = 0 AND (title_folded LIKE $p
--                OR body_folded LIKE $p OR evidence_quote_folded LIKE $p)))
--
--   1–2 characters, which no trigram index serves, with strpos(); $f = fold($term) (unescaped):
--   prospects:  (strpos(title_folded, $f) > 0 OR strpos(domain_folded, $f) > 0
--                OR strpos(url_folded, $f) > 0 OR strpos(description_folded, $f) > 0)
--   leads:      (strpos(author_handle_folded, $f) > 0 OR (redacted = 0 AND (strpos(title_folded, $f) > 0
--                OR strpos(body_folded, $f) > 0 OR strpos(evidence_quote_folded, $f) > 0)))
--
-- Adding stored generated columns rewrites both tables (and rebuilds their B-tree indexes) under
-- an ACCESS EXCLUSIVE lock: docs/operating.md gives the time measured at 200,000 prospects and
-- 200,000 leads. The old expression indexes are dropped first, so they are not rebuilt for
-- nothing. After an ICU upgrade of the server, the stored folded text keeps the old case
-- mapping for rows not written since: rewrite them (`UPDATE prospects SET title = title`, and so
-- on) as well as REINDEX (0001_init.sql).

DROP INDEX prospects_search;
ALTER TABLE prospects
  ADD COLUMN title_folded text COLLATE "C" GENERATED ALWAYS AS (fold(title)) STORED,
  ADD COLUMN domain_folded text COLLATE "C" GENERATED ALWAYS AS (fold(domain)) STORED,
  ADD COLUMN url_folded text COLLATE "C" GENERATED ALWAYS AS (fold(url)) STORED,
  ADD COLUMN description_folded text COLLATE "C" GENERATED ALWAYS AS (fold(description)) STORED;
CREATE INDEX prospects_search ON prospects USING gin (
  title_folded gin_trgm_ops, domain_folded gin_trgm_ops, url_folded gin_trgm_ops, description_folded gin_trgm_ops
) WITH (fastupdate = off);

DROP INDEX leads_search;
ALTER TABLE leads
  ADD COLUMN title_folded text COLLATE "C" GENERATED ALWAYS AS (fold(title)) STORED,
  ADD COLUMN body_folded text COLLATE "C" GENERATED ALWAYS AS (fold(body)) STORED,
  ADD COLUMN author_handle_folded text COLLATE "C" GENERATED ALWAYS AS (fold(author_handle)) STORED,
  ADD COLUMN evidence_quote_folded text COLLATE "C" GENERATED ALWAYS AS (fold(evidence_quote)) STORED;
CREATE INDEX leads_search ON leads USING gin (
  title_folded gin_trgm_ops, body_folded gin_trgm_ops, author_handle_folded gin_trgm_ops,
  evidence_quote_folded gin_trgm_ops
) WITH (fastupdate = off);
