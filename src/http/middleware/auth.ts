/**
 * Bearer authentication (contract §5, decisions.md §3 step 1). Only the `Authorization` header is
 * read: a token in the URL is never accepted. Missing, malformed, unknown, expired and revoked
 * tokens all answer 401 `UNAUTHORIZED` with the same message, so the answer reveals nothing, and
 * the RFC 6750 challenge (`WWW-Authenticate`, see `unauthorized`).
 * Sets `caller`. `last_used_at` is written at most once a minute per token.
 */
import type { MiddlewareHandler } from 'hono';
import { isoAt } from '../../domain/clock.js';
import { isWellFormedToken } from '../../domain/tokens.js';
import { cachedTokenLookup, recordTokenUse } from '../../repos/tokens.js';
import type { AppDeps, AppEnv } from '../context.js';
import { unauthorized } from '../errors.js';

const LAST_USED_RESOLUTION_MS = 60_000;
const BEARER = /^Bearer +(\S+) *$/i;

export function bearerAuth(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const { store, clock } = deps;
  // Kept in process until the store's data changes: a revocation counts from the next request.
  const findToken = cachedTokenLookup(store.db);
  const lastTouched = new Map<string, number>();
  // A reset puts last_used_at back: touch again on the next request, as after a start.
  store.onReset(() => lastTouched.clear());

  return async (c, next) => {
    // What the caches read about the store before now proves nothing for this request (decisions.md §16 "Caches").
    store.stamps.requestStarts();
    const header = c.req.header('authorization');
    const token = header ? BEARER.exec(header)?.[1] : undefined;
    if (!token || !isWellFormedToken(token)) throw unauthorized(header);
    const found = await findToken(token);
    const now = clock.now();
    if (!found || found.revoked || (found.expiresAtMs !== null && found.expiresAtMs <= now)) throw unauthorized(header);
    if (now - (lastTouched.get(found.tokenId) ?? 0) >= LAST_USED_RESOLUTION_MS) {
      lastTouched.set(found.tokenId, now);
      await recordTokenUse(store.db, found.tokenId, isoAt(now));
    }
    c.set('caller', { account: found.account, tokenId: found.tokenId, scopes: found.scopes });
    await next();
  };
}
