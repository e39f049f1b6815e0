/**
 * Reading the settings area's form posts (decisions.md §18): the fields of an
 * `application/x-www-form-urlencoded` or `multipart/form-data` body (bounded by the area's body
 * limit), and the anti-forgery check of every form that changes something.
 */
import type { Context } from 'hono';
import { timingSafeEqual } from 'node:crypto';
import { nulPaths } from '../http/nul.js';
import { ANTI_FORGERY_FIELD } from './layout.js';

/** A failure the area answers with its error page: the status and the sentence shown. */
export class PageError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 405 | 413 | 500 | 503,
    message: string,
  ) {
    super(message);
  }
}

/** Largest form body accepted, bytes (a name, eleven scopes, a date, a password). */
export const MAX_FORM_BYTES = 64 * 1024;

/** The text fields of a form post; files and other bodies give none. */
export type Form = Map<string, string[]>;

const FORM_TYPES = /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i;

/**
 * The fields of the request's form body (every value of a repeated field, text values only).
 * @throws PageError 400 when the body cannot be read, or when a field's name or value holds a NUL
 * character (U+0000), which no field takes and no store may be given (src/http/nul.ts).
 */
export async function readForm(c: Context): Promise<Form> {
  const form: Form = new Map();
  if (!FORM_TYPES.test(c.req.header('content-type') ?? '')) return form;
  const body = await c.req.parseBody({ all: true }).catch(() => {
    throw new PageError(400, 'The form could not be read. Go back, reload the page and try again.');
  });
  for (const [name, value] of Object.entries(body)) {
    const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
    form.set(name, values);
  }
  if (nulPaths(Object.fromEntries(form), 'form').length > 0)
    throw new PageError(400, 'The form holds a NUL character (U+0000), which no field takes. Nothing was changed.');
  return form;
}

/** The first value of `name`, or '' when absent. */
export const field = (form: Form, name: string): string => form.get(name)?.[0] ?? '';

/**
 * Refuses (403, before anything changes) a form without the session's anti-forgery value or with
 * another one.
 * @throws PageError 403.
 */
export function checkAntiForgery(form: Form, expected: string): void {
  const given = Buffer.from(field(form, ANTI_FORGERY_FIELD));
  const wanted = Buffer.from(expected);
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted))
    throw new PageError(
      403,
      'This form was refused: it did not come from this page of this site (or the page is out of date). Go back, reload the page and try again. Nothing was changed.',
    );
}
