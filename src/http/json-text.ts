/**
 * A 200 answer whose JSON text is made already (a kept `GET /me` answer, a page whose items the
 * store wrote as JSON: src/db/json-rows.ts), typed as the route's JSON answer `T` so the route
 * still checks against its OpenAPI definition. The text must be what `c.json(value)` would send
 * for a `T`; Hono types a text body as text, hence the one cast, here.
 */
import type { Context, TypedResponse } from 'hono';

const JSON_TYPE = { 'Content-Type': 'application/json' } as const;

export const jsonText = <T>(c: Context, text: string): TypedResponse<T, 200, 'json'> =>
  c.body(text, 200, JSON_TYPE) as unknown as TypedResponse<T, 200, 'json'>;
