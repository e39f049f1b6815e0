/**
 * Comparisons that ignore case, named once for both stores (decisions.md §16, §17): the
 * repositories write `caseInsensitive('email')` where they compare an address, and each store
 * says it with its own `NOCASE`.
 *
 * - SQLite: the built-in `NOCASE` collation, which folds ASCII letters only.
 * - PostgreSQL: the `nocase` collation of sql/postgres/0001_init.sql (ICU, strength 2), which
 *   folds the case of every script, so two addresses that differ only in the case of a non-ASCII
 *   letter are one address there and two on SQLite. Equality only: `LIKE` cannot use it.
 *
 * The indexes over `email COLLATE NOCASE` (`contacts_prospect_email`, `contacts_email_nocase`, in
 * the migrations of both stores) serve exactly this expression.
 */
import { type RawBuilder, sql } from 'kysely';

/**
 * `column` (a name kysely quotes: `email`, `c.email`) compared without regard to case, as the
 * left side of an equality: `.where(caseInsensitive('email'), '=', address)`.
 */
export const caseInsensitive = (column: string): RawBuilder<string> => sql<string>`${sql.ref(column)} COLLATE NOCASE`;
