/** `outreach-api migrate` (decisions.md §12): creates the database, or brings its schema up to date. */
import type { Command } from 'commander';
import { describeLocation } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { type Cli, openDatabase } from './context.js';

/** Registers `migrate` on `program`. */
export function registerMigrateCommand(program: Command, cli: Cli): void {
  program
    .command('migrate')
    .description('create or upgrade the database schema')
    .action(async (_options: unknown, command: Command) => {
      const store = await openDatabase(cli.configOf(command), cli.print, true);
      const shown = describeLocation(store.location);
      try {
        const applied = await migrate(store);
        cli.print(applied.length ? `applied migrations ${applied.join(', ')} to ${shown}` : `${shown} is up to date`);
      } finally {
        await store.close();
      }
    });
}
