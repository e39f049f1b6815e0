/**
 * Resource ids (decisions.md §1): a type prefix (`acct`, `tok`, `msg`, `con`, `job`, `dmsg`, …),
 * an underscore and 10 bytes in base64url (14 characters), e.g. `msg_3q2-7wAbCdEfGh`. The bytes
 * are random, or, after `seedIds(seed)` (the fixture's `--seed`, decisions.md §14), the n-th of a
 * sequence that depends only on the seed.
 */
import { createHash, randomBytes } from 'node:crypto';

let idSeed: string | null = null;
let idCount = 0;

/** A new id with the given type prefix (no underscore in `prefix`). */
export const newId = (prefix: string): string => {
  const bytes =
    idSeed === null ? randomBytes(10) : createHash('sha256').update(`${idSeed}:${idCount++}`).digest().subarray(0, 10);
  return `${prefix}_${bytes.toString('base64url')}`;
};

/**
 * Makes `newId` deterministic: after this call the same calls give the same ids. `position`
 * (from `idPosition()`) continues the sequence from there, as a reset to a snapshot does. An empty
 * seed makes ids random again. Process-wide.
 */
export function seedIds(seed: string, position = 0): void {
  idSeed = seed === '' ? null : seed;
  idCount = position;
}

/** How many ids the seeded sequence has given. */
export const idPosition = (): number => idCount;
