/**
 * `outreach-api accounts password ACCOUNT_ID` (decisions.md §18): from standard input with
 * `--password-stdin`, or asked twice on a real terminal (a pseudo-terminal made by util-linux
 * `script`) with echo off; at least 12 characters, refused with the rule named; only a scrypt hash
 * stored, with its parameters and a salt of its own; every settings session of the account ended.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../../src/db/connection.js';
import { verifyPassword } from '../../src/domain/passwords.js';
import { createSession, passwordHashOf } from '../../src/repos/sessions.js';
import { cli, cliBundle } from '../helpers/cli.js';

const SCRIPT = '/usr/bin/script';

describe('accounts password', () => {
  let dir: string;
  let db: string;
  let store: Store;
  const hashOf = (id: string) => passwordHashOf(store.db, id);
  const sessionCount = async (id: string) =>
    (await store.db.selectFrom('settings_sessions').select('id_hash').where('account_id', '=', id).execute()).length;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outreach-password-'));
    db = join(dir, 'p.db');
    assert.equal((await cli(['--db', db, 'migrate'])).code, 0); // only migrate, seed, import and serve create one
    for (const [id, email] of [
      ['acct_p', 'Owner@Example.test'],
      ['acct_q', 'other@example.test'],
      ['acct_same', 'owner@example.TEST'],
    ]) {
      const created = await cli(['--db', db, 'accounts', 'create', '--id', id!, '--email', email!, '--name', id!]);
      assert.equal(created.code, 0, created.stderr);
    }
    store = await openStore(db);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads --password-stdin, stores only a salted scrypt hash with its parameters, and prints no password', async () => {
    const password = 'correct horse battery staple';
    const first = await cli(['--db', db, 'accounts', 'password', 'acct_p', '--password-stdin'], {}, `${password}\n`);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /password set for account acct_p/);
    assert.ok(!`${first.stdout}${first.stderr}`.includes(password));
    const hash = await hashOf('acct_p');
    assert.match(hash ?? '', /^scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    assert.ok(!hash!.includes(password));
    assert.ok(await verifyPassword(password, hash), 'the trailing newline is not part of the password');
    assert.ok(!(await verifyPassword(`${password}\n`, hash)));
    // The same password again: a new salt, so a new hash.
    await cli(['--db', db, 'accounts', 'password', 'acct_p', '--password-stdin'], {}, password);
    assert.notEqual(await hashOf('acct_p'), hash);
    assert.ok(await verifyPassword(password, await hashOf('acct_p')));
  });

  it('refuses fewer than 12 characters naming the rule, and an unknown account, changing nothing', async () => {
    const before = await hashOf('acct_p');
    const short = await cli(['--db', db, 'accounts', 'password', 'acct_p', '--password-stdin'], {}, 'elevenchars');
    assert.equal(short.code, 1);
    assert.match(short.stderr, /at least 12 characters \(this one has 11\)/);
    assert.equal(await hashOf('acct_p'), before);
    // Twelve characters of any script count as twelve.
    const twelve = await cli(['--db', db, 'accounts', 'password', 'acct_q', '--password-stdin'], {}, 'ünïcödé-päss');
    assert.equal(twelve.code, 0, twelve.stderr);
    const unknown = await cli(
      ['--db', db, 'accounts', 'password', 'acct_nope', '--password-stdin'],
      {},
      'x'.repeat(20),
    );
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no account with id acct_nope/);
  });

  it('refuses a second account signing in with the same email (case folded)', async () => {
    const same = await cli(['--db', db, 'accounts', 'password', 'acct_same', '--password-stdin'], {}, 'x'.repeat(20));
    assert.equal(same.code, 1);
    assert.match(same.stderr, /account acct_p has the same email/);
    assert.equal(await hashOf('acct_same'), undefined);
  });

  it('says how to give a password when standard input is not a terminal', async () => {
    const piped = await cli(['--db', db, 'accounts', 'password', 'acct_q'], {}, 'y'.repeat(20));
    assert.equal(piped.code, 1);
    assert.match(piped.stderr, /not a terminal.*--password-stdin/);
  });

  it("ends every settings session of the account, and only that account's", async () => {
    const now = new Date().toISOString();
    await createSession(store.db, { idHash: 'a'.repeat(64), accountId: 'acct_p', nowIso: now });
    await createSession(store.db, { idHash: 'b'.repeat(64), accountId: 'acct_p', nowIso: now });
    await createSession(store.db, { idHash: 'c'.repeat(64), accountId: 'acct_q', nowIso: now });
    const set = await cli(['--db', db, 'accounts', 'password', 'acct_p', '--password-stdin'], {}, 'z'.repeat(16));
    assert.match(set.stdout, /2 settings session\(s\) ended/);
    assert.equal(await sessionCount('acct_p'), 0);
    assert.equal(await sessionCount('acct_q'), 1);
  });

  /**
   * Runs the command in a pseudo-terminal (`script`), typing each of `entries` after the prompt
   * that asks for it appears. Resolves to the exit code and everything the terminal showed.
   */
  async function onTerminal(accountId: string, entries: string[]): Promise<{ code: number | null; shown: string }> {
    const bin = await cliBundle();
    const command = [process.execPath, bin, '--db', db, 'accounts', 'password', accountId]
      .map((a) => `'${a}'`)
      .join(' ');
    const child = spawn(SCRIPT, ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let shown = '';
    const prompts = [/New password: $/, /The same password again: $/];
    let typed = 0;
    const onOutput = (chunk: Buffer) => {
      shown += chunk.toString();
      // Type only once the prompt is there: echo is off from then on (before it, the terminal would echo).
      while (typed < entries.length && prompts[typed]!.test(shown)) child.stdin.write(entries[typed++]!);
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    return { code, shown };
  }

  it('asks twice on a terminal without echoing, and refuses two entries that differ', {
    skip: !existsSync(SCRIPT) && 'no util-linux script',
  }, async () => {
    const password = 'typed on a terminal 42';
    const ok = await onTerminal('acct_q', [`${password}\r`, `${password}\r`]);
    assert.equal(ok.code, 0, ok.shown);
    assert.match(ok.shown, /New password: [\s\S]*The same password again: [\s\S]*password set for account acct_q/);
    assert.ok(!ok.shown.includes(password), `the terminal showed: ${ok.shown}`);
    assert.ok(!ok.shown.includes('*'), 'not even a mask');
    assert.ok(await verifyPassword(password, await hashOf('acct_q')));

    const before = await hashOf('acct_q');
    const differ = await onTerminal('acct_q', ['first entry is this\r', 'second entry is that\r']);
    assert.equal(differ.code, 1);
    assert.match(differ.shown, /the two passwords differ; nothing was changed/);
    assert.equal(await hashOf('acct_q'), before);
    // Backspace deletes what was typed: "abc⌫" + rest is the password without the c.
    const edited = await onTerminal('acct_q', ['twelve chars abc\u007f!\r', 'twelve chars ab!\r']);
    assert.equal(edited.code, 0, edited.shown);
    assert.ok(await verifyPassword('twelve chars ab!', await hashOf('acct_q')));
  });
});
