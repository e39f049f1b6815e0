-- The settings area (decisions.md §18): accounts' passwords, browser sessions and failed sign-in
-- attempts. All three live in the database, so that every instance of a scaled-out install
-- (§16) knows a session made on another and counts the same attempts.

-- An account's password, as a scrypt hash (src/domain/passwords.ts), in a table of its own so
-- that no read of `accounts` ever carries it. An account without a row cannot sign in.
CREATE TABLE account_passwords (
  account_id     TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  password_hash  TEXT NOT NULL,            -- scrypt$ln=…,r=…,p=…$<salt>$<key>; never the password
  set_at         TEXT NOT NULL
);

-- Sign-in looks an account up by its email, case folded.
CREATE INDEX accounts_email_folded ON accounts (lower(email));

-- A browser session of the settings area. The cookie holds a random 256-bit id; only its hash is
-- kept. It ends after settings.sessionIdleMinutes without a request, 12 hours after it began, on
-- sign-out, and when the account's password is set again.
CREATE TABLE settings_sessions (
  id_hash       TEXT PRIMARY KEY,           -- hex SHA-256 of the session id; never the id
  account_id    TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at    TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL
);
CREATE INDEX settings_sessions_account ON settings_sessions (account_id);
CREATE INDEX settings_sessions_last_seen ON settings_sessions (last_seen_at);

-- A failed sign-in, counted for the attempt limit (5 per email, 20 per client address, in 15
-- minutes) and deleted once older than that.
CREATE TABLE sign_in_failures (
  id              TEXT PRIMARY KEY,
  email_hash      TEXT NOT NULL,            -- hex SHA-256 of the email as typed, trimmed, lower case
  client_address  TEXT NOT NULL,
  failed_at       TEXT NOT NULL
);
CREATE INDEX sign_in_failures_email ON sign_in_failures (email_hash, failed_at);
CREATE INDEX sign_in_failures_client ON sign_in_failures (client_address, failed_at);
CREATE INDEX sign_in_failures_time ON sign_in_failures (failed_at);
