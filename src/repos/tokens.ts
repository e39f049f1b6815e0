/**
 * API tokens and accounts as the operator manages them (CLI `accounts`, `tokens`; contract §5;
 * decisions.md §8). The raw token is returned once by `createToken` and never stored.
 */
import { sql, type SqlBool } from 'kysely';
import { compileStatement, rowInsert } from '../db/compiled.js';
import type { Store } from '../db/connection.js';
import { newId } from '../domain/ids.js';
import type { AccountRow, ApiTokenRow } from '../db/schema.js';
import { SCOPES, type Scope } from '../domain/scopes.js';
import { generateToken, hashToken, tokenHints } from '../domain/tokens.js';

/** Contract §5.5: at most 10 active tokens per account. */
export const MAX_ACTIVE_TOKENS = 10;

/** A refusal the operator can act on (bad scope, unknown account, token limit). */
export class TokenError extends Error {}

/**
 * Token names by id, compiled and prepared once per store: the fixture's request journal names
 * the caller's token of every request it records.
 * @returns `nameOf(id)`: the name of token `id`; null when there is none.
 */
export function tokenNameLookup(store: Store): (id: string) => string | null {
  const byId = compileStatement(store, (param) =>
    store.db.selectFrom('api_tokens').select('name').where('id', '=', param('id')),
  );
  return (id) => byId.get({ id })?.name ?? null;
}

/**
 * The condition on an `api_tokens` row of an active token: neither revoked nor expired at `now`
 * (ISO 8601). The one definition for every count of active tokens. Its columns are unqualified,
 * so inside a subquery they name the subquery's `api_tokens`.
 */
const activeTokenAt = (now: string) =>
  sql<SqlBool>`(revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now}))`;

/** Tokens of `accountId` neither revoked nor expired at `nowIso`, `exceptId` left out. */
export function countActiveTokens(store: Store, accountId: string, nowIso: string, exceptId = ''): number {
  const count = compileStatement(store, () =>
    store.db
      .selectFrom('api_tokens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where(activeTokenAt(nowIso))
      .where('id', '<>', exceptId),
  );
  return count.get({})?.n ?? 0;
}

export function createAccount(
  store: Store,
  input: { id?: string; email: string; name: string; plan: AccountRow['plan']; planExpiresAt?: string | null },
  nowIso: string,
): AccountRow {
  const row: AccountRow = {
    id: input.id ?? newId('acct'),
    email: input.email,
    name: input.name,
    plan: input.plan,
    plan_expires_at: input.planExpiresAt ?? null,
    created_at: nowIso,
    updated_at: nowIso,
  };
  rowInsert(store, 'accounts')(row);
  return row;
}

export function listAccounts(store: Store): AccountRow[] {
  const all = compileStatement(store, () =>
    store.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id'),
  );
  return all.all({});
}

export interface NewToken {
  accountId: string;
  name: string;
  scopes: readonly string[];
  /** Absolute expiry (ISO), or null for none. */
  expiresAt: string | null;
  /** Use this raw value instead of generating one (import fixtures). */
  rawToken?: string;
  revokedAt?: string | null;
  id?: string;
}

/**
 * Creates a token and returns its row and the raw value (shown once).
 * @throws TokenError for an unknown account, an unknown scope, or an 11th active token.
 */
export function createToken(store: Store, input: NewToken, nowIso: string): { row: ApiTokenRow; token: string } {
  return store.transaction(() => {
    const unknown = input.scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length) throw new TokenError(`unknown scope(s): ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`);
    if (!accountExists(store, input.accountId)) throw new TokenError(`no account with id ${input.accountId}`);
    const active = !input.revokedAt && (input.expiresAt === null || input.expiresAt > nowIso);
    if (active && countActiveTokens(store, input.accountId, nowIso, input.id) >= MAX_ACTIVE_TOKENS) {
      throw new TokenError(
        `account ${input.accountId} already has ${MAX_ACTIVE_TOKENS} active tokens (the limit); revoke one first`,
      );
    }
    const token = input.rawToken ?? generateToken();
    const hints = tokenHints(token);
    const row: ApiTokenRow = {
      id: input.id ?? newId('tok'),
      account_id: input.accountId,
      name: input.name,
      scopes: JSON.stringify([...new Set(input.scopes)] as Scope[]),
      token_hash: hashToken(token),
      token_prefix: hints.prefix,
      last_four: hints.lastFour,
      created_at: nowIso,
      expires_at: input.expiresAt,
      revoked_at: input.revokedAt ?? null,
      last_used_at: null,
    };
    // An existing id is updated in place (an import run again); its activity is kept.
    const upsert = compileStatement(store, (param) =>
      store.db
        .insertInto('api_tokens')
        .values({
          id: param('id'),
          account_id: param('account_id'),
          name: param('name'),
          scopes: param('scopes'),
          token_hash: param('token_hash'),
          token_prefix: param('token_prefix'),
          last_four: param('last_four'),
          created_at: param('created_at'),
          expires_at: param('expires_at'),
          revoked_at: param('revoked_at'),
          last_used_at: param('last_used_at'),
        })
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            account_id: eb.ref('excluded.account_id'),
            name: eb.ref('excluded.name'),
            scopes: eb.ref('excluded.scopes'),
            token_hash: eb.ref('excluded.token_hash'),
            token_prefix: eb.ref('excluded.token_prefix'),
            last_four: eb.ref('excluded.last_four'),
            expires_at: eb.ref('excluded.expires_at'),
            revoked_at: eb.ref('excluded.revoked_at'),
          })),
        ),
    );
    upsert.run(row);
    return { row, token };
  });
}

export function listTokens(store: Store, accountId?: string): ApiTokenRow[] {
  const tokens = store.db.selectFrom('api_tokens').selectAll();
  if (accountId !== undefined) {
    const ofAccount = compileStatement(store, (param) =>
      tokens.where('account_id', '=', param('accountId')).orderBy('created_at').orderBy('id'),
    );
    return ofAccount.all({ accountId });
  }
  return compileStatement(store, () => tokens.orderBy('account_id').orderBy('created_at').orderBy('id')).all({});
}

/** What authentication needs of a token: its account, scopes and validity. */
export interface TokenForAuth {
  tokenId: string;
  account: AccountRow;
  scopes: ReadonlySet<string>;
  /** Expiry in ms since the epoch, or null for none. */
  expiresAtMs: number | null;
  revoked: boolean;
}

/** Tokens kept by one lookup; past it the cache starts over (an attacker's unknown tokens are never kept). */
const TOKEN_CACHE_SIZE = 1024;

/**
 * A token lookup for authenticating every request, with the answers kept in process until the
 * store's data changes (`Store.changeStamp()`: any write on this connection, a commit by another
 * process such as `outreach-api tokens revoke`, or `Store.markChanged()`), so a revocation takes
 * effect on the very next request; expiry is checked by the caller against its clock. A hit costs
 * the change stamp and a map lookup keyed by the presented token, instead of its SHA-256 and the
 * token/account join; the raw token is kept only in this process's memory, as it is while its
 * request is served. Tokens that match nothing are not kept.
 * @returns `find(token)`: the token (a well-formed `oapi_…` string), or undefined when no token
 *   has its hash.
 */
export function cachedTokenLookup(store: Store): (token: string) => TokenForAuth | undefined {
  const statement = store.sqlite.prepare(`
    SELECT t.id AS token_id, t.scopes, t.expires_at, t.revoked_at,
           a.id, a.email, a.name, a.plan, a.plan_expires_at, a.created_at, a.updated_at
    FROM api_tokens t JOIN accounts a ON a.id = t.account_id
    WHERE t.token_hash = ?`);
  let stamp = '';
  const cache = new Map<string, TokenForAuth>();
  return (presented) => {
    const now = store.changeStamp();
    if (now !== stamp || cache.size >= TOKEN_CACHE_SIZE) {
      cache.clear();
      stamp = now;
    }
    const hit = cache.get(presented);
    if (hit) return hit;
    const row = statement.get(hashToken(presented)) as
      | (AccountRow & { token_id: string; scopes: string; expires_at: string | null; revoked_at: string | null })
      | undefined;
    if (!row) return undefined;
    const { token_id, scopes, expires_at, revoked_at, ...account } = row;
    const token: TokenForAuth = {
      tokenId: token_id,
      account,
      scopes: new Set(JSON.parse(scopes) as string[]),
      expiresAtMs: expires_at === null ? null : Date.parse(expires_at),
      revoked: revoked_at !== null,
    };
    cache.set(presented, token);
    return token;
  };
}

/** Revokes a token; effective on the next request. @returns false when no such unrevoked token exists. */
export function revokeToken(store: Store, tokenId: string, nowIso: string): boolean {
  const revoke = compileStatement(store, (param) =>
    store.db
      .updateTable('api_tokens')
      .set({ revoked_at: param('now') })
      .where('id', '=', param('tokenId'))
      .where('revoked_at', 'is', null),
  );
  return revoke.run({ tokenId, now: nowIso }) > 0;
}

/**
 * `GET /me`'s one statement, prepared once: the token `tokenId` (metadata, never its hash) with its
 * account's project count and active token count at `now` (ISO 8601). `get({ tokenId, now })`.
 */
export function meStatement(store: Store) {
  return compileStatement(store, (param) =>
    store.db
      .selectFrom('api_tokens as t')
      .select([
        't.id',
        't.name',
        't.scopes',
        't.token_prefix',
        't.last_four',
        't.created_at',
        't.expires_at',
        't.last_used_at',
      ])
      .select((eb) => [
        eb
          .selectFrom('projects as p')
          .select((sub) => sub.fn.countAll<number>().as('n'))
          .whereRef('p.account_id', '=', 't.account_id')
          .as('project_count'),
        eb
          .selectFrom('api_tokens as a')
          .select((sub) => sub.fn.countAll<number>().as('n'))
          .whereRef('a.account_id', '=', 't.account_id')
          .where(activeTokenAt(param('now')))
          .as('active_token_count'),
      ])
      .where('t.id', '=', param('tokenId')),
  );
}

/**
 * Authentication's write, compiled and prepared once per store: sets token `tokenId`'s
 * `last_used_at` to `now` (ISO 8601). The caller decides how often (at most once a minute).
 */
export function tokenUseRecorder(store: Store): (tokenId: string, now: string) => void {
  const touch = compileStatement(store, (param) =>
    store.db
      .updateTable('api_tokens')
      .set({ last_used_at: param('now') })
      .where('id', '=', param('tokenId')),
  );
  return (tokenId, now) => {
    touch.run({ tokenId, now });
  };
}

/** The id of the token whose hash (`hashToken`) is `tokenHash`, or undefined when none is stored. */
export function tokenIdByHash(store: Store, tokenHash: string): string | undefined {
  const byHash = compileStatement(store, (param) =>
    store.db.selectFrom('api_tokens').select('id').where('token_hash', '=', param('tokenHash')),
  );
  return byHash.get({ tokenHash })?.id;
}

/** Whether the account `id` exists, or, without `id`, whether any account does (an empty database has none). */
export function accountExists(store: Store, id?: string): boolean {
  const accounts = store.db.selectFrom('accounts').select('id');
  if (id === undefined) return compileStatement(store, () => accounts.limit(1)).get({}) !== undefined;
  return compileStatement(store, (param) => accounts.where('id', '=', param('id'))).get({ id }) !== undefined;
}
