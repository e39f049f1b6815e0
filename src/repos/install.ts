/**
 * The install's identity (decisions.md §16): the random id 0007_install_id.sql (sql/sqlite/,
 * sql/postgres/) stored once in the database. Every instance of an install reads the same one;
 * another database has another.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * The install id: 32 lower-case hex digits.
 * @throws when the database is not migrated (no `install` row).
 */
export async function installId(db: Kysely<Database>): Promise<string> {
  return (await db.selectFrom('install').select('id').executeTakeFirstOrThrow()).id;
}
