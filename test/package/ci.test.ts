/**
 * The CI jobs of docs/ci.md (issue #29 item 6), run as they stand: each YAML file is read with a
 * YAML parser; the GitHub job's `run:` steps (each in a shell of its own, `$GITHUB_ENV` carried
 * from step to step as the runner does) and the GitLab job's `script:` lines (one shell) run in
 * bash in an empty project outside the checkout, with the packed tarballs installed in place of
 * `npm ci` and the documented test file as the project's `npm test`. Run after
 * `npm run build && npm run pack` (npm run test:dist).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { INSTALL_COMMAND, installedProject, type Project, titledBlocks, writeFiles } from './project.js';

const blocks = new Map(titledBlocks('docs/ci.md').map((b) => [b.title, b.text]));
const TEST_FILE = 'test/api.test.mjs';

/** A new project holding the documented test and `"test": "node --test"`, nothing installed yet. */
function userProject(): Project {
  const project = installedProject({ install: false });
  writeFiles(project.dir, new Map([[TEST_FILE, blocks.get(TEST_FILE)!]]));
  writeFileSync(
    join(project.dir, 'package.json'),
    JSON.stringify({ name: 'user-project', private: true, scripts: { test: 'node --test' } }),
  );
  return project;
}

/** `npm ci` is the one step that differs: here the tarballs are installed by path. */
const installing = (command: string) => (command.trim() === 'npm ci' ? INSTALL_COMMAND() : command);

/** Stops the server a job left running (its ready file names it), and says whether it was running. */
function stopServer(readyFile: string): boolean {
  if (!existsSync(readyFile)) return false;
  const { pid } = JSON.parse(readFileSync(readyFile, 'utf8')) as { pid: number };
  try {
    process.kill(pid, 'SIGTERM');
    return true;
  } catch {
    return false;
  }
}

describe('docs/ci.md jobs, against the installed package', () => {
  const projects: Project[] = [];
  after(() => {
    for (const p of projects) p.remove();
  });

  it('GitHub Actions: the run: steps pass, npm test reaches the server', async () => {
    const project = userProject();
    projects.push(project);
    const workflow = parse(blocks.get('.github/workflows/test.yml')!) as {
      jobs: { test: { steps: { name?: string; run?: string; uses?: string; if?: string }[] } };
    };
    const steps = workflow.jobs.test.steps.filter((s) => s.run !== undefined);
    assert.deepEqual(
      steps.map((s) => s.name),
      ['Install', 'Start outreach-api', 'Test', "outreach-api's output"],
    );
    const runnerTemp = join(project.dir, '.runner-temp');
    mkdirSync(runnerTemp);
    const githubEnv = join(runnerTemp, 'github-env');
    writeFileSync(githubEnv, '');
    const env: Record<string, string> = { RUNNER_TEMP: runnerTemp, GITHUB_ENV: githubEnv, CI: 'true' };
    let failed = false;
    try {
      for (const step of steps) {
        if (step.if === 'failure()' && !failed) continue;
        const run = await project.sh(installing(step.run!), { env });
        assert.equal(run.status, 0, `step "${step.name}":\n${run.output}`);
        // The runner reads $GITHUB_ENV after each step: NAME=value lines.
        for (const line of readFileSync(githubEnv, 'utf8').split('\n')) {
          const at = line.indexOf('=');
          if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
        }
        if (step.name === 'Test') assert.match(run.output, /^# pass 1$/m);
      }
      assert.match(env.OUTREACH_URL ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(env.OUTREACH_TOKEN ?? '', /^oapi_demo_all_scopes_/);
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      assert.ok(stopServer(join(runnerTemp, 'outreach-api.json')), 'the server was running');
    }
  });

  it('GitLab CI: the script: lines pass in one shell, npm test reaches the server', async () => {
    const project = userProject();
    projects.push(project);
    const pipeline = parse(blocks.get('.gitlab-ci.yml')!) as { test: { script: string[]; after_script: string[] } };
    assert.equal(pipeline.test.script[0], 'npm ci');
    assert.ok(pipeline.test.script.some((line) => line.includes('--port 0') && line.includes('--ready-file')));
    try {
      const run = await project.sh(pipeline.test.script.map(installing).join('\n'), { env: { CI: 'true' } });
      assert.equal(run.status, 0, run.output);
      assert.match(run.output, /^# pass 1$/m);
      const log = await project.sh(pipeline.test.after_script.join('\n'));
      assert.equal(log.status, 0, log.output);
    } finally {
      assert.ok(stopServer(join(project.dir, 'outreach-api.json')), 'the server was running');
    }
  });
});
