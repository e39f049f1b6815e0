/**
 * Mutation testing of the core rules (`npm run test:mutation [group…]`): StrykerJS with its
 * `command` runner (node:test has no Stryker runner of its own), one run per module group below,
 * each with only the unit test files that cover that group, so a run takes minutes.
 *
 * A group's run fails when any of its files scores under `BREAK` percent (Stryker's own
 * `thresholds.break` applies to the whole run; this checks each file). Prints, per file: the
 * mutants, the score and the survivors; per group: the run time. Reports go to
 * `reports/mutation/<group>.{json,html}`, sandboxes to `.stryker-tmp/` (both ignored by git).
 * See docs/development.md "Mutation testing" for when to run it and the survivors kept.
 */
import { relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Stryker } from '@stryker-mutator/core';

type Options = NonNullable<ConstructorParameters<typeof Stryker>[0]>;
type MutantResult = Awaited<ReturnType<Stryker['runMutationTest']>>[number];

/** The minimum mutation score of every mutated file, percent. */
const BREAK = 90;

interface Group {
  name: string;
  /** The files mutated (globs). */
  mutate: string[];
  /** The unit test files that cover them: run for every mutant. */
  tests: string[];
}

const GROUPS: Group[] = [
  { name: 'tokens', mutate: ['src/domain/tokens.ts'], tests: ['test/tokens.test.ts'] },
  { name: 'limiter-memory', mutate: ['src/limiter/memory.ts'], tests: ['test/limiter/memory.test.ts'] },
  {
    name: 'limiter-redis',
    mutate: ['src/limiter/redis.ts', 'src/limiter/index.ts', 'src/limiter/rate-limiter.ts'],
    tests: ['test/limiter/redis.test.ts', 'test/limiter/index.test.ts', 'test/limiter/server.test.ts'],
  },
  { name: 'rate-limit', mutate: ['src/http/middleware/rate-limit.ts'], tests: ['test/http/pipeline.test.ts'] },
  {
    name: 'auth',
    mutate: ['src/http/middleware/auth.ts', 'src/http/middleware/scope.ts'],
    tests: ['test/http/pipeline.test.ts', 'test/writes/rules.test.ts', 'test/fixture/reset.test.ts'],
  },
  { name: 'idempotency', mutate: ['src/http/middleware/idempotency.ts'], tests: ['test/writes/idempotency.test.ts'] },
  {
    name: 'workers',
    mutate: ['src/workers/lease.ts', 'src/workers/outbox.ts'],
    tests: [
      'test/writes/lease.test.ts',
      'test/writes/outbox.test.ts',
      'test/writes/outbox-lease.test.ts',
      'test/writes/replies.test.ts',
      'test/writes/outbox-stop.test.ts',
    ],
  },
];

/** Stryker's options for `group`; a test file's servers listen on port 0, so concurrent runners never share one. */
function optionsOf(group: Group, concurrency: number): Options {
  return {
    testRunner: 'command',
    // CI: a test that finds PostgreSQL or Redis missing fails instead of skipping (test/helpers/services.ts).
    commandRunner: { command: `CI=true node --import tsx test/mutation/suite.ts ${group.tests.join(' ')}` },
    mutate: group.mutate,
    concurrency,
    coverageAnalysis: 'off',
    thresholds: { high: 95, low: BREAK, break: BREAK },
    reporters: ['clear-text', 'progress-append-only', 'json', 'html'],
    clearTextReporter: { allowColor: false, logTests: false },
    jsonReporter: { fileName: `reports/mutation/${group.name}.json` },
    htmlReporter: { fileName: `reports/mutation/${group.name}.html` },
    tempDirName: '.stryker-tmp',
    // What the tests never read: built output, local data, other reports.
    ignorePatterns: ['dist', 'data', 'reports', '.bench', '.scratch', '*.db', '*.db-wal', '*.db-shm'],
    // A mutant's run may take twice the clean run plus 20 s before it is a timeout (counted as
    // detected): with 10 s, on the 2-core machine under another team's benchmark, equivalent
    // mutants of idempotency.ts timed out. A test waiting on a step a mutant never reaches fails
    // at once instead (see `reached` in test/writes/idempotency.test.ts), so few mutants wait that long.
    timeoutMS: 20_000,
    timeoutFactor: 2,
    dryRunTimeoutMinutes: 10,
    cleanTempDir: true,
    incremental: false,
  };
}

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

interface FileScore {
  file: string;
  mutants: number;
  detected: number;
  score: number;
  survivors: MutantResult[];
}

/** Per file: the mutants that count (not ignored, not invalid) and the share detected, percent. */
function scoreByFile(results: MutantResult[]): FileScore[] {
  const files = new Map<string, MutantResult[]>();
  for (const result of results) files.set(result.fileName, [...(files.get(result.fileName) ?? []), result]);
  return [...files].map(([file, mutants]) => {
    const counted = mutants.filter((m) => DETECTED.has(m.status) || UNDETECTED.has(m.status));
    const detected = counted.filter((m) => DETECTED.has(m.status)).length;
    return {
      file,
      mutants: counted.length,
      detected,
      score: counted.length === 0 ? 100 : (100 * detected) / counted.length,
      survivors: counted.filter((m) => UNDETECTED.has(m.status)),
    };
  });
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const concurrency = Number(process.env.STRYKER_CONCURRENCY ?? 1);
  const unknown = args.filter((name) => !GROUPS.some((g) => g.name === name));
  if (unknown.length) {
    console.error(`unknown group(s): ${unknown.join(', ')}; known: ${GROUPS.map((g) => g.name).join(', ')}`);
    return 2;
  }
  const chosen = args.length ? GROUPS.filter((g) => args.includes(g.name)) : GROUPS;
  const lines: string[] = [];
  let failed = false;
  for (const group of chosen) {
    const start = performance.now();
    const results = await new Stryker(optionsOf(group, concurrency)).runMutationTest();
    const seconds = (performance.now() - start) / 1000;
    for (const file of scoreByFile(results)) {
      const low = file.score < BREAK;
      failed ||= low;
      lines.push(
        `${group.name}\t${relative(process.cwd(), file.file)}\t${file.mutants} mutants\t${file.score.toFixed(1)}%\t${seconds.toFixed(0)} s${low ? `\tBELOW ${BREAK}%` : ''}`,
      );
      for (const m of file.survivors)
        lines.push(
          `  survived: ${relative(process.cwd(), file.file)}:${m.location.start.line} ${m.mutatorName} → ${m.replacement}`,
        );
    }
  }
  console.log(`\nmutation scores (break below ${BREAK}% per file)\n${lines.join('\n')}`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
