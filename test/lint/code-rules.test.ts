/**
 * The rules of test/lint/code-rules.ts (run by `npm run lint`): each check finds what it is for,
 * and `src/` keeps the dialect rule (issue #31 item 3: no file outside src/db/ asks which database
 * a store is).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { breachesOf, dialectBreaches, MAX_FUNCTION_LINES, sizeBreaches } from './code-rules.js';

const lines = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');

describe('the rules of src/', () => {
  it('finds a function over 120 lines, named as a reader searches for it, and a file over 500', () => {
    const text = `export function long() {\n${lines(MAX_FUNCTION_LINES - 2)}\n}\nconst short = () => 1;\nprogram.action(async () => {\n${lines(MAX_FUNCTION_LINES)}\n});\n`;
    assert.deepEqual(
      sizeBreaches('src/x.ts', text).map((b) => [b.line, b.message]),
      [[MAX_FUNCTION_LINES + 2, 'the function given to .action() is 122 lines, over the 120 a function may have']],
      'a function of 120 lines passes',
    );
    const file = `${lines(501)}\n`;
    assert.deepEqual(
      sizeBreaches('src/y.ts', file).map((b) => b.message),
      ['501 lines, over the 500 a file may have'],
    );
    assert.deepEqual(sizeBreaches('src/z.ts', `${lines(500)}\n`), []);
  });

  it('finds every way of asking which database a store is', () => {
    const text = [
      "import { isPostgresUrl } from '../db/location.js';",
      "import type { SqliteStore } from '../db/store.js';",
      "if (store.dialect === 'postgres') run();",
      'const d = dialectOf(db);',
      'if (store.canSnapshot && store.sharedByInstances) run();',
    ].join('\n');
    assert.deepEqual(
      dialectBreaches('src/cli/x.ts', text).map((b) => b.line),
      [1, 2, 3, 4],
    );
  });

  it('leaves out what the allow-list names, and finds an entry of it that matches nothing', () => {
    const root = mkdtempSync(join(tmpdir(), 'code-rules-'));
    try {
      mkdirSync(join(root, 'src'));
      writeFileSync(join(root, 'src/a.ts'), `export function long() {\n${lines(MAX_FUNCTION_LINES)}\n}\n`);
      writeFileSync(join(root, 'src/b.ts'), `${lines(501)}\n`);
      const found = (allowed: Record<string, string>) => breachesOf(root, allowed).map((b) => `${b.path} ${b.message}`);
      assert.deepEqual(found({}), [
        'src/a.ts long is 122 lines, over the 120 a function may have',
        'src/b.ts 501 lines, over the 500 a file may have',
      ]);
      assert.deepEqual(found({ 'src/a.ts long': 'why', 'src/b.ts': 'why' }), []);
      assert.deepEqual(found({ 'src/a.ts long': 'why', 'src/b.ts': 'why', 'src/c.ts': 'why' }), [
        'test/lint/code-rules.ts OVER_SIZE names src/c.ts, which is no longer over a size: take it off the list',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('holds in src/: no file outside src/db/ asks which database a store is, and nothing is over a size but OVER_SIZE', () => {
    assert.deepEqual(breachesOf(process.cwd()), []);
  });
});
