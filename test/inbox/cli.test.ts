/**
 * `outreach-api inbox sync [--connection ID]...` (decisions.md §17) as an operator runs it, in this
 * process, on a real database file against a real Dovecot: the summary table per connection,
 * the progress lines, a connection whose login fails beside one that works, and the exit codes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument } from '../../src/import/index.js';
import { Writable } from 'node:stream';
import { runCli } from '../../src/cli/index.js';
import { cli } from '../helpers/cli.js';
import { startDovecot, type TestDovecot } from '../helpers/dovecot.js';
import { serviceSkip } from '../helpers/services.js';
import {
  ANA,
  BOB_PASSWORD,
  PASSWORD,
  PASSWORD_ENV,
  USERS,
  inboxConnections,
  inboxFixture,
  mail,
  outboxId,
} from './helpers.js';

const skip = await serviceSkip('dovecot');

/** A stream that keeps what is written to it. */
class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

describe('outreach-api inbox sync', { skip }, () => {
  let dovecot: TestDovecot;
  const dir = mkdtempSync(join(tmpdir(), 'outreach-inbox-cli-'));
  const db = join(dir, 'inbox.db');
  const config = (connections: unknown) => {
    const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify({ db, inbox: { connections } }));
    return path;
  };
  const env = { [PASSWORD_ENV.me]: PASSWORD, [PASSWORD_ENV.bob]: BOB_PASSWORD };
  before(async () => {
    dovecot = await startDovecot(USERS);
    const store = await openStore(db);
    await migrate(store);
    await importDocument(store, inboxFixture());
    await store.close();
  });
  after(async () => {
    await dovecot?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads every configured mailbox once, prints a line per connection and the summary table, exits 0', async () => {
    dovecot.deliver('box13', mail({ messageId: '<cli1@blog.example>', inReplyTo: outboxId('msg_out_ana') }));
    dovecot.deliver('box13', mail({ messageId: '<cli2@blog.example>', from: 'stranger@else.example' }));
    dovecot.deliver('box13', 'not a message\r\n');
    const file = config(inboxConnections(dovecot, { user: 'box13' }));
    const run = await cli(['--config', file, 'inbox', 'sync'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.stdout.trimEnd().split('\n'), [
      'connection  status  fetched  matched  unmatched  duplicates  bounces  skipped  errors',
      'conn_in     ok            3        1          1           0        0        1       0',
      'conn_two    ok            0        0          0           0        0        0       0',
    ]);
    assert.match(run.stderr, /^conn_in: ok, 3 fetched, 1 matched, 0 bounces in \d+\.\d\d s$/m);
    assert.match(run.stderr, /^conn_two: ok, 0 fetched/m);

    const again = await cli(['--config', file, 'inbox', 'sync', '--connection', 'conn_in'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(again.stdout.trimEnd().split('\n').slice(1), [
      'conn_in     ok            0        0          0           0        0        0       0',
    ]);
  });

  it('exits 0 when a login fails, with the reason under the table and no password anywhere', async () => {
    dovecot.deliver('box14', mail({ messageId: '<cli3@blog.example>', from: ANA }));
    const file = config(inboxConnections(dovecot, { user: 'box14' }));
    const run = await cli(['--config', file, 'inbox', 'sync'], { ...env, [PASSWORD_ENV.bob]: 'not-bobs-password' });
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines[1], 'conn_in     ok            1        1          0           0        0        0       0');
    assert.equal(lines[2], 'conn_two    error         0        0          0           0        0        0       0');
    assert.equal(lines[3], 'conn_two: the IMAP server refused the login of bob');
    assert.ok(!`${run.stdout}${run.stderr}`.includes('not-bobs-password'));
    const unset = await cli(['--config', file, 'inbox', 'sync', '--connection', 'conn_two'], {
      [PASSWORD_ENV.me]: PASSWORD,
    });
    assert.equal(unset.code, 0);
    assert.match(
      unset.stdout,
      new RegExp(`conn_two: the environment variable ${PASSWORD_ENV.bob} \\(passwordEnv\\) is not set`),
    );
  });

  it('draws a progress bar per connection on a terminal', async () => {
    dovecot.deliver('box13', mail({ messageId: '<cli4@blog.example>', from: ANA }));
    const file = config(inboxConnections(dovecot, { user: 'box13', two: false }));
    const stdout = new Capture();
    const stderr = Object.assign(new Capture(), { isTTY: true });
    const code = await runCli(['--config', file, 'inbox', 'sync'], { stdout, stderr, env });
    assert.equal(code, 0, stderr.text);
    assert.match(stderr.text, /conn_in =+ 1\/1 \| matched 1 unmatched 0/);
    assert.ok(!stderr.text.includes('"level"'), 'no log line between the bars');
    assert.match(stdout.text, /^conn_in +ok +1 +1 /m);
  });

  it('stops after the batch in hand on SIGINT, exits 1, and the next run reads the rest', async () => {
    for (let n = 0; n < 120; n++) dovecot.deliver('box12', mail({ messageId: `<int${n}@blog.example>`, from: ANA }));
    const file = config(inboxConnections(dovecot, { user: 'box12', two: false }));
    const listeners = process.listenerCount('SIGINT');
    const running = cli(['--config', file, 'inbox', 'sync'], env);
    while (process.listenerCount('SIGINT') === listeners) await new Promise((done) => setImmediate(done));
    process.emit('SIGINT');
    const run = await running;
    assert.equal(run.code, 1);
    assert.match(run.stderr, /interrupted: the messages above are recorded; the rest are read next time/);
    assert.match(run.stdout, /^conn_in +ok +50 +50 /m, 'one batch of 50');
    const rest = await cli(['--config', file, 'inbox', 'sync'], env);
    assert.equal(rest.code, 0);
    assert.match(rest.stdout, /^conn_in +ok +70 +70 /m);
  });

  it('refuses to serve with inbox.enabled while a mailbox password variable is not set', async () => {
    const file = join(dir, 'enabled.json');
    writeFileSync(file, JSON.stringify({ db, inbox: { enabled: true, connections: inboxConnections(dovecot) } }));
    const run = await cli(['--config', file, 'serve', '--port', '0'], { [PASSWORD_ENV.me]: PASSWORD });
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      `outreach-api: inbox.enabled is true but the environment variable ${PASSWORD_ENV.bob} (inbox.connections.conn_two.passwordEnv) is not set\n`,
    );
  });

  it('exits 1 without inbox.connections, for a connection not configured, and without a database', async () => {
    const none = await cli(['--config', config({}), 'inbox', 'sync'], env);
    assert.deepEqual([none.code, none.stderr], [1, 'outreach-api: inbox.connections is empty: no mailbox to read\n']);
    const file = config(inboxConnections(dovecot, { user: 'box14' }));
    const unknown = await cli(['--config', file, 'inbox', 'sync', '--connection', 'conn_nope'], env);
    assert.deepEqual([unknown.code, unknown.stderr], [1, 'outreach-api: not in inbox.connections: conn_nope\n']);
    const nodb = await cli(['--config', file, '--db', join(dir, 'missing.db'), 'inbox', 'sync'], env);
    assert.equal(nodb.code, 1);
    assert.match(nodb.stderr, /no database at/);
  });
});
