/**
 * `outreach-api serve` (decisions.md §12, §15): migrates the database, loads `--import` or
 * `--demo` data, serves the API until a signal (or, with `--exit-with-parent`, until its parent is
 * gone), prints where it listens (and the demo's token and sign-in), and writes the ready file.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { READY_FILE_VARIABLE, requireInboxSettings, requireProviderSettings, storeLocation } from '../config.js';
import { capabilitiesAt, describeLocation, type Store } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { systemClock } from '../domain/clock.js';
import { verifyPassword } from '../domain/passwords.js';
import { ADMIN_BASE } from '../fixture/admin/index.js';
import { DOCS_PATH } from '../http/docs.js';
import { API_BASE, OPENAPI_PATH } from '../http/paths.js';
import { createLogger, type Logger } from '../logger.js';
import { passwordHashOf, setAccountPassword } from '../repos/sessions.js';
import { accountExists, cachedTokenLookup, listAccounts } from '../repos/tokens.js';
import { type RunningServer, startServer } from '../server.js';
import { VERSION } from '../version.js';
import { type Cli, now, openDatabase } from './context.js';
import { applySteadyMemorySettings, applyMemorySettings } from './memory.js';
import { envOf } from './help.js';
import { watchParent } from './parent.js';
import { prepareReadyFile, removeReadyFile, writeReadyFile } from './ready-file.js';

interface ServeOptions {
  host?: string;
  port?: number;
  import?: string;
  demo?: boolean;
  fixture?: boolean;
  seed?: string;
  readyFile?: string;
  exitWithParent?: boolean;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('must be a whole number from 0 to 65535');
  return port;
}

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

/**
 * `--demo`: on an empty database, the demo data. Resolves with the demo token where it works
 * (present, not revoked, not expired), else says why there is none and how to make a token.
 */
async function loadDemo(store: Store, shown: string, print: (line: string) => void): Promise<string | undefined> {
  const { DEMO_TOKEN, seedDemo } = await import('../seed/demo.js');
  if (!(await accountExists(store.db))) {
    await seedDemo(store);
    print(`loaded the demo data into ${shown}`);
  } else print(`Using the existing database ${shown}.`);
  const found = await cachedTokenLookup(store.db)(DEMO_TOKEN);
  if (found && !found.revoked && (found.expiresAtMs === null || found.expiresAtMs > systemClock.now()))
    return DEMO_TOKEN;
  const accounts = await listAccounts(store.db);
  const some = accounts
    .slice(0, 5)
    .map((a) => a.id)
    .join(', ');
  print(
    `This database is not the demo's: the demo token is not an active token here. It holds ${accounts.length} account(s)${
      accounts.length ? ` (${some}${accounts.length > 5 ? ', …' : ''})` : ''
    }.`,
  );
  print(`Make a token with: outreach-api --db ${shown} tokens create --account <accountId> --name <name> --scopes all`);
  return undefined;
}

/**
 * The demo account's password for the settings area: set on first use (before the server starts:
 * it writes in a transaction of its own) from the hash made once (no scrypt at start); a password
 * changed since is checked while the server starts. Undefined when there is no demo account.
 */
async function demoSignIn(store: Store): Promise<Promise<{ email: string; works: boolean }> | undefined> {
  const { DEMO_ACCOUNT_ID, DEMO_PASSWORD, DEMO_PASSWORD_HASH } = await import('../seed/demo.js');
  const email = (await listAccounts(store.db)).find((a) => a.id === DEMO_ACCOUNT_ID)?.email;
  if (!email) return undefined;
  const hash = await passwordHashOf(store.db, DEMO_ACCOUNT_ID);
  if (hash === undefined) {
    await setAccountPassword(store.db, DEMO_ACCOUNT_ID, DEMO_PASSWORD_HASH, now());
    return Promise.resolve({ email, works: true });
  }
  if (hash === DEMO_PASSWORD_HASH) return Promise.resolve({ email, works: true });
  return verifyPassword(DEMO_PASSWORD, hash).then((works) => ({ email, works }));
}

/**
 * Graceful shutdown (decisions.md §15), on a signal or, with `exitWithParent`, when the parent is
 * gone (its cause in `reason`). A second signal changes nothing: a terminal's Ctrl-C under
 * `npm start` reaches the server twice (from the terminal and forwarded by npm), and the grace
 * bounds the wait anyway. Installed before the ready file says the server answers, so a SIGTERM
 * sent as soon as it appears stops the server gracefully.
 * @returns what tells the stop which ready file to remove, once written.
 */
function stopOnSignals(
  server: RunningServer,
  store: Store,
  logger: Logger,
  graceMs: number,
  exitWithParent: boolean,
): { readyFile?: { path: string; text: string } } {
  const written: { readyFile?: { path: string; text: string } } = {};
  let stopping = false;
  const stop = (cause: { signal: NodeJS.Signals } | { reason: string }) => {
    if (stopping) return logger.log('info', 'shutdown already under way', cause);
    stopping = true;
    const stopped = server.shutdown();
    // Logged once the listener is closed (shutdown() closes it before its first await).
    logger.log('info', 'shutting down', { ...cause, graceMs });
    if (written.readyFile) removeReadyFile(written.readyFile.path, written.readyFile.text);
    stopped
      .then(() => store.close())
      .then(
        () => {
          logger.log('info', 'stopped', cause);
          process.exit(0);
        },
        (error: unknown) => {
          logger.log('error', 'shutdown failed', { error: error instanceof Error ? error.message : String(error) });
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', (signal) => stop({ signal }));
  process.on('SIGTERM', (signal) => stop({ signal }));
  if (exitWithParent) watchParent((reason) => stop({ reason }));
  return written;
}

/** Where the server listens, its documents, the fixture's admin API and the demo token, printed. */
function printBanner(server: RunningServer, demoToken: string | undefined, print: (line?: string) => void): void {
  const base = `${server.origin}${API_BASE}`;
  print(`outreach-api ${VERSION} listening on ${server.origin}`);
  print(`  base URL:  ${base}`);
  print(`  OpenAPI:   ${server.origin}${OPENAPI_PATH}`);
  print(`  reference: ${server.origin}${DOCS_PATH}`);
  if (server.fixture)
    print(`  admin API: ${server.origin}${ADMIN_BASE} (OpenAPI: ${server.origin}${ADMIN_BASE}/openapi.json)`);
  if (demoToken) {
    print(`  demo token (every scope): ${demoToken}`);
    print();
    print(`  curl -s -H "Authorization: Bearer ${demoToken}" ${base}/me`);
  }
}

/** Runs `serve` with `options`, as parsed for `command`. */
async function serve(cli: Cli, options: ServeOptions, command: Command): Promise<void> {
  const { print } = cli;
  const config = cli.configOf(command, {
    'server.host': options.host,
    'server.port': options.port,
    'fixture.enabled': options.fixture,
    'fixture.seed': options.seed,
  });
  // Arguments that do not go together are bad arguments: status 2, as commander's own refusals.
  applyMemorySettings(config);
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
  requireProviderSettings(config, cli.io.env); // before the database is touched
  requireInboxSettings(config, cli.io.env);
  const readyFileOption = options.readyFile ?? (cli.io.env[READY_FILE_VARIABLE] || undefined);
  const readyFile = readyFileOption === undefined ? undefined : prepareReadyFile(readyFileOption);
  const logger = createLogger(config.log);
  const store = await openDatabase(config, print, true);
  await migrate(store);
  if (options.import) {
    const { importFile } = await import('../import/index.js');
    const summary = await importFile(store, options.import);
    logger.log('info', 'imported', { counts: summary.counts });
  }
  const demoToken = options.demo ? await loadDemo(store, shown, print) : undefined;
  const signIn = demoToken && config.settings.enabled ? await demoSignIn(store) : undefined;
  // A database with no account serves nobody: say how the first account and token are made.
  if (!options.demo && !(await accountExists(store.db))) for (const line of firstAccountHint(shown)) print(line);
  applySteadyMemorySettings(config);
  const server = await startServer({ config, store, logger });
  const written = stopOnSignals(server, store, logger, config.server.shutdownGraceMs, options.exitWithParent === true);
  printBanner(server, demoToken, print);
  if (readyFile)
    written.readyFile = {
      path: readyFile,
      text: writeReadyFile(readyFile, {
        url: server.origin,
        apiUrl: `${server.origin}${API_BASE}`,
        adminUrl: server.fixture ? `${server.origin}${ADMIN_BASE}` : null,
        pid: process.pid,
        version: VERSION,
        ...(demoToken ? { token: demoToken } : {}),
      }),
    };
  const demo = await signIn;
  if (demo) {
    print();
    const { DEMO_ACCOUNT_ID, DEMO_PASSWORD } = await import('../seed/demo.js');
    print(
      demo.works
        ? `  API access in a browser: ${server.origin}/settings/sign-in (email ${demo.email}, password ${DEMO_PASSWORD})`
        : `  API access in a browser: ${server.origin}/settings/sign-in (the demo password was changed; set one with: outreach-api accounts password ${DEMO_ACCOUNT_ID})`,
    );
  }
}

/** Registers `serve` on `program`. */
export function registerServeCommand(program: Command, cli: Cli): void {
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
    .action((options: ServeOptions, command: Command) => serve(cli, options, command));
}
