/**
 * `outreach-api backup FILE` (decisions.md §15): a consistent copy of the database while the
 * server runs and writes; prints the copy's size and the time it took. Restore by starting the
 * server on the copy (`serve --db FILE`).
 */
import type { Command } from 'commander';
import { type Cli, openDatabase } from './context.js';

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

/** Registers `backup` on `program`: the report goes to the CLI's stdout. */
export function registerBackupCommand(program: Command, cli: Cli): void {
  program
    .command('backup')
    .description(
      'write a consistent copy of the database to FILE, also while the server runs; restore by serving the copy',
    )
    .argument('<file>', 'the copy to write (must not exist)')
    .action(async (file: string, _options: unknown, command: Command) => {
      // No database there: refused, none created.
      const store = await openDatabase(cli.configOf(command), cli.print, false);
      try {
        // A store that cannot be copied so (PostgreSQL) refuses, naming the tool that can.
        const { bytes, durationMs } = await store.backupTo(file);
        cli.print(
          `backed up ${store.location} to ${file}: ${mib(bytes)} (${bytes} bytes) in ${(durationMs / 1000).toFixed(2)} s`,
        );
      } catch (error) {
        throw cli.fail((error as Error).message);
      } finally {
        await store.close();
      }
    });
}
