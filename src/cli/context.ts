/**
 * What every command of the CLI is given (one file per command or group of subcommands, each a
 * `registerXCommand(program, cli)` that `./index.ts` calls): its output, its configuration, its
 * one-line failure, and how it opens the store.
 */
import type { Command } from 'commander';
import { loadConfig, storeLocation, type Config } from '../config.js';
import type { Store } from '../db/connection.js';
import { prepareDatabaseFile } from '../db/database-file.js';
import { migrate } from '../db/migrate.js';
import { isoAt, systemClock } from '../domain/clock.js';
import { escapeControlCharacters } from '../domain/text.js';
import { openStoreOf } from '../server.js';
import { type CliIo, printer } from './io.js';

/** A failure to report in one line, without a stack (exit code 1, `runCli`). */
export class CliError extends Error {}

export interface Cli {
  io: CliIo;
  /** Writes one line to `io.stdout`, escaped (`printer`). */
  print: (line?: string) => void;
  /**
   * The configuration of `command`: the config file (global `--config`), the environment, the
   * global `--db`, then `overrides` (a command's own flags, by configuration key).
   * @throws when the configuration is bad (reported in one line, exit code 1).
   */
  configOf(command: Command, overrides?: Record<string, unknown>): Config;
  /** The CLI's one-line failure: `throw cli.fail(message)`. */
  fail(message: string): Error;
}

interface GlobalOptions {
  db?: string;
  config?: string;
}

/** The `Cli` of the commands over `io`. */
export function cliOf(io: CliIo): Cli {
  return {
    io,
    print: printer(io.stdout),
    configOf(command, overrides = {}) {
      const globals = command.optsWithGlobals<GlobalOptions>();
      return loadConfig(globals.config, io.env, { db: globals.db, ...overrides });
    },
    fail: (message) => new CliError(message),
  };
}

/**
 * Opens the configured store for a command. Only `migrate`, `seed`, `import` and `serve` may
 * create the database (`create`), and say so with `print`; the others refuse a path with none
 * ("no database at PATH", `prepareDatabaseFile`, issue #21). Does not migrate.
 */
export async function openDatabase(config: Config, print: (line: string) => void, create: boolean): Promise<Store> {
  const location = storeLocation(config);
  if (prepareDatabaseFile(location, { create })) print(`created a new database at ${location}`);
  return openStoreOf(config);
}

/** Runs `fn` on the migrated store of an existing database (`open` to let it create one), then closes it. */
export async function withStore<T>(
  config: Config,
  fn: (store: Store) => T | Promise<T>,
  open: { create?: boolean; print?: (line: string) => void } = {},
): Promise<T> {
  const store = await openDatabase(config, open.print ?? (() => {}), open.create ?? false);
  try {
    await migrate(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Now, as the store writes a time. */
export const now = (): string => isoAt(systemClock.now());

/** Prints `rows` as a table with a header line, columns padded; `(none)` for no row; null as `-`. */
export function printTable(print: (line: string) => void, rows: Record<string, unknown>[]): void {
  if (rows.length === 0) {
    print('(none)');
    return;
  }
  const keys = Object.keys(rows[0]!);
  // Escaped before the widths are measured, so a stored name's escapes keep the columns straight.
  const cells = rows.map((r) =>
    keys.map((k) => (r[k] === null || r[k] === undefined ? '-' : escapeControlCharacters(String(r[k])))),
  );
  const widths = keys.map((k, i) => Math.max(k.length, ...cells.map((c) => c[i]!.length)));
  print(keys.map((k, i) => k.padEnd(widths[i]!)).join('  '));
  for (const c of cells) print(c.map((v, i) => v.padEnd(widths[i]!)).join('  '));
}
