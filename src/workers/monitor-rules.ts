/**
 * The status rules of a backlink check (decisions.md §13 "Status rules", "The check record"):
 * from what a fetch saw to the check row's fields and the status it sets.
 */
import type { NewCheck, PreviousCheckRow } from '../repos/backlink-checks.js';
import type { LinkScan } from './monitor-links.js';

/** What fetching a backlink's `sourceUrl` came to. */
export type FetchOutcome =
  /** `robots.txt` disallows the URL for our token: not fetched. */
  | { kind: 'disallowed' }
  /**
   * No usable response: name not resolved, refused, reset, timeout, TLS failure, a refused
   * address, too many redirects, a body over the limit, or a robots.txt that could not be read.
   * `finalSourceUrl`/`httpStatus` are set when a response had begun (a body over the limit).
   */
  | { kind: 'failed'; reason: string; finalSourceUrl: string | null; httpStatus: number | null }
  /** A final response; `scan` is null when its body was not parsed (a status other than 2xx, not HTML). */
  | { kind: 'response'; finalSourceUrl: string; httpStatus: number; scan: LinkScan | null; headerNofollow: boolean };

/** A check's fields, without its id, source URL and time, and why it ended in `error` (logs, progress; not stored). */
export type CheckResult = Omit<NewCheck, 'id' | 'requestedSourceUrl' | 'checkedAt'> & { error: string | null };

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Applies the status rules of decisions.md §13, the first that applies:
 * 1. robots.txt disallows, or final status 401/403/451: `blocked`;
 * 2. no response, or final status 5xx or 429: `error`;
 * 3. any other final status that is not 2xx: `lost`;
 * 4. 2xx without a match: `lost`;
 * 5. 2xx with a match: `changed` when `previous` also found the link and its anchor or rel
 *    differ, else `live`.
 * `observedRel` is the link's rel tokens plus `nofollow` when the page's meta robots/googlebot or
 * its X-Robots-Tag says `nofollow` or `none`; `[]` without a match.
 */
export function checkResult(outcome: FetchOutcome, previous: PreviousCheckRow | null): CheckResult {
  const none = {
    targetFound: false,
    observedTargetUrl: null,
    observedAnchor: null,
    observedRel: [] as string[],
    error: null as string | null,
  };
  if (outcome.kind === 'disallowed') return { ...none, status: 'blocked', finalSourceUrl: null, httpStatus: null };
  if (outcome.kind === 'failed')
    return {
      ...none,
      status: 'error',
      finalSourceUrl: outcome.finalSourceUrl,
      httpStatus: outcome.httpStatus,
      error: outcome.reason,
    };
  const { finalSourceUrl, httpStatus } = outcome;
  const base = { ...none, finalSourceUrl, httpStatus };
  if (httpStatus === 401 || httpStatus === 403 || httpStatus === 451) return { ...base, status: 'blocked' };
  if (httpStatus >= 500 || httpStatus === 429) return { ...base, status: 'error', error: `HTTP ${httpStatus}` };
  const match = outcome.scan?.match;
  if (httpStatus < 200 || httpStatus > 299 || !match) return { ...base, status: 'lost' };
  const nofollow = outcome.headerNofollow || outcome.scan!.metaNofollow;
  const observedRel = nofollow && !match.rel.includes('nofollow') ? [...match.rel, 'nofollow'].sort() : match.rel;
  const changed =
    previous?.targetFound === true &&
    (previous.observedAnchor !== match.observedAnchor || !sameList([...previous.observedRel].sort(), observedRel));
  return {
    ...base,
    status: changed ? 'changed' : 'live',
    targetFound: true,
    observedTargetUrl: match.observedTargetUrl,
    observedAnchor: match.observedAnchor,
    observedRel,
  };
}
