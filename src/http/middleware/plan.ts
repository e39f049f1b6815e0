/**
 * The plan gate of write operations (decisions.md §8, §3 step 6): a `free` account, or a `pro`
 * account past `planExpiresAt`, answers 402 `UPGRADE_REQUIRED`. It runs after the lookups (a
 * missing record is 404 whatever the plan) and before the idempotency key, so a refused write
 * stores nothing. Reads are never gated.
 */
import type { Clock } from '../../domain/clock.js';
import type { AccountRow } from '../../db/schema.js';
import { ApiError } from '../errors.js';

/**
 * @param now milliseconds since the epoch, from the injected clock.
 * @throws ApiError UPGRADE_REQUIRED when the account's plan does not allow writes at `now`.
 */
export function assertWritablePlan(account: Pick<AccountRow, 'plan' | 'plan_expires_at'>, now: number): void {
  if (account.plan === 'free') {
    throw new ApiError(
      'UPGRADE_REQUIRED',
      'Write operations need a pro or lifetime plan; this account is on the free plan',
    );
  }
  if (account.plan === 'pro' && account.plan_expires_at !== null && Date.parse(account.plan_expires_at) <= now) {
    throw new ApiError(
      'UPGRADE_REQUIRED',
      `The pro plan of this account expired at ${account.plan_expires_at}; renew it to use write operations`,
    );
  }
}

/** `assertWritablePlan` for the caller of a request. */
export const requireWritablePlan = (c: { get(key: 'caller'): { account: AccountRow } }, clock: Clock) =>
  assertWritablePlan(c.get('caller').account, clock.now());
