/**
 * `outreach-api backup FILE` (decisions.md §15): a consistent copy of the database while the
 * server runs and writes; prints the copy's size and the time it took. Restore by starting the
 * server on the copy (`serve --db FILE`).
 */
import type { Command } from 'commander';
import { storeLocation, type Config } from '../config.js';
import { type CliIo, printer } from './io.js';
import { prepareDatabaseFile } from '../db/database-file.js';
import { openStoreOf } from '../server.js';

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

/**
 * Registers the command on `program`.
 * @param configOf the CLI's configuration of a command (global `--db`, `--config`).
 * @param fail turns a message into the CLI's one-line failure (exit code 1).
 * @param io where the report goes (the CLI's stdout).
 */
export function registerBackupCommand(
  program: Command,
  configOf: (command: Command) => Config,
  fail: (message: string) => Error,
  io: Pick<CliIo, 'stdout'>,
): void {
  program
    .command('backup')
    .description(
      'write a consistent copy of the database to FILE, also while the server runs; restore by serving the copy',
    )
    .argument('<file>', 'the copy to write (must not exist)')
    .action(async (file: string, _options: unknown, command: Command) => {
      const config = configOf(command);
      const location = storeLocation(config);
      prepareDatabaseFile(location, { create: false }); // no database there: refused, none created
      // A store that cannot be copied so (PostgreSQL) refuses, naming the tool that can.
      const store = await openStoreOf(config);
      try {
        const { bytes, durationMs } = await store.backupTo(file);
        printer(io.stdout)(
          `backed up ${store.location} to ${file}: ${mib(bytes)} (${bytes} bytes) in ${(durationMs / 1000).toFixed(2)} s`,
        );
      } catch (error) {
        throw fail((error as Error).message);
      } finally {
        await store.close();
      }
    });
}
