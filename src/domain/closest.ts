/**
 * "Did you mean …?" for names typed by hand (configuration keys, environment variables, import
 * fields): the known name closest to a mistyped one, by edit distance.
 */

/** Longest prefix of a name compared, characters: a name longer than any known one gains nothing. */
const MAX_COMPARED = 128;

/**
 * The optimal-string-alignment distance between `a` and `b`: the fewest insertions, deletions,
 * substitutions and swaps of two adjacent characters that turn one into the other (`PROT` →
 * `PORT` is 1). Time and memory in the product of the lengths, each cut at 128 characters.
 */
export function editDistance(a: string, b: string): number {
  const s = a.slice(0, MAX_COMPARED);
  const t = b.slice(0, MAX_COMPARED);
  // Three rows of the dynamic-programming table: two back (for swaps), one back, and this one.
  let before = new Array<number>(t.length + 1).fill(0);
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  let current = new Array<number>(t.length + 1).fill(0);
  for (let i = 1; i <= s.length; i++) {
    current[0] = i;
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current[j] = best;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[t.length]!;
}

/**
 * The candidate closest to `name` (compared without regard to case; the first of equals), or
 * undefined when there is none within `maxDistance` edits.
 * @param maxDistance default: no limit, so some candidate is always named when there is one.
 */
export function closestName(
  name: string,
  candidates: Iterable<string>,
  maxDistance = Number.POSITIVE_INFINITY,
): string | undefined {
  const wanted = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance < bestDistance && distance <= maxDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Whether `candidate` plausibly is what `name` meant to be: within a third of its length in
 * edits (at least 2), so `siteid` resembles `siteId` and `planExpireAt` `planExpiresAt`, while
 * `colour` does not resemble `url`.
 */
export const resemblanceLimit = (name: string): number =>
  Math.max(2, Math.floor(Math.min(name.length, MAX_COMPARED) / 3));
