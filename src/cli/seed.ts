/** `outreach-api seed --demo` (decisions.md §12, docs/demo.md): the demo data, creating the database when missing. */
import type { Command } from 'commander';
import { type Cli, withStore } from './context.js';

/** Registers `seed` on `program`. */
export function registerSeedCommand(program: Command, cli: Cli): void {
  const { print } = cli;
  program
    .command('seed')
    .description('load the deterministic demo dataset')
    .requiredOption('--demo', 'the demo dataset (the only one there is)')
    .action(async (_options: unknown, command: Command) => {
      const config = cli.configOf(command);
      const { seedDemo, DEMO_TOKEN } = await import('../seed/demo.js');
      await withStore(
        config,
        async (store) => {
          await seedDemo(store);
          print(`seeded the demo data into ${store.location}`);
          print(`demo token (every scope): ${DEMO_TOKEN}`);
        },
        { create: true, print },
      );
    });
}
