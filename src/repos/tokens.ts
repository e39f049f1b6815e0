/**
 * API tokens and accounts as the operator manages them (CLI `accounts`, `tokens`; contract §5;
 * decisions.md §8). The raw token is returned once by `createToken` and never stored.
 */
import { type Kysely, sql, type SqlBool } from 'kysely';
import { insertRow, precompiledQuery } from '../db/compiled.js';
import { inTransaction, storeOf } from '../db/connection.js';
import { newId } from '../domain/ids.js';
import type { AccountRow, ApiTokenRow, Database } from '../db/schema.js';
import { SCOPES, type Scope } from '../domain/scopes.js';
import { generateToken, hashToken, tokenHints } from '../domain/tokens.js';
import { isoAt } from '../domain/clock.js';
import { keptDataCache } from './data-cache.js';

/** Contract §5.5: at most 10 active tokens per account. */
export const MAX_ACTIVE_TOKENS = 10;

/** A refusal the operator can act on (bad scope, unknown account, token limit). */
export class TokenError extends Error {}

/** The refusal of an 11th active token (contract §5.5, decisions.md §8). */
export class TokenLimitError extends TokenError {}

const nameById = precompiledQuery((db, param) =>
  db.selectFrom('api_tokens').select('name').where('id', '=', param('id')),
);

/**
 * The name of token `id`, or null when there is none (the fixture's request journal names the
 * caller's token of every request it records). Compiled once.
 */
export async function tokenName(db: Kysely<Database>, id: string): Promise<string | null> {
  return (await nameById.first(db, { id }))?.name ?? null;
}

/**
 * The condition on an `api_tokens` row of an active token: neither revoked nor expired at `now`
 * (ISO 8601). The one definition for every count of active tokens. Its columns are unqualified,
 * so inside a subquery they name the subquery's `api_tokens`.
 */
const activeTokenAt = (now: string) =>
  sql<SqlBool>`(revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now}))`;

const activeCount = precompiledQuery((db, param) =>
  db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', param('accountId'))
    .where(activeTokenAt(param('now')))
    .where('id', '<>', param('exceptId')),
);

/** A token's state at `nowIso` (ISO 8601), by the same rule as `activeTokenAt`: `revoked`, else `expired`, else `active`. */
export function tokenState(
  token: Pick<ApiTokenRow, 'revoked_at' | 'expires_at'>,
  nowIso: string,
): 'active' | 'expired' | 'revoked' {
  if (token.revoked_at !== null) return 'revoked';
  return token.expires_at !== null && token.expires_at <= nowIso ? 'expired' : 'active';
}

/** Tokens of `accountId` neither revoked nor expired at `nowIso`, `exceptId` left out. */
export async function countActiveTokens(
  db: Kysely<Database>,
  accountId: string,
  nowIso: string,
  exceptId = '',
): Promise<number> {
  return Number((await activeCount.first(db, { accountId, now: nowIso, exceptId }))?.n ?? 0);
}

/** Inserts an account; resolves with its row. @throws what the database throws (a duplicate id). */
export async function createAccount(
  db: Kysely<Database>,
  input: { id?: string; email: string; name: string; plan: AccountRow['plan']; planExpiresAt?: string | null },
  nowIso: string,
): Promise<AccountRow> {
  const row: AccountRow = {
    id: input.id ?? newId('acct'),
    email: input.email,
    name: input.name,
    plan: input.plan,
    plan_expires_at: input.planExpiresAt ?? null,
    created_at: nowIso,
    updated_at: nowIso,
  };
  await insertRow(db, 'accounts', row);
  return row;
}

/** Every account, oldest first (ties by id). */
export function listAccounts(db: Kysely<Database>): Promise<AccountRow[]> {
  return db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
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
export function createToken(
  db: Kysely<Database>,
  input: NewToken,
  nowIso: string,
): Promise<{ row: ApiTokenRow; token: string }> {
  return inTransaction(db, async (trx) => {
    const unknown = input.scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length) throw new TokenError(`unknown scope(s): ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`);
    if (!(await accountExists(trx, input.accountId))) throw new TokenError(`no account with id ${input.accountId}`);
    const active = !input.revokedAt && (input.expiresAt === null || input.expiresAt > nowIso);
    if (active && (await countActiveTokens(trx, input.accountId, nowIso, input.id)) >= MAX_ACTIVE_TOKENS) {
      throw new TokenLimitError(
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
    await upsertToken.run(trx, row);
    return { row, token };
  });
}

// An existing id is updated in place (an import run again); its activity is kept.
const upsertToken = precompiledQuery((db, param) =>
  db
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

const tokensOfAccount = precompiledQuery((db, param) =>
  db
    .selectFrom('api_tokens')
    .selectAll()
    .where('account_id', '=', param('accountId'))
    .orderBy('created_at')
    .orderBy('id'),
);

/**
 * The tokens of `accountId` (oldest first), or of every account (by account, then oldest first).
 * An account's list is compiled once: the settings area's API access page reads it on every view.
 */
export function listTokens(db: Kysely<Database>, accountId?: string): Promise<ApiTokenRow[]> {
  if (accountId !== undefined) return tokensOfAccount.all(db, { accountId });
  return db.selectFrom('api_tokens').selectAll().orderBy('account_id').orderBy('created_at').orderBy('id').execute();
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

const tokenByHash = precompiledQuery((db, param) =>
  db
    .selectFrom('api_tokens as t')
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .select([
      't.id as token_id',
      't.scopes',
      't.expires_at',
      't.revoked_at',
      'a.id',
      'a.email',
      'a.name',
      'a.plan',
      'a.plan_expires_at',
      'a.created_at',
      'a.updated_at',
    ])
    .where('t.token_hash', '=', param('tokenHash')),
);

/**
 * A token lookup for authenticating every request. The answers are kept in process while the
 * store's change stamp (`Store.stamps`, src/db/change-stamps.ts) stays the same: any write of this
 * process, a commit by another process or instance (`outreach-api tokens revoke`, an import) or
 * `markChanged()` changes it, and it is read at most once per request, after the request started,
 * so a revocation counts from the very next request on every instance (decisions.md §16
 * "Tokens", "Caches"). A hit costs the stamp and a map lookup keyed by the presented token,
 * instead of its SHA-256 and the token/account join. The raw token is kept only in this process's
 * memory, as it is while its request is served; tokens that match nothing are not kept. Where the
 * stamp proves nothing (null), every call reads the token. Expiry is checked by the caller
 * against its clock.
 * @returns `find(token)`: the token (a well-formed `oapi_…` string), or undefined when no token
 *   has its hash. It throws what the store throws.
 */
/** What the token lookup reads (`tokenByHash`). */
const TOKEN_TABLES = ['accounts', 'api_tokens'] as const;

export function cachedTokenLookup(db: Kysely<Database>): (token: string) => Promise<TokenForAuth | undefined> {
  const store = storeOf(db);
  let stamp: string | null = null;
  const cache = new Map<string, TokenForAuth>();
  return async (presented) => {
    const read = store.stamps.current(TOKEN_TABLES);
    const now = read instanceof Promise ? await read : read;
    if (now === null || now !== stamp || cache.size >= TOKEN_CACHE_SIZE) {
      cache.clear();
      stamp = now;
    }
    const hit = cache.get(presented);
    if (hit) return hit;
    const row = await tokenByHash.first(store.db, { tokenHash: hashToken(presented) });
    if (!row) return undefined;
    const { token_id, scopes, expires_at, revoked_at, ...account } = row;
    const token: TokenForAuth = {
      tokenId: token_id,
      account,
      scopes: new Set(JSON.parse(scopes) as string[]),
      expiresAtMs: expires_at === null ? null : Date.parse(expires_at),
      revoked: revoked_at !== null,
    };
    // Kept under the stamp read before the row: a write since then gives another stamp.
    if (now !== null && stamp === now) cache.set(presented, token);
    return token;
  };
}

/** Revokes a token; effective on the next request. @returns false when no such unrevoked token exists. */
export async function revokeToken(db: Kysely<Database>, tokenId: string, nowIso: string): Promise<boolean> {
  return (await revoke.run(db, { tokenId, now: nowIso })) > 0;
}

const revoke = precompiledQuery((db, param) =>
  db
    .updateTable('api_tokens')
    .set({ revoked_at: param('now') })
    .where('id', '=', param('tokenId'))
    .where('revoked_at', 'is', null),
);

/**
 * `GET /me`'s one statement, compiled once: the token `tokenId` (metadata, never its hash) with its
 * account's project count and active token count at `now` (ISO 8601), and when that count next
 * changes by itself: the earliest expiry after `now` of the account's unrevoked tokens (null for
 * none).
 */
const meQuery = precompiledQuery((db, param) =>
  db
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
      eb
        .selectFrom('api_tokens as e')
        .select((sub) => sub.fn.min('e.expires_at').as('at'))
        .whereRef('e.account_id', '=', 't.account_id')
        .where('e.revoked_at', 'is', null)
        .where('e.expires_at', '>', param('now'))
        .as('next_expiry'),
    ])
    .where('t.id', '=', param('tokenId')),
);

/** What `GET /me` shows of its token and counts (`tokenForMe`). */
export interface TokenForMe {
  id: string;
  name: string;
  scopes: string;
  token_prefix: string;
  last_four: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  project_count: number;
  active_token_count: number;
}

/** What `meQuery` reads. */
const ME_TABLES = ['api_tokens', 'projects'] as const;

interface KeptMe {
  row: TokenForMe;
  /** ms since the epoch when the active token count changes by itself (a token expires); Infinity: never. */
  until: number;
}

/**
 * `GET /me`'s token `tokenId` and its account's counts at `nowMs` (ms since the epoch), from the
 * store's data cache (src/repos/data-cache.ts) while no write changed them and no token of the
 * account expired since they were read (decisions.md §16 "Caches").
 * @returns undefined when the token does not exist.
 */
export async function tokenForMe(
  db: Kysely<Database>,
  tokenId: string,
  nowMs: number,
): Promise<TokenForMe | undefined> {
  const cache = await keptDataCache(db, ME_TABLES);
  const key = `me|${tokenId}`;
  const kept = cache?.get(key) as KeptMe | undefined;
  if (kept !== undefined && nowMs < kept.until) return kept.row;
  const found = await meQuery.first(db, { tokenId, now: isoAt(nowMs) });
  if (!found) return undefined;
  const { next_expiry, project_count, active_token_count, ...token } = found;
  const row: TokenForMe = {
    ...token,
    project_count: Number(project_count ?? 0),
    active_token_count: Number(active_token_count ?? 0),
  };
  cache?.set(key, {
    row,
    until: next_expiry === null || next_expiry === undefined ? Infinity : Date.parse(next_expiry),
  });
  return row;
}

const touch = precompiledQuery((db, param) =>
  db
    .updateTable('api_tokens')
    .set({ last_used_at: param('now') })
    .where('id', '=', param('tokenId')),
);

/**
 * Authentication's write, compiled once: sets token `tokenId`'s `last_used_at` to `now`
 * (ISO 8601). The caller decides how often (at most once a minute).
 */
export async function recordTokenUse(db: Kysely<Database>, tokenId: string, now: string): Promise<void> {
  await touch.run(db, { tokenId, now });
}

/** The id of the token whose hash (`hashToken`) is `tokenHash`, or undefined when none is stored. */
export async function tokenIdByHash(db: Kysely<Database>, tokenHash: string): Promise<string | undefined> {
  return (await db.selectFrom('api_tokens').select('id').where('token_hash', '=', tokenHash).executeTakeFirst())?.id;
}

/** Whether the account `id` exists, or, without `id`, whether any account does (an empty database has none). */
export async function accountExists(db: Kysely<Database>, id?: string): Promise<boolean> {
  const accounts = db.selectFrom('accounts').select('id');
  const found = await (id === undefined ? accounts.limit(1) : accounts.where('id', '=', id)).executeTakeFirst();
  return found !== undefined;
}
