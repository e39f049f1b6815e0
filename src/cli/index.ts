/**
 * The `outreach-api` command line (decisions.md §12): serve, migrate, import, seed, accounts and
 * tokens. Global `--db PATH` (also OUTREACH_API_DB) and `--config PATH`. Exit codes: 0 success,
 * 1 operational failure (bad import, token refused, cannot open database), 2 bad arguments.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { Readable } from 'node:stream';
import { systemClock, isoAt } from '../domain/clock.js';
import {
  READY_FILE_VARIABLE,
  loadConfig,
  requireInboxSettings,
  requireProviderSettings,
  storeLocation,
  type Config,
} from '../config.js';
import { capabilitiesAt, describeLocation, type Store, withoutPasswords } from '../db/connection.js';
import { prepareDatabaseFile } from '../db/database-file.js';
import { migrate } from '../db/migrate.js';
import { SCOPES } from '../domain/scopes.js';
import { escapeControlCharacters } from '../domain/text.js';
import { TOKEN_NAME_MAX, tokenNameProblem } from '../domain/tokens.js';
import { PASSWORD_MIN_LENGTH, hashPassword, passwordProblem, verifyPassword } from '../domain/passwords.js';
import { createLogger } from '../logger.js';
import {
  accountExists,
  cachedTokenLookup,
  createAccount,
  createToken,
  listAccounts,
  listTokens,
  revokeToken,
  tokenState,
} from '../repos/tokens.js';
import { otherSignInAccountWithEmailOf, passwordHashOf, setAccountPassword } from '../repos/sessions.js';
import { openStoreOf, startServer } from '../server.js';
import { PLANS } from '../domain/enums.js';
import { VERSION } from '../version.js';
import { registerBacklinksCommand } from './backlinks.js';
import { registerBackupCommand } from './backup.js';
import { registerInboxCommand } from './inbox.js';
import { parseDuration } from './duration.js';
import { type CliIo, printer, processIo } from './io.js';
import { HELP_CONFIGURATION, envOf } from './help.js';
import { PasswordInputError, readNewPassword } from './password.js';
import { watchParent } from './parent.js';
import { prepareReadyFile, removeReadyFile, writeReadyFile } from './ready-file.js';
import { registerWaitCommand } from './wait.js';

/** A failure to report in one line, without a stack. */
class CliError extends Error {}

interface GlobalOptions {
  db?: string;
  config?: string;
}

function configOf(command: Command, io: CliIo, overrides: Record<string, unknown> = {}): Config {
  const globals = command.optsWithGlobals<GlobalOptions>();
  return loadConfig(globals.config, io.env, { db: globals.db, ...overrides });
}

/**
 * Opens the configured store for a command. Only `migrate`, `seed`, `import` and `serve` may
 * create the database (`create`), and say so; the others refuse a path with none
 * (`prepareDatabaseFile`, issue #21).
 */
async function openDatabase(config: Config, print: (line: string) => void, create: boolean): Promise<Store> {
  const location = storeLocation(config);
  if (prepareDatabaseFile(location, { create })) print(`created a new database at ${location}`);
  return openStoreOf(config);
}

/** Runs `fn` on the migrated store of an existing database (`open` to let it create one), then closes it. */
async function withStore<T>(
  config: Config,
  fn: (store: Store) => T | Promise<T>,
  open: { create?: boolean; print?: (line: string) => void } = {},
): Promise<T> {
  const store = await openDatabase(config, open.print ?? (() => {}), open.create ?? false);
  try {
    await migrate(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

const now = () => isoAt(systemClock.now());

/** What `serve` prints on a database with no account: how the first account and token are made. */
export function firstAccountHint(path: string): string[] {
  const cli = `outreach-api --db ${path}`;
  return [
    `The database at ${path} holds no account yet. Make the first account and a token for it:`,
    `  ${cli} accounts create --email you@example.com --name "Your name"`,
    `  ${cli} tokens create --account <the id it printed> --name <a name> --scopes all`,
    `(or load your data with: ${cli} import FILE)`,
  ];
}

function table(print: (line: string) => void, rows: Record<string, unknown>[]): void {
  if (rows.length === 0) {
    print('(none)');
    return;
  }
  const keys = Object.keys(rows[0]!);
  // Escaped before the widths are measured, so a stored name's escapes keep the columns straight.
  const cells = rows.map((r) =>
    keys.map((k) => (r[k] === null || r[k] === undefined ? '-' : escapeControlCharacters(String(r[k])))),
  );
  const widths = keys.map((k, i) => Math.max(k.length, ...cells.map((c) => c[i]!.length)));
  print(keys.map((k, i) => k.padEnd(widths[i]!)).join('  '));
  for (const c of cells) print(c.map((v, i) => v.padEnd(widths[i]!)).join('  '));
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('must be a whole number from 0 to 65535');
  return port;
}

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

export function buildCli(io: CliIo = processIo()): Command {
  const print = printer(io.stdout);
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

  program
    .command('serve')
    .description('migrate the database and serve the API')
    .option('--host <host>', `address to listen on (default 127.0.0.1; env ${envOf('server.host')})`)
    .addOption(
      new Option(
        '--port <port>',
        `port to listen on (default 8080, 0 picks a free port; env ${envOf('server.port')})`,
      ).argParser(parsePort),
    )
    .option('--import <file>', 'import this document before serving')
    .option('--demo', 'on an empty database, load the demo data; print a ready token and a curl example')
    .option(
      '--fixture',
      'add the test-fixture admin API under /__admin (reset, journal, mail, faults, clock); needs limits.store memory',
    )
    .option('--seed <seed>', 'with --fixture: ids of writes come from a generator seeded with this')
    .option(
      '--ready-file <path>',
      `once the server answers, write { url, apiUrl, adminUrl, pid, version, token } to this file, atomically (env ${READY_FILE_VARIABLE})`,
    )
    .option(
      '--exit-with-parent',
      'stop (as on SIGTERM) when standard input, a pipe, closes or the parent process is gone',
    )
    .addHelpText(
      'after',
      `\nEvery configuration key also has an environment variable, e.g. ${envOf('server.shutdownGraceMs')}, ` +
        `${envOf('log.level')}, ${envOf('metrics.enabled')} (see config.example.json and docs/configuration.md).\n` +
        `A provider that needs settings stops the start without them: providers.mail smtp needs smtp.host ` +
        `(${envOf('smtp.host')}; no default).\n` +
        `Several instances share one rate-limit window with ${envOf('limits.store')}=redis and ${envOf('redis.url')}.`,
    )
    .action(
      async (
        options: {
          host?: string;
          port?: number;
          import?: string;
          demo?: boolean;
          fixture?: boolean;
          seed?: string;
          readyFile?: string;
          exitWithParent?: boolean;
        },
        command: Command,
      ) => {
        const config = configOf(command, io, {
          'server.host': options.host,
          'server.port': options.port,
          'fixture.enabled': options.fixture,
          'fixture.seed': options.seed,
        });
        // Arguments that do not go together are bad arguments: status 2, as commander's own refusals.
        if (options.seed !== undefined && !config.fixture.enabled)
          command.error('outreach-api: --seed needs --fixture', { exitCode: 2 });
        const location = storeLocation(config);
        const shown = describeLocation(location);
        const capabilities = capabilitiesAt(location);
        if (config.fixture.enabled && !capabilities.canSnapshot)
          command.error(
            `outreach-api: --fixture needs a SQLite database (a file, or --db :memory:): its reset puts a SQLite file back; ${shown} is ${capabilities.product}`,
            { exitCode: 2 },
          );
        if (location === ':memory:' && !options.import && !options.demo)
          command.error(
            'outreach-api: --db :memory: needs --demo or --import: an empty in-memory database has no account to serve',
            { exitCode: 2 },
          );
        requireProviderSettings(config, io.env); // before the database is touched
        requireInboxSettings(config, io.env);
        const readyFileOption = options.readyFile ?? (io.env[READY_FILE_VARIABLE] || undefined);
        const readyFile = readyFileOption === undefined ? undefined : prepareReadyFile(readyFileOption);
        const logger = createLogger(config.log);
        const store = await openDatabase(config, print, true);
        await migrate(store);
        let demoToken: string | undefined;
        if (options.import) {
          const { importFile } = await import('../import/index.js');
          const summary = await importFile(store, options.import);
          logger.log('info', 'imported', { counts: summary.counts });
        }
        if (options.demo) {
          const { DEMO_TOKEN, seedDemo } = await import('../seed/demo.js');
          if (!(await accountExists(store.db))) {
            await seedDemo(store);
            print(`loaded the demo data into ${shown}`);
          } else print(`Using the existing database ${shown}.`);
          // Promise the demo token only where it works: present, not revoked, not expired.
          const found = await cachedTokenLookup(store.db)(DEMO_TOKEN);
          if (found && !found.revoked && (found.expiresAtMs === null || found.expiresAtMs > systemClock.now()))
            demoToken = DEMO_TOKEN;
          else {
            const accounts = await listAccounts(store.db);
            print(
              `This database is not the demo's: the demo token is not an active token here. It holds ${accounts.length} account(s)${
                accounts.length
                  ? ` (${accounts
                      .slice(0, 5)
                      .map((a) => a.id)
                      .join(', ')}${accounts.length > 5 ? ', …' : ''})`
                  : ''
              }.`,
            );
            print(
              `Make a token with: outreach-api --db ${shown} tokens create --account <accountId> --name <name> --scopes all`,
            );
          }
        }
        // The demo account's password for the settings area: set on first use (before the server
        // starts: it writes in a transaction of its own), checked while the server starts.
        let demoSignIn: Promise<{ email: string; works: boolean }> | undefined;
        if (demoToken && config.settings.enabled) {
          const { DEMO_ACCOUNT_ID, DEMO_PASSWORD, DEMO_PASSWORD_HASH } = await import('../seed/demo.js');
          const email = (await listAccounts(store.db)).find((a) => a.id === DEMO_ACCOUNT_ID)?.email;
          const hash = await passwordHashOf(store.db, DEMO_ACCOUNT_ID);
          // The hash made once (no scrypt at start); a password changed since is checked.
          if (email && hash === undefined) {
            await setAccountPassword(store.db, DEMO_ACCOUNT_ID, DEMO_PASSWORD_HASH, now());
            demoSignIn = Promise.resolve({ email, works: true });
          } else if (email && hash === DEMO_PASSWORD_HASH) demoSignIn = Promise.resolve({ email, works: true });
          else if (email) demoSignIn = verifyPassword(DEMO_PASSWORD, hash).then((works) => ({ email, works }));
        }
        // A database with no account serves nobody: say how the first account and token are made.
        if (!options.demo && !(await accountExists(store.db)))
          for (const line of firstAccountHint(describeLocation(storeLocation(config)))) print(line);
        const server = await startServer({ config, store, logger });
        // Graceful shutdown (decisions.md §15), on a signal or, with `--exit-with-parent`, when the
        // parent is gone (its cause in `reason`). A second signal changes nothing: a terminal's
        // Ctrl-C under `npm start` reaches the server twice (from the terminal and forwarded by
        // npm), and the grace bounds the wait anyway. Installed before the ready file says the
        // server answers, so a SIGTERM sent as soon as it appears stops the server gracefully.
        let stopping = false;
        let readyText: string | undefined;
        const stop = (cause: { signal: NodeJS.Signals } | { reason: string }) => {
          if (stopping) return logger.log('info', 'shutdown already under way', cause);
          stopping = true;
          const stopped = server.shutdown();
          // Logged once the listener is closed (shutdown() closes it before its first await).
          logger.log('info', 'shutting down', { ...cause, graceMs: config.server.shutdownGraceMs });
          if (readyFile && readyText !== undefined) removeReadyFile(readyFile, readyText);
          stopped
            .then(() => store.close())
            .then(
              () => {
                logger.log('info', 'stopped', cause);
                process.exit(0);
              },
              (error: unknown) => {
                logger.log('error', 'shutdown failed', {
                  error: error instanceof Error ? error.message : String(error),
                });
                process.exit(1);
              },
            );
        };
        process.on('SIGINT', (signal) => stop({ signal }));
        process.on('SIGTERM', (signal) => stop({ signal }));
        if (options.exitWithParent) watchParent((reason) => stop({ reason }));
        const base = `${server.origin}/api/public/v1`;
        print(`outreach-api ${VERSION} listening on ${server.origin}`);
        print(`  base URL:  ${base}`);
        print(`  OpenAPI:   ${server.origin}/api/public/openapi.json`);
        print(`  reference: ${server.origin}/api/public/docs`);
        if (server.fixture)
          print(`  admin API: ${server.origin}/__admin (OpenAPI: ${server.origin}/__admin/openapi.json)`);
        if (demoToken) {
          print(`  demo token (every scope): ${demoToken}`);
          print();
          print(`  curl -s -H "Authorization: Bearer ${demoToken}" ${base}/me`);
        }
        if (readyFile)
          readyText = writeReadyFile(readyFile, {
            url: server.origin,
            apiUrl: base,
            adminUrl: server.fixture ? `${server.origin}/__admin` : null,
            pid: process.pid,
            version: VERSION,
            ...(demoToken ? { token: demoToken } : {}),
          });
        const signIn = await demoSignIn;
        if (signIn) {
          print();
          const { DEMO_ACCOUNT_ID, DEMO_PASSWORD } = await import('../seed/demo.js');
          print(
            signIn.works
              ? `  API access in a browser: ${server.origin}/settings/sign-in (email ${signIn.email}, password ${DEMO_PASSWORD})`
              : `  API access in a browser: ${server.origin}/settings/sign-in (the demo password was changed; set one with: outreach-api accounts password ${DEMO_ACCOUNT_ID})`,
          );
        }
      },
    );

  program
    .command('migrate')
    .description('create or upgrade the database schema')
    .action(async (_options: unknown, command: Command) => {
      const config = configOf(command, io);
      const store = await openDatabase(config, print, true);
      const shown = describeLocation(store.location);
      try {
        const applied = await migrate(store);
        print(applied.length ? `applied migrations ${applied.join(', ')} to ${shown}` : `${shown} is up to date`);
      } finally {
        await store.close();
      }
    });

  program
    .command('import')
    .description('import a JSON document (see docs/import-format.md); all or nothing')
    .argument('<file>', 'the import document')
    .action(async (file: string, _options: unknown, command: Command) => {
      const config = configOf(command, io);
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

  program
    .command('seed')
    .description('load the deterministic demo dataset')
    .requiredOption('--demo', 'the demo dataset (the only one there is)')
    .action(async (_options: unknown, command: Command) => {
      const config = configOf(command, io);
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
          if (Number.isNaN(ms)) throw new CliError(`--plan-expires-at: not a date: ${options.planExpiresAt}`);
          planExpiresAt = isoAt(ms);
        }
        await withStore(configOf(command, io), async (store) => {
          if (options.id && (await accountExists(store.db, options.id)))
            throw new CliError(`account ${options.id} already exists`);
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
      await withStore(configOf(command, io), async (store) =>
        table(
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
      await withStore(configOf(command, io), async (store) => {
        if (!(await accountExists(store.db, accountId))) throw new CliError(`no account with id ${accountId}`);
        const other = await otherSignInAccountWithEmailOf(store.db, accountId);
        if (other)
          throw new CliError(
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
          if (error instanceof PasswordInputError) throw new CliError(error.message);
          throw error;
        }
        const ended = await setAccountPassword(store.db, accountId, await hashPassword(password), now());
        print(`password set for account ${accountId}${ended ? `; ${ended} settings session(s) ended` : ''}`);
      });
    });

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
        await withStore(configOf(command, io), async (store) => {
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
      await withStore(configOf(command, io), async (store) => {
        const at = now();
        table(
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
      await withStore(configOf(command, io), async (store) => {
        if (!(await revokeToken(store.db, id, now()))) throw new CliError(`no active token with id ${id}`);
        print(`revoked ${id}`);
      });
    });

  registerBackupCommand(
    program,
    (command) => configOf(command, io),
    (message) => new CliError(message),
    io,
  );
  registerBacklinksCommand(
    program,
    (command) => configOf(command, io),
    (message) => new CliError(message),
    io,
  );
  registerInboxCommand(
    program,
    (command) => configOf(command, io),
    (message) => new CliError(message),
    io,
  );
  registerWaitCommand(program, (message) => new CliError(message), io);

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
