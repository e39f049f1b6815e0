/**
 * The `outreach-api` command line as an operator uses it, on a real store (decisions.md §12): a
 * SQLite file, or a PostgreSQL database with `OUTREACH_TEST_STORE=postgres`
 * (test/helpers/stores.ts); commands run in this process with their output captured (what they
 * print, the exit code), and `serve` as a real process that keeps running and answers HTTP.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../src/db/connection.js';
import { createAccount, createToken } from '../src/repos/tokens.js';
import { cli, cliProcess, serveProcess } from './helpers/cli.js';
import { sleep } from './helpers/ports.js';
import { type FreshStore, freshStore, testStore } from './helpers/stores.js';

describe('outreach-api CLI', () => {
  let dir: string;
  let db: string;
  const stores: FreshStore[] = [];
  /**
   * A new database of this process's store, as `--db` takes it: a SQLite file not made yet (the
   * command makes it), or an empty PostgreSQL database of its own.
   */
  const newDatabase = async (name: string) => {
    if (testStore() === 'sqlite') return join(dir, `${name}.db`);
    const fresh = await freshStore(mkdtempSync(join(dir, `${name}-`)), 'empty');
    stores.push(fresh);
    return fresh.location;
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-cli-'));
    db = await newDatabase('cli');
  });
  after(async () => {
    for (const fresh of stores) await fresh.dispose();
  });

  it('prints help for each command and refuses bad arguments with status 2', async () => {
    const help = await cli(['tokens', 'create', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--expires-in/);
    // A real process: the executable exits with the code the CLI answers.
    const unknown = await cliProcess(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command/);
    const badPort = await cli(['--db', db, 'serve', '--port', 'eighty']);
    assert.equal(badPort.code, 2);
    assert.match(badPort.stderr, /--port/);
    const badScope = await cli([
      '--db',
      db,
      'tokens',
      'create',
      '--account',
      'a',
      '--name',
      'n',
      '--scopes',
      'everything',
    ]);
    assert.equal(badScope.code, 2);
    assert.match(badScope.stderr, /unknown scope/);
  });

  it('stops before touching the database on a configuration that does not parse or a provider without its settings', async () => {
    const never = join(dir, 'never.db');
    const noKey = await cli(['--db', never, 'serve', '--port', '0'], {
      OUTREACH_API_PROVIDERS_GENERATOR: 'openai',
      OPENAI_API_KEY: '',
    });
    assert.equal(noKey.code, 1);
    assert.match(noKey.stderr, /generator: openai.*OPENAI_API_KEY \(named by openai\.apiKeyEnv\) is not set/);
    const badBool = await cli(['--db', never, 'serve', '--port', '0'], {
      OUTREACH_API_CRAWL_ALLOW_PRIVATE_NETWORKS: 'no',
    });
    assert.equal(badBool.code, 1);
    assert.match(
      badBool.stderr,
      /OUTREACH_API_CRAWL_ALLOW_PRIVATE_NETWORKS \(crawl\.allowPrivateNetworks\): must be true, false, 1 or 0/,
    );
    // A config file choosing SMTP without its relay (issue #21 item 2): smtp.host has no default.
    const smtpFile = join(dir, 'smtp-without-host.json');
    writeFileSync(smtpFile, JSON.stringify({ providers: { mail: 'smtp' } }));
    const noHost = await cli(['--db', never, '--config', smtpFile, 'serve', '--port', '0']);
    assert.equal(noHost.code, 1);
    assert.match(noHost.stderr, /mail: smtp.*smtp\.host is not set/);
    assert.equal(existsSync(never), false);
  });

  it('prints its version', async () => {
    const res = await cli(['--version']);
    assert.equal(res.code, 0);
    assert.match(res.stdout.trim(), /^\d+\.\d+\.\d+/);
  });

  it('imports a hand-written document, creates a token, and serves that data to it (serve --demo leaves it alone)', async () => {
    const doc = join(dir, 'mine.json');
    writeFileSync(
      doc,
      JSON.stringify({
        accounts: [
          {
            id: 'acct_cli',
            email: 'cli@example.com',
            name: 'CLI',
            plan: 'pro',
            planExpiresAt: '2099-01-01T00:00:00+02:00',
          },
        ],
        projects: [
          {
            id: 'prj_cli',
            accountId: 'acct_cli',
            name: 'From the CLI',
            createdAt: '2026-01-01T10:00:00+01:00',
            updatedAt: '2026-01-01T10:00:00Z',
          },
        ],
        sites: [
          {
            id: 'site_cli',
            projectId: 'prj_cli',
            name: 'Blog',
            domain: 'blog.example.com',
            url: 'https://blog.example.com/',
            status: 'active',
            createdAt: '2026-01-02T00:00:00Z',
            updatedAt: '2026-01-02T00:00:00Z',
          },
        ],
      }),
    );
    const imported = await cli(['--db', db, 'import', doc]);
    assert.equal(imported.code, 0, imported.stderr);
    const created = await cli([
      '--db',
      db,
      'tokens',
      'create',
      '--account',
      'acct_cli',
      '--name',
      'reader',
      '--scopes',
      'projects:read,sites:read',
      '--expires-in',
      '1d',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const token = created.stdout.trim();
    assert.match(token, /^oapi_/);

    const listed = await cli(['--db', db, 'tokens', 'list']);
    assert.match(listed.stdout, /reader/);
    assert.ok(!listed.stdout.includes(token), 'tokens list never shows the token');
    assert.ok(listed.stdout.includes(token.slice(-4)));

    // `--demo` on a database that holds data: it serves that data and says the demo token is not one here.
    const server = await serveProcess(['--db', db, 'serve', '--demo', '--port', '0']);
    try {
      const { origin } = server;
      const res = await fetch(`${origin}/api/public/v1/projects/prj_cli/sites`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await res.json()) as { data: { data: { id: string; createdAt: string }[] } };
      assert.equal(res.status, 200);
      assert.deepEqual(
        body.data.data.map((s) => s.id),
        ['site_cli'],
      );
      const project = (await (
        await fetch(`${origin}/api/public/v1/projects/prj_cli`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as {
        data: { createdAt: string };
      };
      assert.equal(project.data.createdAt, '2026-01-01T09:00:00.000Z', 'date-times are returned normalised to UTC');
      await sleep(200); // the rest of the banner
      const banner = server.stdout();
      assert.doesNotMatch(banner, /oapi_demo_|curl/);
      assert.match(banner, /Using the existing database/);
      assert.match(banner, /not an active token here\. It holds 1 account\(s\) \(acct_cli\)/);
      assert.match(banner, /tokens create --account <accountId>/);
    } finally {
      await server.close();
    }
  });

  it('serve --demo on a new database seeds it and prints the demo token and a curl line', async () => {
    const demo = await newDatabase('demo');
    const server = await serveProcess(['--db', demo, 'serve', '--demo', '--port', '0']);
    try {
      await sleep(200); // the rest of the banner
      const banner = server.stdout();
      assert.match(banner, /loaded the demo data into /);
      // A SQLite file the command made says so; a PostgreSQL database exists before.
      if (testStore() === 'sqlite')
        assert.match(banner, /created a new database at .*demo\.db\nloaded the demo data into .*demo\.db/);
      assert.match(banner, /demo token \(every scope\): oapi_demo_/);
      assert.match(banner, /curl -s -H "Authorization: Bearer oapi_demo_/);
      // The settings area (decisions.md §18): where to sign in, with both credentials.
      assert.match(
        banner,
        /API access in a browser: http:\/\/127\.0\.0\.1:\d+\/settings\/sign-in \(email owner@trailhead\.test, password demo-password\)/,
      );
    } finally {
      await server.close();
    }
    // Once its password is changed, the demo password is not promised (nor set back).
    const changed = await cli(
      ['--db', demo, 'accounts', 'password', 'acct_demo', '--password-stdin'],
      {},
      'a password of my own',
    );
    assert.equal(changed.code, 0, changed.stderr);
    const again = await serveProcess(['--db', demo, 'serve', '--demo', '--port', '0']);
    try {
      // The rest of the banner comes after a password check (a tenth of a second of scrypt, or more under load).
      const changedLine = /the demo password was changed; set one with: outreach-api accounts password acct_demo/;
      for (let waited = 0; !changedLine.test(again.stdout()) && waited < 15_000; waited += 50) await sleep(50);
      assert.match(again.stdout(), changedLine);
      assert.doesNotMatch(again.stdout(), /password demo-password/);
    } finally {
      await again.close();
    }
  });

  it('refuses a bad import with status 1, naming the record, and leaves the database unchanged', async () => {
    const doc = join(dir, 'bad.json');
    writeFileSync(
      doc,
      JSON.stringify({
        accounts: [{ id: 'acct_new', email: 'new@example.com', name: 'New', plan: 'pro' }],
        projects: [
          {
            id: 'prj_bad',
            accountId: 'acct_nobody',
            name: 'Orphan',
            createdAt: '2026-01-01T00:00:00Z',
            updatedAt: '2026-01-01T00:00:00Z',
          },
        ],
      }),
    );
    const res = await cli(['--db', db, 'import', doc]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /projects\[0\].*prj_bad.*accountId/);
    const accounts = await cli(['--db', db, 'accounts', 'list']);
    assert.ok(!accounts.stdout.includes('acct_new'), 'the account of the refused file was not written');
  });

  it('keeps control and format characters out of token names (create, import), and escapes them wherever it prints stored text', async () => {
    const database = await newDatabase('controls');
    const run = (...args: string[]) => cli(['--db', database, ...args]);
    const made = await run('migrate');
    assert.equal(made.code, 0, made.stderr);
    const account = await run('accounts', 'create', '--id', 'acct_ctl', '--email', 'c@example.test', '--name', 'C');
    assert.equal(account.code, 0, account.stderr);
    // C1 controls (CSI, OSC), a direction override, a line break, a zero-width space.
    for (const name of ['ci\u009b31m', 'ci\u009d0;title\u0007', 'ci\u202egnp.exe', 'ci\nfake row', 'ci\u200b']) {
      const refused = await run('tokens', 'create', '--account', 'acct_ctl', '--name', name, '--scopes', 'all');
      assert.equal(refused.code, 2, JSON.stringify(name));
      assert.match(refused.stderr, /A token name cannot contain control or format characters/);
    }
    const doc = join(dir, 'controls.json');
    writeFileSync(
      doc,
      JSON.stringify({
        accounts: [{ id: 'acct_imp', email: 'i@example.test', name: 'I', plan: 'pro' }],
        tokens: [
          {
            id: 'tok_bidi',
            accountId: 'acct_imp',
            name: 'deploy\u202eexe.',
            scopes: [],
            token: 'import-token-with-a-bidi-name-000000',
          },
        ],
      }),
    );
    const imported = await run('import', doc);
    assert.equal(imported.code, 1);
    assert.equal(
      imported.stderr,
      'outreach-api: tokens[0] (id "tok_bidi"): name: A token name cannot contain control or format characters (such as a line break or a direction override).\n',
    );
    assert.equal((await run('tokens', 'list')).stdout, '(none)\n', 'nothing created');

    // Text that got in before these rules, written straight into the store.
    const store = await openStore(database);
    try {
      await createAccount(
        store.db,
        { id: 'acct_old', email: 'old\u202e@example.test', name: 'Old\u009b2J\nCo', plan: 'pro' },
        '2026-01-01T00:00:00.000Z',
      );
      await createToken(
        store.db,
        { accountId: 'acct_old', name: 'evil\u009b31m\u202eeman\nfake row', scopes: ['leads:read'], expiresAt: null },
        '2026-01-01T00:00:00.000Z',
      );
    } finally {
      await store.close();
    }
    const printed = [(await run('tokens', 'list')).stdout, (await run('accounts', 'list')).stdout];
    for (const text of printed)
      assert.doesNotMatch(text, /[^\P{Cc}\n]|\p{Cf}/u, 'no control or format character but line ends');
    const [tokenLines, accountLines] = printed.map((text) => text.trimEnd().split('\n'));
    assert.equal(tokenLines!.length, 2, 'a header and one row');
    assert.ok(tokenLines![1]!.includes('evil\\u{9b}31m\\u{202e}eman\\u{a}fake row'), tokenLines![1]);
    // The columns stay straight: every row starts its name where the header's does.
    assert.equal(tokenLines![1]!.indexOf('evil'), tokenLines![0]!.indexOf('name'));
    const old = accountLines!.find((line) => line.startsWith('acct_old'));
    assert.ok(old?.includes('old\\u{202e}@example.test'), old);
    assert.ok(old?.includes('Old\\u{9b}2J\\u{a}Co'), old);
    assert.equal(accountLines!.length, 3, 'a header and two rows: the refused import wrote none');
  });
});
