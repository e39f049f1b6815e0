/**
 * Bearer authentication (contract §5, decisions.md §3 step 1). Only the `Authorization` header is
 * read: a token in the URL is never accepted. Missing, malformed, unknown, expired and revoked
 * tokens all answer 401 `UNAUTHORIZED` with the same message, so the answer reveals nothing.
 * Sets `caller`. `last_used_at` is written at most once a minute per token.
 */
import type { MiddlewareHandler } from 'hono';
import { isoAt } from '../../domain/clock.js';
import type { AccountRow } from '../../db/schema.js';
import { hashToken, isWellFormedToken } from '../../domain/tokens.js';
import type { AppDeps, AppEnv } from '../context.js';
import { ApiError } from '../errors.js';

const LAST_USED_RESOLUTION_MS = 60_000;

interface TokenWithAccount extends AccountRow {
  token_id: string;
  scopes: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export function bearerAuth(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const { store, clock } = deps;
  const findToken = store.sqlite.prepare(`
    SELECT t.id AS token_id, t.scopes, t.expires_at, t.revoked_at, t.last_used_at,
           a.id, a.email, a.name, a.plan, a.plan_expires_at, a.created_at, a.updated_at
    FROM api_tokens t JOIN accounts a ON a.id = t.account_id
    WHERE t.token_hash = ?`);
  const touch = store.sqlite.prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ?');
  const lastTouched = new Map<string, number>();
  const unauthorized = () => new ApiError('UNAUTHORIZED', 'A valid bearer token is required');

  return async (c, next) => {
    const header = c.req.header('authorization');
    const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
    const token = match?.[1];
    if (!token || !isWellFormedToken(token)) throw unauthorized();
    const row = findToken.get(hashToken(token)) as TokenWithAccount | undefined;
    const now = clock.now();
    const nowIso = isoAt(now);
    if (!row || row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= nowIso)) throw unauthorized();
    if (now - (lastTouched.get(row.token_id) ?? 0) >= LAST_USED_RESOLUTION_MS) {
      lastTouched.set(row.token_id, now);
      touch.run(nowIso, row.token_id);
    }
    const { token_id, scopes, expires_at: _e, revoked_at: _r, last_used_at: _l, ...account } = row;
    c.set('caller', { account, tokenId: token_id, scopes: new Set(JSON.parse(scopes) as string[]) });
    await next();
  };
}
