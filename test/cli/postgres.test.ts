/**
 * The command line on a PostgreSQL store (decisions.md §16; issue #21 item 4): the location is
 * printed without its password everywhere (the output of `migrate`, `seed`, the `serve` banner,
 * errors), the password may come from `PGPASSWORD`, and the SQLite-only commands refuse naming
 * the alternative: `backup` names `pg_dump`, `serve --fixture` asks for a SQLite database.
 * The other commands on PostgreSQL are covered by test/cli.test.ts, which runs on both stores.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli, cliProcess, serveProcess } from '../helpers/cli.js';
import { sleep } from '../helpers/ports.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';

const SECRET = 'n0t-Th3-pa55word';

/** `url` with a password in it (the test server trusts every connection, so any password works). */
const withPassword = (url: string) => {
  const parsed = new URL(url);
  parsed.username ||= 'postgres';
  parsed.password = SECRET;
  return parsed.toString();
};

// No top-level await: it can resume outside the file's suite when the unit shards load several
// files at once (node:test finds the suite from the async context). The check runs in \`before\`.
describe('the CLI on PostgreSQL', () => {
  let skip: string | false = false;
  let database: TestDatabase;
  let url: string;
  before(async () => {
    skip = await serviceSkip('postgres');
    if (skip) return;
    database = await createTestDatabase('cli');
    url = withPassword(database.url);
  });
  after(() => database?.drop());

  const everything = (res: { stdout: string; stderr: string }) => res.stdout + res.stderr;

  it('migrates and seeds, printing the database without its password', async (t) => {
    if (skip) return t.skip(skip);
    const migrated = await cli(['--db', url, 'migrate']);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /^applied migrations 1, 2, 3, 4(, \d+)* to postgres:\/\/postgres@/m);
    assert.match((await cli(['--db', url, 'migrate'])).stdout, /postgres:\/\/postgres@.* is up to date/);
    const seeded = await cli(['--db', url, 'seed', '--demo']);
    assert.equal(seeded.code, 0, seeded.stderr);
    assert.match(seeded.stdout, /seeded the demo data into postgres:\/\/postgres@/);
    const listed = await cli(['--db', url, 'accounts', 'list']);
    assert.match(listed.stdout, /acct_demo/);
    for (const res of [migrated, seeded, listed]) assert.ok(!everything(res).includes(SECRET), everything(res));
  });

  it('takes the password from PGPASSWORD, and never prints it', async (t) => {
    if (skip) return t.skip(skip);
    const res = await cliProcess(['--db', database.url, 'tokens', 'list', '--account', 'acct_demo'], {
      PGPASSWORD: SECRET,
    });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /tok_demo_all_scopes/);
    assert.ok(!everything(res).includes(SECRET));
  });

  it('names the database without its password in the serve banner', async (t) => {
    if (skip) return t.skip(skip);
    const server = await serveProcess(['--db', url, 'serve', '--demo', '--port', '0']);
    try {
      await sleep(200); // the rest of the banner
      const banner = server.stdout();
      assert.match(banner, /Using the existing database postgres:\/\/postgres@/);
      assert.ok(!banner.includes(SECRET), banner);
    } finally {
      await server.close();
    }
  });

  it('reports a database it cannot reach without the password', async (t) => {
    if (skip) return t.skip(skip);
    const unreachable = `postgres://someone:${SECRET}@127.0.0.1:1/nowhere`;
    const res = await cli(['--db', unreachable, 'migrate'], { OUTREACH_API_DB_STATEMENT_TIMEOUT_MS: '1000' });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^outreach-api: /);
    assert.ok(!everything(res).includes(SECRET), everything(res));
  });

  it('refuses backup naming pg_dump, and serve --fixture asking for a SQLite database', async (t) => {
    if (skip) return t.skip(skip);
    const dir = mkdtempSync(join(tmpdir(), 'outreach-pg-cli-'));
    const backup = await cli(['--db', url, 'backup', join(dir, 'copy.db')]);
    assert.equal(backup.code, 1);
    assert.match(backup.stderr, /backup copies a SQLite database; .* is PostgreSQL: back it up with pg_dump/);
    const fixture = await cli(['--db', url, 'serve', '--fixture', '--port', '0']);
    assert.equal(fixture.code, 2, 'arguments that do not go together');
    assert.match(fixture.stderr, /--fixture needs a SQLite database/);
    for (const res of [backup, fixture]) assert.ok(!everything(res).includes(SECRET), everything(res));
  });
});
