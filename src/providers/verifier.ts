/**
 * Address verifiers: `builtin` (syntax, an embedded disposable-domain list, DNS MX with a
 * timeout) and `http` (a verification service).
 */
import { promises as dns } from 'node:dns';
import type { Config } from '../config.js';
import { ProviderError, type VerificationResult, type Verifier } from './types.js';

/** Well-known throwaway-mailbox domains: deliverable, but not a person to write to (risky). */
export const DISPOSABLE_DOMAINS: ReadonlySet<string> = new Set([
  '10minutemail.com',
  '33mail.com',
  'burnermail.io',
  'discard.email',
  'dispostable.com',
  'emailondeck.com',
  'fakeinbox.com',
  'getnada.com',
  'grr.la',
  'guerrillamail.com',
  'guerrillamail.net',
  'mailcatch.com',
  'maildrop.cc',
  'mailinator.com',
  'mailnesia.com',
  'mintemail.com',
  'moakt.com',
  'mohmal.com',
  'mytemp.email',
  'sharklasers.com',
  'spambox.us',
  'spamgourmet.com',
  'temp-mail.org',
  'tempmail.com',
  'tempmailo.com',
  'tempr.email',
  'throwawaymail.com',
  'trash-mail.com',
  'trashmail.com',
  'yopmail.com',
]);

/** Magic domains of the offline verifier (see `./index.ts`): the result without any lookup. */
const MAGIC: Record<string, VerificationResult> = {
  'valid.test': 'valid',
  'invalid.test': 'invalid',
  'risky.test': 'risky',
  'unknown.test': 'unknown',
};

const ADDRESS =
  /^(?=.{3,254}$)([A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*)@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})$/;

/** The lower-cased domain of a syntactically valid address (local part up to 64), else null. */
export function domainOf(email: string): string | null {
  const match = ADDRESS.exec(email.trim());
  if (!match || match[1]!.length > 64) return null;
  return match[2]!.toLowerCase();
}

const underDomain = (domain: string, parent: string) => domain === parent || domain.endsWith(`.${parent}`);

export interface BuiltinVerifierOptions {
  dnsTimeoutMs: number;
  /** MX lookup; injectable for tests. Rejects with a `code` like node:dns (`ENOTFOUND`, `ENODATA`, …). */
  resolveMx?: (domain: string) => Promise<{ exchange: string; priority: number }[]>;
  /** A/AAAA presence for the implicit-MX fallback (RFC 5321 §5.1); injectable for tests. */
  hasAddress?: (domain: string) => Promise<boolean>;
}

/**
 * The offline-capable verifier. In order: the magic `*.test` domains; syntax (→ invalid);
 * disposable domains (→ risky); DNS: MX records → valid, a null MX (RFC 7505) or a domain that
 * does not exist → invalid, no MX but an address record → risky, no answer within
 * `dnsTimeoutMs` or a server failure → unknown.
 */
export function createBuiltinVerifier(options: BuiltinVerifierOptions): Verifier {
  const resolver = new dns.Resolver({ timeout: options.dnsTimeoutMs, tries: 1 });
  const resolveMx = options.resolveMx ?? ((domain: string) => resolver.resolveMx(domain));
  const hasAddress =
    options.hasAddress ??
    (async (domain: string) => {
      const found = await Promise.allSettled([resolver.resolve4(domain), resolver.resolve6(domain)]);
      return found.some((r) => r.status === 'fulfilled' && r.value.length > 0);
    });

  const withTimeout = <T>(promise: Promise<T>): Promise<T | 'timeout'> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), options.dnsTimeoutMs);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  };

  return {
    name: 'builtin',
    async verify(email) {
      const domain = domainOf(email);
      const magic = domain && Object.keys(MAGIC).find((d) => underDomain(domain, d));
      if (magic) return { status: MAGIC[magic]!, reason: `test domain ${magic}` };
      if (!domain) return { status: 'invalid', reason: 'not a valid address' };
      if ([...DISPOSABLE_DOMAINS].some((d) => underDomain(domain, d)))
        return { status: 'risky', reason: 'disposable mailbox domain' };
      try {
        const records = await withTimeout(resolveMx(domain));
        if (records === 'timeout') return { status: 'unknown', reason: 'DNS did not answer in time' };
        const exchanges = records.filter((r) => r.exchange && r.exchange !== '.');
        if (exchanges.length > 0) return { status: 'valid', reason: 'the domain accepts mail (MX)' };
        if (records.length > 0) return { status: 'invalid', reason: 'the domain refuses mail (null MX)' };
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === 'ENOTFOUND') return { status: 'invalid', reason: 'the domain does not exist' };
        if (code !== 'ENODATA') return { status: 'unknown', reason: `DNS lookup failed (${code ?? 'error'})` };
      }
      // No MX: mail falls back to the domain's address record, which few real mailboxes rely on.
      const fallback = await withTimeout(hasAddress(domain).catch(() => false));
      if (fallback === 'timeout') return { status: 'unknown', reason: 'DNS did not answer in time' };
      return fallback
        ? { status: 'risky', reason: 'no MX record; only an address record' }
        : { status: 'invalid', reason: 'the domain has no mail server' };
    },
  };
}

const RESULT_WORDS: Record<VerificationResult, readonly string[]> = {
  valid: ['valid', 'deliverable', 'ok', 'safe', 'verified'],
  invalid: ['invalid', 'undeliverable', 'bounce', 'bounced', 'bad', 'rejected', 'syntax_error'],
  risky: [
    'risky',
    'catch-all',
    'catch_all',
    'catchall',
    'accept_all',
    'accept-all',
    'disposable',
    'role',
    'do_not_mail',
    'spamtrap',
  ],
  unknown: ['unknown'],
};

/** Our status for a verification service's word (case-insensitive); anything unrecognised is `unknown`. */
export function mapServiceResult(word: string): VerificationResult {
  const lower = word.trim().toLowerCase();
  for (const [status, words] of Object.entries(RESULT_WORDS) as [VerificationResult, readonly string[]][]) {
    if (words.includes(lower)) return status;
  }
  return 'unknown';
}

/**
 * A verification service over HTTP (`verifier.httpUrl`).
 *
 * Request: when the URL contains `{email}`, GET with the URL-encoded address put there
 * (`https://verify.example/v1/check?address={email}`); otherwise POST `{"email": "…"}` as JSON.
 * `Authorization: Bearer <key>` is sent when the environment variable named by
 * `verifier.httpApiKeyEnv` is set. Timeout `verifier.timeoutMs`.
 *
 * Expected response: 2xx with a JSON object carrying the verdict as a string in `status` or
 * `result` (top level, or inside `data`), e.g. `{"email":"ana@example.com","status":"deliverable"}`.
 * Words mapped: valid/deliverable/ok/safe/verified → valid; invalid/undeliverable/bounce/
 * bounced/bad/rejected/syntax_error → invalid; risky/catch-all/catch_all/catchall/accept_all/
 * accept-all/disposable/role/do_not_mail/spamtrap → risky; anything else → unknown.
 * @throws ProviderError on a timeout, a non-2xx answer, or a body without such a field.
 */
export function createHttpVerifier(
  options: Config['verifier'],
  env: Record<string, string | undefined> = process.env,
): Verifier {
  if (!options.httpUrl) throw new Error('verifier.httpUrl must be set when providers.verifier is "http"');
  return {
    name: 'http',
    async verify(email) {
      const apiKey = env[options.httpApiKeyEnv];
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      };
      const byGet = options.httpUrl.includes('{email}');
      let response: Response;
      try {
        response = await fetch(
          byGet ? options.httpUrl.replace('{email}', encodeURIComponent(email)) : options.httpUrl,
          {
            method: byGet ? 'GET' : 'POST',
            headers: byGet ? headers : { ...headers, 'content-type': 'application/json' },
            body: byGet ? undefined : JSON.stringify({ email }),
            signal: AbortSignal.timeout(options.timeoutMs),
          },
        );
      } catch (error) {
        throw new ProviderError(
          (error as Error).name === 'TimeoutError'
            ? `the verifier did not answer within ${options.timeoutMs} ms`
            : 'the verifier could not be reached',
        );
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new ProviderError(`the verifier answered HTTP ${response.status}`);
      }
      const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
      const data =
        body && typeof body.data === 'object' && body.data !== null ? (body.data as Record<string, unknown>) : {};
      const word = [body?.status, body?.result, data.status, data.result].find(
        (v): v is string => typeof v === 'string',
      );
      if (word === undefined) throw new ProviderError('the verifier answer has no status or result field');
      return { status: mapServiceResult(word), reason: `verification service: ${word.slice(0, 60)}` };
    },
  };
}
