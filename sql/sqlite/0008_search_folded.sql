-- Search of terms too short for the trigram index (issue #28): a folded copy of each searched
-- column, kept by the store, so a 1–2 character term is tested with the native instr() over
-- stored text instead of calling the JavaScript fold() on every row of the scope (3.4 s for
-- `search=qx` over 200,000 prospects, on the event loop).
--
-- `<column>_folded` is fold(<column>) (src/db/sql-functions.ts `foldCase`), written by the
-- triggers below on every insert and on every update of the column, whoever writes: the server,
-- the import and the CLI all open the database through the store, which registers fold() on its
-- connection (a connection without it, such as the sqlite3 shell, cannot write these tables).
-- The search condition of a 1–2 character term (src/db/search.ts), with ? the folded term:
--
--   prospects:  (instr(title_folded, ?) > 0 OR instr(domain_folded, ?) > 0
--                OR instr(url_folded, ?) > 0 OR instr(description_folded, ?) > 0)
--   leads:      (instr(author_handle_folded, ?) > 0 OR (redacted = 0 AND (instr(title_folded, ?) > 0
--                OR instr(body_folded, ?) > 0 OR instr(evidence_quote_folded, ?) > 0)))
--
-- A 3+ character term still reads the FTS5 trigram tables (0001_init.sql). A redacted lead's text
-- is folded like any other; the condition never tests it. The same columns exist on PostgreSQL
-- (generated there, sql/postgres/0008_search_folded.sql).

ALTER TABLE prospects ADD COLUMN title_folded TEXT;
ALTER TABLE prospects ADD COLUMN domain_folded TEXT;
ALTER TABLE prospects ADD COLUMN url_folded TEXT;
ALTER TABLE prospects ADD COLUMN description_folded TEXT;
UPDATE prospects SET title_folded = fold(title), domain_folded = fold(domain), url_folded = fold(url),
  description_folded = fold(description);

-- Neither the FTS nor the counting triggers watch the folded columns, so these updates fire no
-- other trigger.
CREATE TRIGGER prospects_folded_insert AFTER INSERT ON prospects BEGIN
  UPDATE prospects SET title_folded = fold(new.title), domain_folded = fold(new.domain), url_folded = fold(new.url),
    description_folded = fold(new.description)
  WHERE rowid = new.rowid;
END;
CREATE TRIGGER prospects_folded_update AFTER UPDATE OF title, domain, url, description ON prospects BEGIN
  UPDATE prospects SET title_folded = fold(new.title), domain_folded = fold(new.domain), url_folded = fold(new.url),
    description_folded = fold(new.description)
  WHERE rowid = new.rowid;
END;

ALTER TABLE leads ADD COLUMN title_folded TEXT;
ALTER TABLE leads ADD COLUMN body_folded TEXT;
ALTER TABLE leads ADD COLUMN author_handle_folded TEXT;
ALTER TABLE leads ADD COLUMN evidence_quote_folded TEXT;
UPDATE leads SET title_folded = fold(title), body_folded = fold(body), author_handle_folded = fold(author_handle),
  evidence_quote_folded = fold(evidence_quote);

CREATE TRIGGER leads_folded_insert AFTER INSERT ON leads BEGIN
  UPDATE leads SET title_folded = fold(new.title), body_folded = fold(new.body),
    author_handle_folded = fold(new.author_handle), evidence_quote_folded = fold(new.evidence_quote)
  WHERE rowid = new.rowid;
END;
CREATE TRIGGER leads_folded_update AFTER UPDATE OF title, body, author_handle, evidence_quote ON leads BEGIN
  UPDATE leads SET title_folded = fold(new.title), body_folded = fold(new.body),
    author_handle_folded = fold(new.author_handle), evidence_quote_folded = fold(new.evidence_quote)
  WHERE rowid = new.rowid;
END;
