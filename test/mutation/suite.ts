/**
 * The test files named on the command line, run in this one process (Stryker's command for a
 * module group, see ./run.ts): a process per file, as `node --test` starts, would cost a Node and
 * tsx start-up per file for every mutant. Each file runs inside a suite named for its path, so its
 * top-level hooks stay its own (as in test/helpers/shards.ts). Fails (exit code 1) when any test fails.
 *
 *   node --import tsx test/mutation/suite.ts test/limiter.test.ts test/http/pipeline.test.ts
 */
import { resolve } from 'node:path';
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';

for (const file of process.argv.slice(2))
  describe(file, async () => {
    await import(pathToFileURL(resolve(file)).href);
  });
