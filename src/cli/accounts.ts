/**
 * `outreach-api accounts create|list|password` (decisions.md §12, §18): the accounts of the
 * database, and the password an account signs in to the settings area with.
 */
import { type Command, Option } from 'commander';
import { Readable } from 'node:stream';
import { isoAt } from '../domain/clock.js';
import { PLANS } from '../domain/enums.js';
import { PASSWORD_MIN_LENGTH, hashPassword, passwordProblem } from '../domain/passwords.js';
import { otherSignInAccountWithEmailOf, setAccountPassword } from '../repos/sessions.js';
import { accountExists, createAccount, listAccounts } from '../repos/tokens.js';
import { type Cli, now, printTable, withStore } from './context.js';
import { PasswordInputError, readNewPassword } from './password.js';

/** Registers `accounts` and its subcommands on `program`. */
export function registerAccountsCommands(program: Command, cli: Cli): void {
  const { io, print } = cli;
  const accounts = program.command('accounts').description('manage accounts');
  accounts
    .command('create')
    .description('create an account')
    .requiredOption('--email <email>', 'owner email')
    .requiredOption('--name <name>', 'display name')
    .addOption(new Option('--plan <plan>', 'plan').choices(PLANS).default('pro'))
    .option('--plan-expires-at <date>', 'end of a pro plan (ISO 8601)')
    .option('--id <id>', 'account id (default: generated)')
    .action(
      async (
        options: { email: string; name: string; plan: (typeof PLANS)[number]; planExpiresAt?: string; id?: string },
        command: Command,
      ) => {
        let planExpiresAt: string | null = null;
        if (options.planExpiresAt) {
          const ms = Date.parse(options.planExpiresAt);
          if (Number.isNaN(ms)) throw cli.fail(`--plan-expires-at: not a date: ${options.planExpiresAt}`);
          planExpiresAt = isoAt(ms);
        }
        await withStore(cli.configOf(command), async (store) => {
          if (options.id && (await accountExists(store.db, options.id)))
            throw cli.fail(`account ${options.id} already exists`);
          const row = await createAccount(
            store.db,
            { id: options.id, email: options.email, name: options.name, plan: options.plan, planExpiresAt },
            now(),
          );
          print(row.id);
        });
      },
    );
  accounts
    .command('list')
    .description('list accounts')
    .action(async (_options: unknown, command: Command) => {
      await withStore(cli.configOf(command), async (store) =>
        printTable(
          print,
          (await listAccounts(store.db)).map((a) => ({
            id: a.id,
            email: a.email,
            name: a.name,
            plan: a.plan,
            planExpiresAt: a.plan_expires_at,
            createdAt: a.created_at,
          })),
        ),
      );
    });

  accounts
    .command('password')
    .description(
      `set the password an account signs in to the settings area with (/settings); at least ${PASSWORD_MIN_LENGTH} characters. ` +
        "Asked twice on the terminal without echo, or read from standard input. Ends the account's settings sessions.",
    )
    .argument('<accountId>', 'the account (see accounts list)')
    .option('--password-stdin', 'read the password from standard input (one trailing newline is dropped)')
    .action(async (accountId: string, options: { passwordStdin?: boolean }, command: Command) => {
      await withStore(cli.configOf(command), async (store) => {
        if (!(await accountExists(store.db, accountId))) throw cli.fail(`no account with id ${accountId}`);
        const other = await otherSignInAccountWithEmailOf(store.db, accountId);
        if (other)
          throw cli.fail(
            `account ${other} has the same email and a password already: two accounts that sign in with one email cannot be told apart`,
          );
        let password: string;
        try {
          password = await readNewPassword(
            io.stdin ?? Readable.from([]),
            io.stderr,
            options.passwordStdin === true,
            passwordProblem,
          );
        } catch (error) {
          if (error instanceof PasswordInputError) throw cli.fail(error.message);
          throw error;
        }
        const ended = await setAccountPassword(store.db, accountId, await hashPassword(password), now());
        print(`password set for account ${accountId}${ended ? `; ${ended} settings session(s) ended` : ''}`);
      });
    });
}
