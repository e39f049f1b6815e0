/**
 * The documentation holds together (issue #21 item 5): README.md stays short enough for a
 * newcomer (at most 400 lines), and every relative link in README.md and under docs/ names a file
 * that exists and, with a `#fragment`, a heading of that file (GitHub's anchor for it). The docs
 * link nowhere outside the repository (the team's rule for docs/).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** README.md and every `*.md` under docs/, as paths relative to the repository. */
function documents(): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found.sort();
}

/** The lines of a Markdown text outside fenced code blocks, with inline code spans blanked. */
function proseLines(text: string): { line: string; number: number }[] {
  const out: { line: string; number: number }[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, index) => {
    const opener = /^\s*(```|~~~)/.exec(line);
    if (opener) {
      if (fence === null) fence = opener[1]!;
      else if (opener[1] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line: line.replace(/`[^`]*`/g, '``'), number: index + 1 });
  });
  return out;
}

/**
 * GitHub's anchors for the headings of a Markdown text: the heading's text lower-cased, without
 * inline markup and punctuation, spaces as `-`; a repeated anchor gets `-1`, `-2`, ….
 */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const opener = /^\s*(```|~~~)/.exec(line);
    if (opener) {
      if (fence === null) fence = opener[1]!;
      else if (opener[1] === fence) fence = null;
      continue;
    }
    const heading = fence === null ? /^#{1,6} +(.*?)#*\s*$/.exec(line) : null;
    if (!heading) continue;
    const base = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Every inline link `[text](target)` and reference definition `[label]: target` of a document. */
function linksOf(file: string): Link[] {
  const links: Link[] = [];
  for (const { line, number } of proseLines(readFileSync(join(ROOT, file), 'utf8'))) {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ file, line: number, target: match[1]! });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (definition) links.push({ file, line: number, target: definition[1]! });
  }
  return links;
}

/** Why a relative link does not resolve, or null when it does. */
function brokenBecause(link: Link): string | null {
  const hash = link.target.indexOf('#');
  const pathPart = hash === -1 ? link.target : link.target.slice(0, hash);
  const fragment = hash === -1 ? null : decodeURIComponent(link.target.slice(hash + 1));
  const target = pathPart === '' ? join(ROOT, link.file) : resolve(ROOT, dirname(link.file), decodeURI(pathPart));
  if (relative(ROOT, target).startsWith('..')) return 'points outside the repository';
  if (!existsSync(target)) return 'no such file';
  if (fragment === null) return null;
  if (!target.endsWith('.md')) return 'an anchor into a file that is not Markdown';
  return anchorsOf(readFileSync(target, 'utf8')).has(fragment) ? null : `no heading with the anchor #${fragment}`;
}

describe('documentation', () => {
  it('keeps README.md at most 400 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    assert.ok(lines <= 400, `README.md has ${lines} lines; move detail into docs/`);
  });

  it('resolves every relative link and anchor in README.md and docs/', () => {
    const links = documents().flatMap(linksOf);
    assert.ok(links.length > 20, `only ${links.length} links found: the extraction is broken`);
    const broken = links
      .filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link.target))
      .map((link) => ({ link, why: brokenBecause(link) }))
      .filter((entry) => entry.why !== null)
      .map(({ link, why }) => `${link.file}:${link.line}: ${link.target}: ${why}`);
    assert.deepEqual(broken, []);
  });

  it('links nowhere outside the repository', () => {
    const external = documents()
      .flatMap(linksOf)
      .filter((link) => /^[a-z][a-z0-9+.-]*:/i.test(link.target))
      .map((link) => `${link.file}:${link.line}: ${link.target}`);
    assert.deepEqual(external, []);
  });

  it('computes GitHub anchors and finds broken links (the check itself)', () => {
    const anchors = anchorsOf(
      '# Use as a test fixture\n## A TypeScript test with `fetch`\n## What changed (issue #11)\n## Logs\n## Logs\n```\n# not a heading\n```',
    );
    assert.deepEqual(
      [...anchors],
      ['use-as-a-test-fixture', 'a-typescript-test-with-fetch', 'what-changed-issue-11', 'logs', 'logs-1'],
    );
    assert.equal(brokenBecause({ file: 'README.md', line: 1, target: 'docs/nope.md' }), 'no such file');
    assert.equal(
      brokenBecause({ file: 'README.md', line: 1, target: 'docs/operating.md#nope' }),
      'no heading with the anchor #nope',
    );
    assert.equal(brokenBecause({ file: 'docs/operating.md', line: 1, target: '../README.md#the-api' }), null);
  });
});
