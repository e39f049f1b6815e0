/**
 * `outreach-api tokens create|list|revoke` (decisions.md §12, §2): API tokens, whose value is
 * printed once and never stored.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { isoAt, systemClock } from '../domain/clock.js';
import { SCOPES } from '../domain/scopes.js';
import { TOKEN_NAME_MAX, tokenNameProblem } from '../domain/tokens.js';
import { createToken, listTokens, revokeToken, tokenState } from '../repos/tokens.js';
import { type Cli, now, printTable, withStore } from './context.js';
import { parseDuration } from './duration.js';
import { printer } from './io.js';

function parseScopes(value: string): string[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0) throw new InvalidArgumentError('give at least one scope');
  if (unknown.length)
    throw new InvalidArgumentError(`unknown scope(s) ${unknown.join(', ')}; known: ${SCOPES.join(', ')}, or "all"`);
  return scopes;
}

/** Registers `tokens` and its subcommands on `program`. */
export function registerTokensCommands(program: Command, cli: Cli): void {
  const { io, print } = cli;
  const tokens = program.command('tokens').description('manage API tokens');
  tokens
    .command('create')
    .description('create a token; its value is printed once and never stored')
    .requiredOption('--account <id>', 'account id')
    .requiredOption(
      '--name <name>',
      `a name to recognise the token by (1–${TOKEN_NAME_MAX} characters)`,
      (v: string) => {
        const problem = tokenNameProblem(v);
        if (problem) throw new InvalidArgumentError(problem);
        return v;
      },
    )
    .requiredOption('--scopes <list>', `comma-separated scopes, or "all" (${SCOPES.join(', ')})`, (v: string) =>
      v === 'all' ? [...SCOPES] : parseScopes(v),
    )
    .addOption(
      new Option('--expires-in <duration>', 'lifetime such as 30d, 12h, 2w (default: never)').argParser((v: string) => {
        try {
          return parseDuration(v);
        } catch (error) {
          throw new InvalidArgumentError((error as Error).message);
        }
      }),
    )
    .action(
      async (options: { account: string; name: string; scopes: string[]; expiresIn?: number }, command: Command) => {
        await withStore(cli.configOf(command), async (store) => {
          const nowMs = systemClock.now();
          const { row, token } = await createToken(
            store.db,
            {
              accountId: options.account,
              name: options.name,
              scopes: options.scopes,
              expiresAt: options.expiresIn ? isoAt(nowMs + options.expiresIn) : null,
            },
            isoAt(nowMs),
          );
          print(token);
          printer(io.stderr)(
            `token ${row.id} created for account ${row.account_id}; store it now, it is not shown again`,
          );
        });
      },
    );
  tokens
    .command('list')
    .description('list tokens (never their values)')
    .option('--account <id>', 'only this account')
    .action(async (options: { account?: string }, command: Command) => {
      await withStore(cli.configOf(command), async (store) => {
        const at = now();
        printTable(
          print,
          (await listTokens(store.db, options.account)).map((t) => ({
            id: t.id,
            account: t.account_id,
            name: t.name,
            scopes: (JSON.parse(t.scopes) as string[]).join(','),
            token: `${t.token_prefix}…${t.last_four}`,
            createdAt: t.created_at,
            expiresAt: t.expires_at,
            lastUsedAt: t.last_used_at,
            state: tokenState(t, at),
          })),
        );
      });
    });
  tokens
    .command('revoke')
    .description('revoke a token; effective on its next request')
    .argument('<id>', 'token id (see tokens list)')
    .action(async (id: string, _options: unknown, command: Command) => {
      await withStore(cli.configOf(command), async (store) => {
        if (!(await revokeToken(store.db, id, now()))) throw cli.fail(`no active token with id ${id}`);
        print(`revoked ${id}`);
      });
    });
}
