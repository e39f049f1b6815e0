/**
 * Pages never turn on async_hooks' promise hooks (src/web/render-context.ts): once on, on Node 20,
 * every promise of every API request pays for them (GET /me's CPU 48 → 77 µs in `npm run bench`).
 * Each case runs in a process of its own, since the hooks, once on, stay on: after an `await`,
 * `executionAsyncId()` is 0 while they are off and a promise's id while they are on.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

const ROOT = new URL('../..', import.meta.url).pathname;

/** `executionAsyncId()` after an await, in a new process that first runs `setup` (an ES module body). */
function asyncIdAfter(setup: string): number {
  const script = `${setup}
import { executionAsyncId } from 'node:async_hooks';
const probe = async () => { await null; return executionAsyncId(); };
process.stdout.write(String(await probe()));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return Number(out);
}

describe('the settings pages and async_hooks', () => {
  it('a plain hono/jsx render turns the promise hooks on (what the module prevents)', () => {
    assert.notEqual(asyncIdAfter(`import { jsx } from 'hono/jsx/jsx-runtime'; String(jsx('p', {}));`), 0);
  });

  it('leaves them off after the settings area loads and its pages render', () => {
    const setup = `
import { Hono } from 'hono';
import { jsx } from 'hono/jsx/jsx-runtime';
import { ErrorPage, renderPage } from './src/web/layout.tsx';
import './src/web/api-access.tsx';
const app = new Hono();
app.get('/', (c) => renderPage(c, jsx(ErrorPage, { status: 404, message: 'none' })));
const page = await (await app.request('/')).text();
if (!page.includes('none')) throw new Error('the page did not render');
String(jsx('p', {}));`;
    assert.equal(asyncIdAfter(setup), 0);
  });
});
