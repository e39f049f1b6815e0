/**
 * The database path as an operator types it (issue #21 item 7): a command that only reads or
 * changes a store refuses a path with no database instead of creating an empty one; `migrate`,
 * `seed`, `import` and `serve` create one and say so; a path that cannot be created fails at
 * once, naming the path and the reason; `serve` on a database with no account says how the
 * first account and token are made.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { cli, cliBundle, serveProcess } from '../helpers/cli.js';
import { sleep } from '../helpers/ports.js';

describe('the database path', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-db-path-'));
  });

  it('is refused with "no database at PATH", and not created, by the commands that need one', async () => {
    const typo = join(dir, 'typo', 'outreach.db');
    for (const args of [
      ['tokens', 'list'],
      ['tokens', 'create', '--account', 'acct_1', '--name', 'n', '--scopes', 'all'],
      ['tokens', 'revoke', 'tok_1'],
      ['accounts', 'list'],
      ['accounts', 'create', '--email', 'a@example.com', '--name', 'A'],
      ['accounts', 'password', 'acct_1', '--password-stdin'],
      ['backlinks', 'check'],
      ['backup', join(dir, 'copy.db')],
    ]) {
      const res = await cli(['--db', typo, ...args]);
      assert.equal(res.code, 1, args.join(' '));
      assert.equal(res.stderr, `outreach-api: no database at ${typo}\n`, args.join(' '));
      assert.equal(existsSync(typo), false, `${args.join(' ')} created nothing`);
      assert.equal(existsSync(join(dir, 'typo')), false, `${args.join(' ')} created no directory`);
    }
  });

  it('is created by migrate, seed, import and serve, which say so once', async () => {
    const migrated = join(dir, 'new', 'deeper', 'm.db');
    let res = await cli(['--db', migrated, 'migrate']);
    assert.equal(res.code, 0);
    assert.match(res.stdout, new RegExp(`^created a new database at ${migrated}\\n`));
    res = await cli(['--db', migrated, 'migrate']);
    assert.doesNotMatch(res.stdout, /created a new database/, 'not on the second run');
    assert.equal((await cli(['--db', migrated, 'tokens', 'list'])).code, 0, 'then the others use it');

    res = await cli(['--db', join(dir, 's.db'), 'seed', '--demo']);
    assert.match(res.stdout, /^created a new database at .*s\.db\n/);
    const doc = join(dir, 'one.json');
    writeFileSync(
      doc,
      JSON.stringify({ accounts: [{ id: 'acct_1', email: 'a@example.com', name: 'A', plan: 'free' }] }),
    );
    res = await cli(['--db', join(dir, 'i.db'), 'import', doc]);
    assert.match(res.stdout, /^created a new database at .*i\.db\n/);
  });

  it('serve on a new database creates it and says how to make the first account and token', async () => {
    const path = join(dir, 'served.db');
    const server = await serveProcess(['--db', path, 'serve', '--port', '0']);
    try {
      await sleep(200); // the rest of the banner
      const banner = server.stdout();
      assert.match(banner, new RegExp(`created a new database at ${path}`));
      assert.match(banner, new RegExp(`The database at ${path} holds no account yet`));
      assert.ok(banner.includes(`outreach-api --db ${path} accounts create --email`), banner);
      assert.ok(banner.includes(`outreach-api --db ${path} tokens create --account`), banner);
      // Those commands, run while it serves, give a token it takes at once.
      const created = await cli(['--db', path, 'accounts', 'create', '--email', 'you@example.com', '--name', 'You']);
      const accountId = created.stdout.trim().split(/\s+/).at(-1)!;
      const token = await cli([
        '--db',
        path,
        'tokens',
        'create',
        '--account',
        accountId,
        '--name',
        'first',
        '--scopes',
        'all',
      ]);
      const raw = /oapi_[0-9A-Za-z]+/.exec(token.stdout)?.[0];
      assert.ok(raw, token.stdout + token.stderr);
      const me = await fetch(`${server.origin}/api/public/v1/me`, { headers: { authorization: `Bearer ${raw}` } });
      assert.equal(me.status, 200);
    } finally {
      await server.close();
    }
  });

  it('fails at once, naming the path and the reason, where the database cannot be created', async () => {
    const bin = await cliBundle();
    /** The command as a real process, killed if it has not ended within 60 s. */
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stderr: string; ms: number }>((resolve) => {
        const started = performance.now();
        execFile(process.execPath, [bin, ...args], { timeout: 60_000, killSignal: 'SIGKILL' }, (error, _out, stderr) =>
          resolve({
            code: error ? ((error as { code?: number }).code ?? null) : 0,
            stderr,
            ms: performance.now() - started,
          }),
        );
      });
    // Node's recursive mkdir never returned here: the command spun until killed.
    let res = await run(['--db', '/proc/nope/x.db', 'migrate']);
    assert.equal(res.code, 1, `ended by itself, in ${Math.round(res.ms)} ms`);
    assert.match(res.stderr, /cannot create the database at \/proc\/nope\/x\.db: directory \/proc\/nope: /);
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    res = await run(['--db', join(file, 'x.db'), 'migrate']);
    assert.equal(res.code, 1);
    assert.equal(res.stderr, `outreach-api: cannot create the database at ${join(file, 'x.db')}: not a directory\n`);
    if (existsSync('/sys/kernel')) {
      // sysfs takes no new file, whoever asks.
      res = await run(['--db', '/sys/x.db', 'migrate']);
      assert.equal(res.stderr, 'outreach-api: cannot create the database at /sys/x.db: permission denied\n');
    }
    res = await run(['--db', dir, 'tokens', 'list']);
    assert.equal(res.stderr, `outreach-api: ${dir} is a directory, not a database file\n`);
  });
});
