/**
 * How `--help` reads (decisions.md §12, issue #14 item 8): every subcommand shows the global
 * options (`--db`, `--config`) under "Global Options", and a required option says `(required)`.
 */
import { Help, type HelpConfiguration, type Option } from 'commander';
import { envVariables } from '../config.js';

const defaultDescription = Help.prototype.optionDescription;

export const HELP_CONFIGURATION: HelpConfiguration = {
  showGlobalOptions: true,
  optionDescription(option: Option): string {
    const text = defaultDescription.call(this as Help, option);
    return option.mandatory ? `${text} (required)` : text;
  },
};

/**
 * The environment variable of the configuration key at dotted `path` (src/config.ts names them).
 * @throws when no such key exists, so a renamed key cannot leave a stale name in the help.
 */
export function envOf(path: string): string {
  const found = envVariables().find((v) => v.path.join('.') === path);
  if (!found) throw new Error(`no configuration key ${path}`);
  return found.name;
}
