/**
 * The runner recipes of docs/testing.md (issue #29 item 5), run as they stand against the packed
 * tarballs installed in an empty project outside the checkout: node:test with a server per file,
 * Vitest and Jest each with one server for the run and with a server per worker. Each recipe
 * runs with a TMPDIR of its own, where startFixture() makes its servers' directories: once the
 * runner exits, that directory is empty and no process works in it (every server was stopped).
 * Run after `npm run build && npm run pack` (npm run test:dist).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { docRecipes, installedProject, processesUnder, type Project, writeFiles } from './project.js';

/** What each runner prints when every test passed: test files and tests. */
const PASSED: Record<string, (output: string) => boolean> = {
  'node:test': (out) => /^# pass 4$/m.test(out) && /^# fail 0$/m.test(out),
  Vitest: (out) => /Tests {2}\d+ passed/.test(out) && !/failed/.test(out),
  Jest: (out) => /^Tests: +\d+ passed, \d+ total$/m.test(out),
};

describe('docs/testing.md recipes, against the installed package', () => {
  let project: Project;
  before(() => {
    project = installedProject({ runners: true });
  });
  after(() => project?.remove());

  const recipes = docRecipes('docs/testing.md');
  it('has the five recipes', () => {
    assert.deepEqual(
      recipes.map((r) => r.heading),
      [
        'node:test',
        'Vitest: one server for the run',
        'Vitest: a server per worker',
        'Jest: one server for the run',
        'Jest: a server per worker',
      ],
    );
  });

  recipes.forEach((recipe, i) => {
    it(`${recipe.heading}: ${recipe.run.trim()}`, async () => {
      const dir = join(project.dir, `recipe-${i}`);
      const tmp = join(project.dir, `tmp-${i}`);
      mkdirSync(tmp, { recursive: true });
      writeFiles(dir, recipe.files);
      const run = await project.sh(recipe.run, { cwd: dir, env: { TMPDIR: tmp, CI: 'true', NO_COLOR: '1' } });
      const runner = Object.keys(PASSED).find((name) => recipe.heading.startsWith(name))!;
      assert.equal(run.status, 0, run.output);
      assert.ok(PASSED[runner]!(run.output), `${runner} did not report every test passed:\n${run.output}`);
      assert.deepEqual(processesUnder(tmp), [], 'a server still runs');
      // Jest keeps its cache there too (jest_0).
      const left = readdirSync(tmp).filter((name) => name.startsWith('outreach-api-fixture-'));
      assert.deepEqual(left, [], 'a fixture directory was left behind');
    });
  });
});
