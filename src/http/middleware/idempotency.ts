/**
 * Idempotency keys of write operations (decisions.md §7), after the IETF Idempotency-Key draft.
 *
 * A key is scoped to (account, operation), the operation being the method and the route
 * template with the group form folded (`POST /{group}/{groupId}/sites/{siteId}/…`), since both
 * path forms address the same records. The request hash is SHA-256 over the path ids and the
 * canonical JSON of the body (object keys sorted at every level).
 *
 * Replay first (decisions.md §7): a key already stored is answered before any check that reads
 * the current state of the data (the 404 lookups, the 402 plan gate, a rule such as "the site
 * has an active sender"), so a client retrying after a timeout always learns what became of its
 * first request, even if a sender was paused, a plan expired or a draft changed since. The
 * request hash therefore cannot come from those lookups: it is taken over the ids as a *name
 * resolution* gives them, which reads but never refuses: the group id under `projectId` in both
 * path forms (a workspace id is its project's id), and a thread's provider `threadId` replaced by
 * the record id it names in that site (as given when none matches). A retry naming the same
 * records the other way is the same request; naming other records is 422
 * `IDEMPOTENCY_KEY_REUSED`.
 *
 * - Key stored, same request: the stored status and body again, `Idempotent-Replayed: true`.
 * - Key stored, different request: 422 `IDEMPOTENCY_KEY_REUSED` (checked first, even in flight).
 * - Key stored and still in flight: 409 `IDEMPOTENCY_CONFLICT`.
 * - New key: the checks of decisions.md §3 run in their order (404, then 402, then the
 *   operation's own rules) and store nothing if they refuse; then the key is stored `in_flight`,
 *   the operation runs, and its writes commit in ONE transaction with the stored response
 *   (`completed`). Work that leaves the process (mail, crawling) is only *recorded* by those
 *   writes (outbox rows, discovery jobs) and done by a worker after the commit, so a crash can
 *   neither lose an accepted request nor repeat it inside the service.
 * - The operation fails (any error, 500 included), or the shutdown grace ends while it waits on a
 *   provider (503 `SERVICE_UNAVAILABLE`, decisions.md §15): the key is released; nothing was stored.
 * - Keys live 24 h: an expired key counts as unused, and `purgeExpiredKeys`
 *   (`src/repos/idempotency-keys.ts`) deletes them.
 */
import { createHash } from 'node:crypto';
import type { TypedResponse } from 'hono';
import type { Kysely } from 'kysely';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { JSONParsed } from 'hono/utils/types';
import { isoAt, type Clock } from '../../domain/clock.js';
import { inTransaction, type Store } from '../../db/connection.js';
import type { Database } from '../../db/schema.js';
import { claimKey, completeKey, findKey, type KeyScope, releaseKey } from '../../repos/idempotency-keys.js';
import type { Logger } from '../../logger.js';
import { ProviderError } from '../../providers/types.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { untilAborted } from '../shutdown.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Orders an object's entries by key, in UTF-16 code unit order. */
// Stryker disable next-line EqualityOperator,ConditionalExpression: the keys of one object are never equal, and V8's sort only asks whether the answer is below 0
const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/** JSON with object keys sorted at every level, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(byKey);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Hex SHA-256 of the path ids and the canonical body. */
export const requestHash = (ids: Record<string, string>, body: unknown) =>
  createHash('sha256').update(canonicalJson({ ids, body })).digest('hex');

export interface IdempotentRequest {
  /** Method and group-folded route template. */
  operation: string;
  key: string;
  /**
   * The ids the path names after name resolution only (see the module comment): the group id as
   * `projectId`, aliases replaced by record ids where they resolve; nothing checked.
   */
  ids: Record<string, string>;
  /** The validated body. */
  body: unknown;
}

/** What a write answers: its HTTP status and the `data` of its `{ ok: true, data }` envelope. */
interface Outcome<T = unknown, S extends ContentfulStatusCode = ContentfulStatusCode> {
  status: S;
  data: T;
}

/**
 * The response `run` gives for outcome `O` (each member of a union of outcomes): its envelope as
 * JSON with its status, typed so that a route's handler returns it as the route declares it.
 */
type OutcomeResponse<O> =
  O extends Outcome<infer T, infer S> ? Response & TypedResponse<JSONParsed<{ ok: true; data: T }>, S, 'json'> : never;

export interface IdempotentSteps<C, P, O extends Outcome> {
  /**
   * The checks that read the current state of the data, in decisions.md §3 order (404 lookups,
   * 402 plan, then the operation's own rules); they run only for a new key, after the replay, and
   * return what the operation needs. A throw here stores nothing.
   */
  check: () => C | Promise<C>;
  /**
   * Optional asynchronous work that writes nothing (asking a provider); it runs while the key is
   * held `in_flight`, so a concurrent retry gets 409.
   */
  prepare?: (checked: C) => Promise<P>;
  /**
   * The operation's writes, with `trx`: they commit in one transaction with the stored response.
   * Nothing but `trx` may be used for the store in here (see `inTransaction`).
   */
  commit: (trx: Kysely<Database>, checked: C, prepared: P, nowIso: string) => Promise<O>;
}

interface StoredAnswer {
  status: number;
  body: string;
}

/** The idempotency-key store of one database. */
export class IdempotencyKeys {
  /**
   * @param stopping aborts at the end of the shutdown grace (decisions.md §15): a `prepare` step
   * still waiting then gives up with 503 `SERVICE_UNAVAILABLE` and the key is released.
   */
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly stopping?: AbortSignal,
    /** How long a key in flight is held, ms (`workers.leaseMs`, decisions.md §16). */
    private readonly leaseMs = 60_000,
  ) {}

  /**
   * Runs a write under its key and answers it (see the module comment).
   * @throws ApiError IDEMPOTENCY_KEY_REUSED (422) or IDEMPOTENCY_CONFLICT (409); whatever the
   * steps throw, after releasing the key.
   */
  async run<C, P, O extends Outcome>(
    c: AppContext,
    request: IdempotentRequest,
    steps: IdempotentSteps<C, P, O>,
  ): Promise<OutcomeResponse<O>> {
    // The one place the answer gets its route's type: a replay is this operation's own earlier
    // answer (the key is scoped to the operation and the request hash), so it has an outcome's shape.
    const typed = (response: Response) => response as OutcomeResponse<O>;
    const scope: KeyScope = { accountId: c.get('caller').account.id, operation: request.operation, key: request.key };
    const hash = requestHash(request.ids, request.body);
    // Replay first: nothing that reads the current data may run before a stored answer.
    const stored = await this.stored(this.store.db, scope, hash);
    if (stored) return typed(this.replay(c, stored));
    const checked = await steps.check();
    const complete = async (trx: Kysely<Database>, claimedAt: string, prepared: P) => {
      const outcome = await steps.commit(trx, checked, prepared, isoAt(this.clock.now()));
      const envelope = { ok: true as const, data: outcome.data };
      // Only the claim of this request: a lease that ran out may have let another request take the key.
      if (!(await completeKey(trx, scope, claimedAt, outcome.status, JSON.stringify(envelope))))
        throw new ApiError(
          'IDEMPOTENCY_CONFLICT',
          'A request with this idempotency key is being processed; retry later',
        );
      return { status: outcome.status, envelope };
    };

    // The checks awaited: a concurrent request with the same key may have claimed it meanwhile,
    // so the claim looks again (replay, 409 or 422 as above).
    if (!steps.prepare) {
      // Nothing to wait for: claim, write and store the response in one transaction.
      const result = await inTransaction(this.store.db, async (trx) => {
        const claimed = await this.claim(trx, scope, hash);
        return 'claimedAt' in claimed ? await complete(trx, claimed.claimedAt, undefined as P) : claimed;
      });
      return typed('envelope' in result ? c.json(result.envelope, result.status) : this.replay(c, result));
    }
    const claimed = await inTransaction(this.store.db, (trx) => this.claim(trx, scope, hash));
    if (!('claimedAt' in claimed)) return typed(this.replay(c, claimed));
    try {
      const prepared = await untilAborted(steps.prepare(checked), this.stopping);
      const result = await inTransaction(this.store.db, (trx) => complete(trx, claimed.claimedAt, prepared));
      return typed(c.json(result.envelope, result.status));
    } catch (error) {
      // A store that cannot serve now cannot release it either: the lease frees the key then.
      await releaseKey(this.store.db, scope, claimed.claimedAt).catch(() => undefined);
      throw error;
    }
  }

  /**
   * The stored answer of this key, or null when the key is unused (or expired).
   * @throws ApiError IDEMPOTENCY_KEY_REUSED when it was used for another request,
   * IDEMPOTENCY_CONFLICT when that request is still running.
   */
  private async stored(db: Kysely<Database>, scope: KeyScope, hash: string): Promise<StoredAnswer | null> {
    const row = await findKey(db, scope);
    const now = this.clock.now();
    if (!row || Date.parse(row.expires_at) <= now) return null;
    // A claim older than a lease belonged to a request that stopped: the key counts as unused.
    if (row.state === 'in_flight' && Date.parse(row.created_at) <= now - this.leaseMs) return null;
    if (row.request_hash !== hash) {
      throw new ApiError(
        'IDEMPOTENCY_KEY_REUSED',
        'This idempotency key was already used for a different request; use a new key',
      );
    }
    if (row.state === 'in_flight') {
      throw new ApiError(
        'IDEMPOTENCY_CONFLICT',
        'A request with this idempotency key is still being processed; retry later',
      );
    }
    return { status: row.response_status!, body: row.response_body! };
  }

  /**
   * In transaction `trx`: the stored answer to replay, or the claim made (the key stored
   * `in_flight` at `claimedAt`). The claim is one atomic statement (`claimKey`); when another
   * request holds the key (a race lost, on this instance or another), its row is read again.
   * @throws ApiError IDEMPOTENCY_KEY_REUSED or IDEMPOTENCY_CONFLICT as `stored` does.
   */
  private async claim(
    trx: Kysely<Database>,
    scope: KeyScope,
    hash: string,
  ): Promise<StoredAnswer | { claimedAt: string }> {
    const stored = await this.stored(trx, scope, hash);
    // Stryker disable next-line ConditionalExpression: without it, the claim below finds the same live row, writes nothing, and the row is read again: the same answer
    if (stored) return stored;
    const now = this.clock.now();
    const claimedAt = isoAt(now);
    // An expired key, or a claim older than a lease, counts as unused.
    if (await claimKey(trx, scope, hash, claimedAt, isoAt(now + IDEMPOTENCY_TTL_MS), isoAt(now - this.leaseMs)))
      return { claimedAt };
    const again = await this.stored(trx, scope, hash);
    if (again) return again;
    throw new ApiError('IDEMPOTENCY_CONFLICT', 'A request with this idempotency key is being processed; retry later');
  }

  private replay(c: AppContext, stored: StoredAnswer): Response {
    c.set('replayed', true);
    return c.body(stored.body, stored.status as ContentfulStatusCode, {
      'Content-Type': 'application/json',
      [REPLAYED_HEADER]: 'true',
    });
  }
}

/** `METHOD /{group}/{groupId}<rest>`: the operation name of a grouped write route. */
export const groupOperation = (method: string, rest: string) => `${method.toUpperCase()} /{group}/{groupId}${rest}`;

/**
 * For `prepare` steps: a provider failure becomes a 500 (so the key is released and the client
 * may retry with it), logged with its reason; anything else is rethrown as is.
 */
export function providerFailure(logger: Logger, role: string) {
  return (error: unknown): never => {
    if (!(error instanceof ProviderError)) throw error;
    logger.log('warn', `${role} failed`, { error: error.message });
    throw new ApiError('INTERNAL_ERROR', `The ${role} failed; retry later with the same key`);
  };
}
