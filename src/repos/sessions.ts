/**
 * Sign-in to the settings area (decisions.md §18): accounts' password hashes, failed sign-in
 * attempts and browser sessions, the tables of 0005_settings_area.sql (sql/sqlite/, sql/postgres/). Asynchronous kysely queries only, so
 * that one code serves every store; everything lives in the database, so every instance (§16)
 * knows a session another made and counts the same attempts.
 *
 * Times are ISO 8601 UTC strings, as everywhere in the store. The rules (when a session has ended,
 * how many failures are too many) are in src/domain/sign-in.ts; these functions only store and
 * read.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { precompiledQuery } from '../db/compiled.js';
import { inTransaction } from '../db/connection.js';
import type { AccountRow, Database } from '../db/schema.js';
import { signInEmail } from '../domain/sign-in.js';

type Db = Kysely<Database>;

/** Milliseconds since the epoch of a stored time (a driver may hand back a string or a Date). */
const msOf = (value: string | Date): number => (value instanceof Date ? value.getTime() : Date.parse(value));

/**
 * Sets (or replaces) account `accountId`'s password hash and ends every session of that account,
 * in one transaction (decisions.md §18: setting a password again ends the account's sessions).
 * @returns how many sessions were ended.
 * @throws when no account has that id (a foreign key refuses the row).
 */
export async function setAccountPassword(
  db: Db,
  accountId: string,
  passwordHash: string,
  nowIso: string,
): Promise<number> {
  return inTransaction(db, async (trx) => {
    await trx
      .insertInto('account_passwords')
      .values({ account_id: accountId, password_hash: passwordHash, set_at: nowIso })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ password_hash: passwordHash, set_at: nowIso }))
      .execute();
    const ended = await trx.deleteFrom('settings_sessions').where('account_id', '=', accountId).executeTakeFirst();
    return Number(ended.numDeletedRows);
  });
}

/** Account `accountId`'s password hash, or undefined when it has none. */
export async function passwordHashOf(db: Db, accountId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('account_passwords')
    .select('password_hash')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.password_hash;
}

/**
 * Another account than `accountId` whose email is `accountId`'s (case folded) and which has a
 * password: two such accounts could not be told apart at sign-in.
 * @returns its id, or undefined.
 */
export async function otherSignInAccountWithEmailOf(db: Db, accountId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('accounts as a')
    .innerJoin('accounts as mine', (join) =>
      join
        .on('mine.id', '=', accountId)
        .on((eb) => eb(eb.fn('lower', ['a.email']), '=', eb.fn('lower', ['mine.email']))),
    )
    .innerJoin('account_passwords as p', 'p.account_id', 'a.id')
    .select('a.id')
    .where('a.id', '<>', accountId)
    .executeTakeFirst();
  return row?.id;
}

/**
 * The account that signs in with `email` and its password hash, or undefined when no account
 * with that email has a password. The typed email is normalised once, in JavaScript
 * (`signInEmail`: trimmed, ASCII letters lower-cased, as the attempt limit's key), and compared
 * with the stored email under `lower()`, which folds ASCII letters only on both stores (SQLite's
 * built-in; PostgreSQL's under the column's `COLLATE "C"`): the same accounts match on either.
 * Should two have one (an import changed an email since), the oldest account is the one.
 */
export async function signInAccountByEmail(
  db: Db,
  email: string,
): Promise<{ account: AccountRow; passwordHash: string } | undefined> {
  const row = await db
    .selectFrom('accounts as a')
    .innerJoin('account_passwords as p', 'p.account_id', 'a.id')
    .selectAll('a')
    .select('p.password_hash')
    // Never lower() of the typed value: PostgreSQL would fold it by the database's locale (İ → i).
    .where((eb) => eb(eb.fn('lower', ['a.email']), '=', signInEmail(email)))
    .orderBy('a.created_at')
    .orderBy('a.id')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  const { password_hash, ...account } = row;
  return { account, passwordHash: password_hash };
}

/**
 * Records a sign-in attempt as failed from the moment it starts (its row is deleted if it is
 * refused, or when the email signs in), so that attempts made at once count each other.
 * @returns the row's id.
 */
export async function recordSignInFailure(
  db: Db,
  failure: { emailKey: string; clientAddress: string; atIso: string },
): Promise<string> {
  // Not newId: a sign-in must not move the fixture's seeded id sequence (decisions.md §14).
  const id = randomUUID();
  await db
    .insertInto('sign_in_failures')
    .values({ id, email_hash: failure.emailKey, client_address: failure.clientAddress, failed_at: failure.atIso })
    .execute();
  return id;
}

/** Deletes the failure row `id` (an attempt the limit refused, which is not counted). */
export async function forgetSignInFailure(db: Db, id: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('id', '=', id).execute();
}

/** Most failures read per key: more than any limit, so a flood costs no more to read. */
const FAILURES_READ = 100;

/**
 * The failed sign-ins since `sinceIso` for one email key and for one client address, but row
 * `exceptId` (the attempt asking), each as times in ms, ascending (at most the 100 most recent of
 * each).
 */
export async function recentSignInFailures(
  db: Db,
  keys: { emailKey: string; clientAddress: string },
  sinceIso: string,
  exceptId: string,
): Promise<{ byEmail: number[]; byClient: number[] }> {
  const times = async (column: 'email_hash' | 'client_address', value: string) =>
    (
      await db
        .selectFrom('sign_in_failures')
        .select('failed_at')
        .where(column, '=', value)
        .where('failed_at', '>', sinceIso)
        .where('id', '<>', exceptId)
        .orderBy('failed_at', 'desc')
        .limit(FAILURES_READ)
        .execute()
    )
      .map((row) => msOf(row.failed_at))
      .reverse();
  return {
    byEmail: await times('email_hash', keys.emailKey),
    byClient: await times('client_address', keys.clientAddress),
  };
}

/** Forgets the failed sign-ins of one email key (after it signed in), the attempt's own row included. */
export async function clearSignInFailures(db: Db, emailKey: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('email_hash', '=', emailKey).execute();
}

/**
 * Deletes what can no longer count: failures at or before `failuresBeforeIso`, and sessions last
 * used at or before `idleBeforeIso` or begun at or before `createdBeforeIso`. Run on each sign-in,
 * so the tables stay as small as their windows.
 */
export async function deleteExpiredSignInRows(
  db: Db,
  cutoffs: { failuresBeforeIso: string; idleBeforeIso: string; createdBeforeIso: string },
): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('failed_at', '<=', cutoffs.failuresBeforeIso).execute();
  await db
    .deleteFrom('settings_sessions')
    .where((eb) =>
      eb.or([eb('last_seen_at', '<=', cutoffs.idleBeforeIso), eb('created_at', '<=', cutoffs.createdBeforeIso)]),
    )
    .execute();
}

/** Stores a new session of `accountId` under the hash of its id. */
export async function createSession(db: Db, session: { idHash: string; accountId: string; nowIso: string }) {
  await db
    .insertInto('settings_sessions')
    .values({
      id_hash: session.idHash,
      account_id: session.accountId,
      created_at: session.nowIso,
      last_seen_at: session.nowIso,
    })
    .execute();
}

/** A stored session and the account it belongs to. */
export interface StoredSession {
  account: AccountRow;
  /** ms since the epoch */
  createdAtMs: number;
  /** ms since the epoch */
  lastSeenAtMs: number;
}

const sessionByHash = precompiledQuery((db, param) =>
  db
    .selectFrom('settings_sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .selectAll('a')
    .select(['s.created_at as session_created_at', 's.last_seen_at'])
    .where('s.id_hash', '=', param('idHash')),
);

/**
 * The session whose id hashes to `idHash`, with its account, or undefined. Whether it has ended
 * is the caller's rule. Compiled once: every page view of the area reads it.
 */
export async function sessionByIdHash(db: Db, idHash: string): Promise<StoredSession | undefined> {
  const row = await sessionByHash.first(db, { idHash });
  if (!row) return undefined;
  const { session_created_at, last_seen_at, ...account } = row;
  return { account, createdAtMs: msOf(session_created_at), lastSeenAtMs: msOf(last_seen_at) };
}

const touch = precompiledQuery((db, param) =>
  db
    .updateTable('settings_sessions')
    .set({ last_seen_at: param('now') })
    .where('id_hash', '=', param('idHash')),
);

/** Records a request of session `idHash` at `nowIso` (its idle time starts again). */
export async function touchSession(db: Db, idHash: string, nowIso: string): Promise<void> {
  await touch.run(db, { idHash, now: nowIso });
}

/** Ends session `idHash` (sign-out, or found ended). */
export async function endSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('settings_sessions').where('id_hash', '=', idHash).execute();
}
