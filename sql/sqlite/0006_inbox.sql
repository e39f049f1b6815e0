-- decisions.md §17: the inbox sync reads each connected mailbox over IMAP and records the replies
-- that belong to a thread (src/workers/inbox*.ts).
--
-- An inbound message is stored once per thread: `inbound_message_id` is its Message-ID (angle
-- brackets kept), or, without one, `hash:` and the SHA-256 of its From, Date, Subject and body.
-- The unique index makes a second copy (a second pass, a second instance, another mailbox) fail
-- to insert, whoever writes it; its leading column also finds a Message-ID already stored.
-- Outbound and imported messages keep NULL there, which the index leaves out.
ALTER TABLE thread_messages ADD COLUMN inbound_message_id TEXT;
CREATE UNIQUE INDEX thread_messages_inbound_id ON thread_messages (inbound_message_id, thread_id)
  WHERE inbound_message_id IS NOT NULL;

-- Rule 3 of §17 looks a sender's address up among the contacts of a site, case-insensitively
-- (`email COLLATE NOCASE`, as the contact finder compares addresses), then their threads
-- (threads_contact).
CREATE INDEX contacts_email_nocase ON contacts (email COLLATE NOCASE, site_id);

-- Where the sync stands in each mailbox: the UIDVALIDITY it last saw and the highest UID it has
-- handled under it (0: none yet). A mailbox whose UIDVALIDITY differs is read again from
-- `inbox.initialDays` ago. One row per connection and mailbox, the mailbox named by its address
-- `imap://user@host:port/name` (a connection pointed at another login, server or mailbox starts
-- that one afresh). Both numbers are unsigned 32-bit values in IMAP (BIGINT: PostgreSQL's
-- integer would stop at 2^31 - 1).
CREATE TABLE inbox_mailboxes (
  connection_id  TEXT NOT NULL REFERENCES email_connections (id) ON DELETE CASCADE,
  mailbox        TEXT NOT NULL,
  uid_validity   BIGINT NOT NULL,
  last_uid       BIGINT NOT NULL,
  synced_at      TEXT NOT NULL,
  PRIMARY KEY (connection_id, mailbox)
);

-- One instance syncs a connection at a time (decisions.md §16): the holder of the row until
-- `expires_at`, renewed as the pass goes; a holder that stopped leaves it to expire.
CREATE TABLE inbox_leases (
  connection_id  TEXT PRIMARY KEY REFERENCES email_connections (id) ON DELETE CASCADE,
  holder         TEXT NOT NULL,
  expires_at     TEXT NOT NULL
);
