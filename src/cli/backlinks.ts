/**
 * `outreach-api backlinks check [--project ID] [--site ID] [--backlink ID]... [--all]`
 * (decisions.md §13): one pass of the backlink monitor in the foreground, over the due backlinks
 * in scope (`--all`: every non-closed one in scope). Progress goes to stderr — a progress bar on
 * a terminal, one line per check otherwise — and the summary table to stdout: how many were
 * checked, how many ended in each status, and the time taken.
 *
 * Exit code 0 when the pass ran (checks that ended in `error` included), 1 when it could not run
 * (no database, an unknown id, an invalid configuration) or was interrupted (SIGINT/SIGTERM: the
 * fetches in hand finish and are recorded, the other backlinks stay due).
 */
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import type { Writable } from 'node:stream';
import { systemClock } from '../domain/clock.js';
import { type Cli, openDatabase } from './context.js';
import { printer } from './io.js';
import { migrate } from '../db/migrate.js';
import { createLogger } from '../logger.js';
import { unknownScopeIds, type BacklinkScope } from '../repos/backlink-checks.js';
import { countPass, runMonitorPass, type PassSummary } from '../workers/monitor.js';

interface CheckOptions {
  project?: string;
  site?: string;
  backlink?: string[];
  all?: boolean;
}

const STATUSES = ['live', 'changed', 'lost', 'blocked', 'error'] as const;

/** The summary table: one row per count, then the time taken. */
export function summaryLines(summary: PassSummary): string[] {
  const rows: [string, string][] = [
    ['checked', String(summary.checked)],
    ...STATUSES.map((status): [string, string] => [status, String(summary[status])]),
    ['time', `${(summary.ms / 1000).toFixed(2)} s`],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`);
}

/**
 * Registers `backlinks check` on `program`: the summary goes to the CLI's stdout, progress and
 * log lines to its stderr.
 */
export function registerBacklinksCommand(program: Command, cli: Cli): void {
  const { io, fail } = cli;
  const backlinks = program.command('backlinks').description('the tracked backlinks');
  backlinks
    .command('check')
    .description(
      'check the due backlinks now (fetch each source page, look for the link, record a check); see docs/monitor.md',
    )
    .option('--project <id>', 'only backlinks of this project')
    .option('--site <id>', 'only backlinks of this site')
    .option('--backlink <id>', 'only this backlink (repeat for more)', (id: string, ids: string[] = []) => [...ids, id])
    .option('--all', 'every non-closed backlink in scope, not only the due ones')
    .action(async (options: CheckOptions, command: Command) => {
      const config = cli.configOf(command);
      const store = await openDatabase(config, cli.print, false); // no database there: refused, none created
      const controller = new AbortController();
      const interrupt = () => controller.abort();
      process.once('SIGINT', interrupt);
      process.once('SIGTERM', interrupt);
      try {
        await migrate(store);
        const scope: BacklinkScope = {
          projectId: options.project,
          siteId: options.site,
          backlinkIds: options.backlink,
        };
        const unknown = await unknownScopeIds(store.db, scope);
        if (unknown.length) throw fail(`not found: ${unknown.join(', ')}`);
        // Log lines (a failed write) go to stderr with the progress, so stdout holds only the table.
        const deps = {
          store,
          clock: systemClock,
          config,
          logger: createLogger({ ...config.log, destination: io.stderr }),
        };
        const total = await countPass(deps, { scope, all: options.all });
        const progress = io.stderr.isTTY ? barProgress(io.stderr, total) : lineProgress(io.stderr, total);
        const summary = await runMonitorPass(deps, {
          scope,
          all: options.all,
          signal: controller.signal,
          onCheck: progress.onCheck,
        });
        progress.done();
        for (const line of summaryLines(summary)) cli.print(line);
        if (controller.signal.aborted)
          throw fail('interrupted: the checks above are recorded; the other backlinks stay due');
      } finally {
        process.off('SIGINT', interrupt);
        process.off('SIGTERM', interrupt);
        await store.close();
      }
    });
}

interface Progress {
  onCheck(check: { backlinkId: string; status: string; error: string | null }): void;
  done(): void;
}

/** A cli-progress bar on stderr with the running counts. */
function barProgress(stream: Writable, total: number): Progress {
  const counts: Record<string, number> = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  const bar = new SingleBar({
    stream,
    format:
      'checking {bar} {value}/{total} | live {live} changed {changed} lost {lost} blocked {blocked} error {error} | {duration_formatted}',
    hideCursor: true,
  });
  bar.start(total, 0, counts);
  let done = 0;
  return {
    onCheck({ status }) {
      counts[status] = (counts[status] ?? 0) + 1;
      done++;
      if (done > total) bar.setTotal(done);
      bar.update(done, counts);
    },
    done: () => bar.stop(),
  };
}

/** One line per recorded check on stderr, e.g. `[3/40] bl_1 lost`, for logs and pipes. */
function lineProgress(stream: Writable, total: number): Progress {
  let done = 0;
  const print = printer(stream);
  return {
    onCheck({ backlinkId, status, error }) {
      done++;
      print(`[${done}/${Math.max(done, total)}] ${backlinkId} ${status}${error ? `: ${error}` : ''}`);
    },
    done() {},
  };
}
