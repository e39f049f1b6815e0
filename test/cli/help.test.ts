/**
 * CLI help (issue #14 item 8): every subcommand's `--help` shows the global `--db` and
 * `--config`, marks its required options, and `serve --help` names the environment variables of
 * its options.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildCli } from '../../src/cli/index.js';
import { cli } from '../helpers/cli.js';
const all = (command: Command): Command[] => command.commands.flatMap((c) => [c, ...all(c)]);

describe('CLI help', () => {
  it('shows the global options on every subcommand and marks required options', () => {
    const commands = all(buildCli());
    assert.ok(commands.length >= 10, `${commands.length} commands`);
    for (const command of commands) {
      const help = command.helpInformation();
      const name = command.name();
      assert.match(help, /Global Options:[\s\S]*--db <path\|url>[\s\S]*--config <path>/, `${name}: global options`);
      for (const option of command.options) {
        const line = help.slice(help.indexOf(option.flags)).split(/\n {2}-/)[0]!;
        assert.equal(
          /\(required\)/.test(line),
          Boolean(option.mandatory),
          `${name} ${option.flags}: (required) ${option.mandatory ? 'missing' : 'wrongly shown'}`,
        );
      }
    }
  });

  it('names the environment variables of serve’s options', async () => {
    const res = await cli(['serve', '--help']);
    assert.equal(res.code, 0);
    const help = res.stdout.replace(/\s+/g, ' ');
    for (const name of [
      'OUTREACH_API_SERVER_HOST',
      'OUTREACH_API_SERVER_PORT',
      'OUTREACH_API_DB',
      'OUTREACH_API_LIMITS_STORE',
      'OUTREACH_API_REDIS_URL',
    ])
      assert.ok(help.includes(name), `${name} in serve --help`);
    assert.match(help, /providers\.mail smtp needs smtp\.host \(OUTREACH_API_SMTP_HOST; no default\)/);
  });
});
