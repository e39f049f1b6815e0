/**
 * The `outreach-api` command line (decisions.md §12): serve, migrate, import, seed, accounts,
 * tokens, backup, backlinks, inbox and wait, one file each (its `registerXCommand`). Global
 * `--db PATH` (also OUTREACH_API_DB) and `--config PATH`. Exit codes: 0 success, 1 operational
 * failure (bad import, token refused, cannot open database), 2 bad arguments.
 */
import { Command, CommanderError } from 'commander';
import { withoutPasswords } from '../db/connection.js';
import { VERSION } from '../version.js';
import { registerAccountsCommands } from './accounts.js';
import { registerBacklinksCommand } from './backlinks.js';
import { registerBackupCommand } from './backup.js';
import { cliOf } from './context.js';
import { HELP_CONFIGURATION, envOf } from './help.js';
import { registerImportCommand } from './import.js';
import { registerInboxCommand } from './inbox.js';
import { type CliIo, printer, processIo } from './io.js';
import { registerMigrateCommand } from './migrate.js';
import { registerSeedCommand } from './seed.js';
import { registerServeCommand } from './serve.js';
import { registerTokensCommands } from './tokens.js';
import { registerWaitCommand } from './wait.js';

/** The program, writing to `io` (default: the process's stdout and stderr, reading its environment). */
export function buildCli(io: CliIo = processIo()): Command {
  const program = new Command('outreach-api')
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .description('Self-hosted Scoped Outreach, Prospecting and Backlink REST API v1')
    .version(VERSION, '-v, --version')
    .option(
      '--db <path|url>',
      `SQLite database file, or a postgres:// URL (password from the URL or PGPASSWORD) (default ./data/outreach.db; env ${envOf('db.path')})`,
    )
    .option('--config <path>', 'configuration file (default ./config.json when present)')
    .configureHelp(HELP_CONFIGURATION)
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();

  const cli = cliOf(io);
  for (const register of [
    registerServeCommand,
    registerMigrateCommand,
    registerImportCommand,
    registerSeedCommand,
    registerAccountsCommands,
    registerTokensCommands,
    registerBackupCommand,
    registerBacklinksCommand,
    registerInboxCommand,
    registerWaitCommand,
  ])
    register(program, cli);

  for (const command of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)])
    command.exitOverride();
  return program;
}

/**
 * Runs the CLI with `argv` (without node and script), writing to `io` (default: the process's
 * stdout and stderr, reading its environment). Resolves to the exit code.
 */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  try {
    await buildCli(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    // Anything else (a CliError, a bad configuration, token or import, the database): one line, no stack.
    // A message never carries a database password, whatever quoted the location (decisions.md §16).
    printer(io.stderr)(`outreach-api: ${withoutPasswords((error as Error).message ?? String(error))}`);
    return 1;
  }
}
