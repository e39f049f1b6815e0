-- decisions.md §17: the inbox sync reads each connected mailbox over IMAP and records the replies
-- that belong to a thread (src/workers/inbox*.ts).
-- PostgreSQL twin of the SQLite migration 0006_inbox.sql (conventions: the header of
-- 0001_init.sql; the comments there say what each piece is for).
--
-- `bigint` for the two IMAP numbers (unsigned 32-bit values; `integer` stops at 2^31 - 1): pg
-- returns them as strings, which src/repos/inbox.ts reads with Number().
ALTER TABLE thread_messages ADD COLUMN inbound_message_id text COLLATE "C";
CREATE UNIQUE INDEX thread_messages_inbound_id ON thread_messages (inbound_message_id, thread_id)
  WHERE inbound_message_id IS NOT NULL;

CREATE INDEX contacts_email_nocase ON contacts (email COLLATE nocase, site_id);

CREATE TABLE inbox_mailboxes (
  connection_id  text COLLATE "C" NOT NULL REFERENCES email_connections (id) ON DELETE CASCADE,
  mailbox        text COLLATE "C" NOT NULL,
  uid_validity   bigint NOT NULL,
  last_uid       bigint NOT NULL,
  synced_at      text COLLATE "C" NOT NULL,
  PRIMARY KEY (connection_id, mailbox)
);

CREATE TABLE inbox_leases (
  connection_id  text COLLATE "C" PRIMARY KEY REFERENCES email_connections (id) ON DELETE CASCADE,
  holder         text COLLATE "C" NOT NULL,
  expires_at     text COLLATE "C" NOT NULL
);
