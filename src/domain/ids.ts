/**
 * Resource ids (decisions.md §1): a type prefix (`acct`, `tok`, `msg`, `con`, `job`, `dmsg`, …),
 * an underscore and 10 random bytes in base64url (14 characters), e.g. `msg_3q2-7wAbCdEfGh`.
 */
import { randomBytes } from 'node:crypto';

/** A new random id with the given type prefix (no underscore in `prefix`). */
export const newId = (prefix: string): string => `${prefix}_${randomBytes(10).toString('base64url')}`;
