/**
 * `outreach-api inbox sync [--connection ID]...` (decisions.md §17): one pass of the inbox sync
 * in the foreground, over every connection of `inbox.connections` (or the ones named). Progress
 * goes to stderr — a progress bar per connection on a terminal, one line per connection
 * otherwise — and the summary table to stdout: per connection, its status and how many messages
 * were fetched, matched, unmatched, duplicates, bounces, skipped and errors.
 *
 * It runs whatever `inbox.enabled` says, and takes each connection's lease like `serve` does, so
 * it never syncs a connection a running server is syncing (that one shows `busy`).
 *
 * Exit code 0 when the pass ran (connections that failed to log in included: their row says
 * why), 1 when it could not run (no database, no `inbox.connections`, a connection id that is not
 * configured, an invalid configuration) or was interrupted (SIGINT/SIGTERM: the batch in hand is
 * recorded).
 */
import { MultiBar, type SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import type { Writable } from 'node:stream';
import { systemClock } from '../domain/clock.js';
import { type Cli, openDatabase } from './context.js';
import { applySteadyMemorySettings, applyMemorySettings } from './memory.js';
import { printer } from './io.js';
import { migrate } from '../db/migrate.js';
import { createLogger } from '../logger.js';
import { createProviders, type Providers } from '../providers/index.js';
import { runInboxPass } from '../workers/inbox/pass.js';
import type { ConnectionSummary, InboxPassOptions } from '../workers/inbox/types.js';

const COLUMNS = ['fetched', 'matched', 'unmatched', 'duplicates', 'bounces', 'skipped', 'errors'] as const;

/** The summary table: a header, then one row per connection, then the error of each that failed. */
export function summaryLines(summaries: readonly ConnectionSummary[]): string[] {
  const header = ['connection', 'status', ...COLUMNS];
  const rows = summaries.map((s) => [s.connectionId, s.status, ...COLUMNS.map((c) => String(s[c]))]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    line(header),
    ...rows.map(line),
    ...summaries.filter((s) => s.error).map((s) => `${s.connectionId}: ${s.error}`),
  ];
}

/**
 * Registers `inbox sync` on `program`: the summary goes to the CLI's stdout, progress and log
 * lines to its stderr; passwords are read from its environment.
 */
export function registerInboxCommand(program: Command, cli: Cli): void {
  const { io, fail } = cli;
  const inbox = program.command('inbox').description('the inbox sync: replies read over IMAP');
  inbox
    .command('sync')
    .description('read the configured mailboxes once and record the replies in their threads; see docs/inbox.md')
    .option('--connection <id>', 'only this email connection (repeat for more)', (id: string, ids: string[] = []) => [
      ...ids,
      id,
    ])
    .action(async (options: { connection?: string[] }, command: Command) => {
      const config = cli.configOf(command);
      applyMemorySettings(config);
      applySteadyMemorySettings(config);
      const configured = Object.keys(config.inbox.connections);
      if (configured.length === 0) throw fail('inbox.connections is empty: no mailbox to read');
      const unknown = (options.connection ?? []).filter((id) => !configured.includes(id));
      if (unknown.length) throw fail(`not in inbox.connections: ${unknown.join(', ')}`);
      const store = await openDatabase(config, cli.print, false); // no database there: refused, none created
      const logger = createLogger({ ...config.log, destination: io.stderr });
      let providers: Providers | undefined;
      const controller = new AbortController();
      const interrupt = () => controller.abort();
      process.once('SIGINT', interrupt);
      process.once('SIGTERM', interrupt);
      const ids = options.connection ? [...new Set(options.connection)] : configured;
      const progress = io.stderr.isTTY ? barProgress(io.stderr) : lineProgress(io.stderr);
      try {
        providers = createProviders(config, logger, io.env);
        await migrate(store);
        const summaries = await runInboxPass(
          { store, clock: systemClock, config, logger, classifier: providers.replyClassifier, env: io.env },
          { connectionIds: ids, signal: controller.signal, onStart: progress.onStart, onMessage: progress.onMessage },
        );
        progress.done(summaries);
        for (const line of summaryLines(summaries)) cli.print(line);
        if (controller.signal.aborted)
          throw fail('interrupted: the messages above are recorded; the rest are read next time');
      } finally {
        process.off('SIGINT', interrupt);
        process.off('SIGTERM', interrupt);
        providers?.mail.close();
        await store.close();
      }
    });
}

interface Progress {
  onStart: NonNullable<InboxPassOptions['onStart']>;
  onMessage: NonNullable<InboxPassOptions['onMessage']>;
  done(summaries: readonly ConnectionSummary[]): void;
}

/** One cli-progress bar per connection on stderr, with its running counts. */
function barProgress(stream: Writable): Progress {
  const bars = new MultiBar({
    stream,
    format:
      '{connection} {bar} {value}/{total} | matched {matched} unmatched {unmatched} bounces {bounces} | {duration_formatted}',
    hideCursor: true,
  });
  const byConnection = new Map<string, { bar: SingleBar; counts: Record<string, number>; done: number }>();
  return {
    onStart(connection, total) {
      const counts = { connection, matched: 0, unmatched: 0, bounces: 0 } as Record<string, number | string>;
      byConnection.set(connection, {
        bar: bars.create(total, 0, counts),
        counts: counts as Record<string, number>,
        done: 0,
      });
    },
    onMessage(connection, result) {
      const state = byConnection.get(connection);
      if (!state) return;
      const key = result === 'bounce' ? 'bounces' : result;
      if (key in state.counts) state.counts[key] = (state.counts[key] ?? 0) + 1;
      state.done++;
      state.bar.update(state.done, state.counts);
    },
    done: () => bars.stop(),
  };
}

/** One line per connection on stderr once it is done, e.g. `conn_1: 40 fetched, 12 matched`, for logs and pipes. */
function lineProgress(stream: Writable): Progress {
  return {
    onStart() {},
    onMessage() {},
    done(summaries) {
      const print = printer(stream);
      for (const s of summaries)
        print(
          `${s.connectionId}: ${s.status}, ${s.fetched} fetched, ${s.matched} matched, ${s.bounces} bounces in ${(s.ms / 1000).toFixed(2)} s`,
        );
    },
  };
}
