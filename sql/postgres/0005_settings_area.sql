-- The settings area (decisions.md §18): accounts' passwords, browser sessions and failed sign-in
-- attempts, in the database so that every instance (§16) knows a session another made and counts
-- the same attempts. PostgreSQL twin of the SQLite migration 0005_settings_area.sql (conventions:
-- the header of 0001_init.sql; date-times are ISO 8601 text, compared as strings).

-- An account's password, as a scrypt hash (src/domain/passwords.ts), in a table of its own so
-- that no read of `accounts` ever carries it. An account without a row cannot sign in.
CREATE TABLE account_passwords (
  account_id     text COLLATE "C" PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  password_hash  text COLLATE "C" NOT NULL,            -- scrypt$ln=…,r=…,p=…$<salt>$<key>; never the password
  set_at         text COLLATE "C" NOT NULL
);

-- Sign-in looks an account up by its email, case folded: lower() folds ASCII letters under
-- COLLATE "C", as SQLite's lower() does. The query must write `lower(email)` for this index.
CREATE INDEX accounts_email_folded ON accounts (lower(email));

-- A browser session of the settings area. The cookie holds a random 256-bit id; only its hash is
-- kept. It ends after settings.sessionIdleMinutes without a request, 12 hours after it began, on
-- sign-out, and when the account's password is set again.
CREATE TABLE settings_sessions (
  id_hash       text COLLATE "C" PRIMARY KEY,           -- hex SHA-256 of the session id; never the id
  account_id    text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at    text COLLATE "C" NOT NULL,
  last_seen_at  text COLLATE "C" NOT NULL
);
CREATE INDEX settings_sessions_account ON settings_sessions (account_id);
CREATE INDEX settings_sessions_last_seen ON settings_sessions (last_seen_at);

-- A failed sign-in, counted for the attempt limit (5 per email, 20 per client address, in 15
-- minutes) and deleted once older than that.
CREATE TABLE sign_in_failures (
  id              text COLLATE "C" PRIMARY KEY,
  email_hash      text COLLATE "C" NOT NULL,            -- hex SHA-256 of the email as typed, trimmed, lower case
  client_address  text COLLATE "C" NOT NULL,
  failed_at       text COLLATE "C" NOT NULL
);
CREATE INDEX sign_in_failures_email ON sign_in_failures (email_hash, failed_at);
CREATE INDEX sign_in_failures_client ON sign_in_failures (client_address, failed_at);
CREATE INDEX sign_in_failures_time ON sign_in_failures (failed_at);
