/**
 * The shipped types of `outreach-api/client` and `outreach-api/testing` (issue #29 item 4): a
 * strict tsc compile of test/package/example/client-example.ts in a project with the packed
 * tarballs installed. It compiles as it stands, so each `@ts-expect-error` line is an error
 * (otherwise TS2578, an unused directive); with the directives taken out, tsc reports an error on
 * each of those lines and on no other. Run after `npm run build && npm run pack` (npm run test:dist).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installedProject, type Project, ROOT } from './project.js';

const EXAMPLE = readFileSync(join(ROOT, 'test/package/example/client-example.ts'), 'utf8');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const DIRECTIVE = '// @ts-expect-error';

/** A strict project compiled as a user's would be: Node's module resolution, the package's `exports`. */
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM', 'ESNext.Disposable'],
    types: [],
    skipLibCheck: false,
  },
  files: ['example.ts'],
};

/** Lines (from 1) tsc reports an error on, with the messages. */
function compile(dir: string, source: string): { status: number | null; errors: Map<number, string> } {
  writeFileSync(join(dir, 'example.ts'), source);
  const run = spawnSync(process.execPath, [TSC, '-p', '.', '--pretty', 'false'], { cwd: dir, encoding: 'utf8' });
  const errors = new Map<number, string>();
  for (const match of run.stdout.matchAll(/^example\.ts\((\d+),\d+\): error (.*)$/gm))
    errors.set(Number(match[1]), `${errors.get(Number(match[1])) ?? ''}${match[2]}\n`);
  assert.ok(!/^(?!example\.ts).*error TS/m.test(run.stdout), `errors outside the example:\n${run.stdout}`);
  return { status: run.status, errors };
}

describe('the shipped client types, compiled by strict tsc', () => {
  let project: Project;
  before(() => {
    project = installedProject();
    writeFileSync(join(project.dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    writeFileSync(join(project.dir, 'package.json'), JSON.stringify({ name: 'user-project', type: 'module' }));
  });
  after(() => project?.remove());

  it('compile the example, each @ts-expect-error an error', () => {
    const { status, errors } = compile(project.dir, EXAMPLE);
    assert.deepEqual([...errors], []);
    assert.equal(status, 0);
  });

  it('report an error on exactly the lines the directives mark, and nowhere else', () => {
    const lines = EXAMPLE.split('\n');
    const marked = lines.flatMap((line, i) => (line.trim().startsWith(DIRECTIVE) ? [i + 2] : []));
    assert.equal(marked.length, 7);
    // Each directive replaced by an empty line, so every line keeps its number.
    const bare = lines.map((line) => (line.trim().startsWith(DIRECTIVE) ? '' : line)).join('\n');
    const { errors } = compile(project.dir, bare);
    assert.deepEqual(
      [...errors.keys()].sort((a, b) => a - b),
      marked,
    );
  });
});
