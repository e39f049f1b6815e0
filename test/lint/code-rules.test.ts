/**
 * The rules of test/lint/code-rules.ts (run by `npm run lint`): each check finds what it is for,
 * and `src/` keeps the dialect rule (issue #31 item 3: no file outside src/db/ asks which database
 * a store is).
 */
import assert from 'node:assert/strict';
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

  it('holds in src/: no file outside src/db/ asks which database a store is', () => {
    const found = breachesOf(process.cwd()).filter((b) => !/lines, over/.test(b.message));
    assert.deepEqual(found, []);
  });
});
