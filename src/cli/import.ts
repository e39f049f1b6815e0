/**
 * `outreach-api import FILE` (decisions.md §12): an import document loaded into the database, all
 * or nothing (docs/import-format.md), creating the database when missing.
 */
import type { Command } from 'commander';
import { type Cli, withStore } from './context.js';

/** Registers `import` on `program`. */
export function registerImportCommand(program: Command, cli: Cli): void {
  const { print } = cli;
  program
    .command('import')
    .description('import a JSON document (see docs/import-format.md); all or nothing')
    .argument('<file>', 'the import document')
    .action(async (file: string, _options: unknown, command: Command) => {
      const config = cli.configOf(command);
      const { importFile } = await import('../import/index.js');
      await withStore(
        config,
        async (store) => {
          const summary = await importFile(store, file);
          print(
            `imported ${file}: ${
              Object.entries(summary.counts)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ') || 'nothing'
            }`,
          );
        },
        { create: true, print },
      );
    });
}
