/**
 * A `serve` process killed with SIGKILL part way through a pass of its inbox sync (decisions.md
 * §17, docs/security.md "Reading other people's mail"): each message is recorded with the
 * mailbox position it leaves, so a restart reads only what the killed pass had not recorded, and
 * the hostile message before the kill (skipped, inbox.parseTimeoutMs) is never read again. The
 * pass is held at a known message: the model that classifies human replies never answers about
 * it. The restart is a pass in this process on the same database, once the killed process's lease
 * has run out, as the next `serve` would run it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/connection.js';
import { importDocument } from '../../src/import/index.js';
import { runInboxPass } from '../../src/workers/inbox/pass.js';
import { serveProcess } from '../helpers/cli.js';
import { startDovecot, type TestDovecot } from '../helpers/dovecot.js';
import { serviceSkip } from '../helpers/services.js';
import { sqlAll } from '../helpers/sql.js';
import { type FreshStore, freshStore } from '../helpers/stores.js';
import { sendJson, startHttp, type TestHttp } from '../writes/helpers.js';
import {
  PASSWORD,
  PASSWORD_ENV,
  USERS,
  boundaryMaze,
  inboxConnections,
  inboxFixture,
  mail,
  outboxId,
  recordingLogger,
} from './helpers.js';

const skip = await serviceSkip('dovecot');

describe('a serve process killed part way through an inbox pass', { skip }, () => {
  let dovecot: TestDovecot;
  let model: TestHttp;
  let fresh: FreshStore;
  const dir = mkdtempSync(join(tmpdir(), 'outreach-inbox-crash-'));
  before(async () => {
    dovecot = await startDovecot(USERS);
    // The model classifies every human reply but the one that says HOLD, about which it never answers.
    model = await startHttp((req, res) => {
      if (!req.body.includes('HOLD')) sendJson(res, 200, { choices: [{ message: { content: 'interested' } }] });
    });
    fresh = await freshStore(dir, 'inbox-crash', (store) => importDocument(store, inboxFixture()).then(() => {}));
  });
  after(async () => {
    await model?.close();
    await fresh?.dispose();
    await dovecot?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('resumes after the last message it recorded, and never reads the hostile one again', async () => {
    const reply = (id: string, thread: string, body: string) =>
      mail({ messageId: `<${id}@rows.example>`, inReplyTo: outboxId(thread), body });
    // UIDs 1 to 5; the pass is held at 4.
    dovecot.deliver('box20', reply('k1', 'msg_out_ana', 'Sounds good.'));
    dovecot.deliver('box20', boundaryMaze(126, 8_000_000));
    dovecot.deliver('box20', reply('k3', 'msg_out_dan', 'Happy to.'));
    dovecot.deliver('box20', reply('k4', 'msg_out_r1', 'HOLD: what would it be about?'));
    dovecot.deliver('box20', reply('k5', 'msg_out_r2', 'Yes please.'));
    const env = {
      OUTREACH_API_INBOX_ENABLED: 'true',
      OUTREACH_API_INBOX_INTERVAL_MS: '3600000',
      OUTREACH_API_INBOX_PARSE_TIMEOUT_MS: '500',
      OUTREACH_API_INBOX_CONNECTIONS: JSON.stringify(inboxConnections(dovecot, { user: 'box20', two: false })),
      OUTREACH_API_PROVIDERS_GENERATOR: 'openai',
      OUTREACH_API_OPENAI_BASE_URL: model.url,
      OUTREACH_API_OPENAI_API_KEY_ENV: 'OUTREACH_TEST_CRASH_OPENAI',
      OUTREACH_API_OPENAI_TIMEOUT_MS: '20000',
      OUTREACH_TEST_CRASH_OPENAI: 'sk-crash-test',
      [PASSWORD_ENV.me]: PASSWORD,
    };
    const store = await openStore(fresh.location);
    try {
      const position = async () =>
        Number((await sqlAll<{ n: number }>(store, 'SELECT last_uid AS n FROM inbox_mailboxes'))[0]?.n ?? 0);
      const serve = await serveProcess(['--db', fresh.location, 'serve', '--port', '0'], env);
      try {
        // Killed while the model is asked about UID 4, once what came before it is recorded (within
        // RECORD_WITHIN_MS of its handling, the hostile one's included).
        for (let waited = 0; !(model.requests.some((r) => r.body.includes('HOLD')) && (await position()) === 3); ) {
          if (waited > 30_000) assert.fail(`the pass never recorded UID 3: ${serve.stdout()}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
          waited += 20;
        }
      } finally {
        serve.kill('SIGKILL');
        await serve.exited;
      }

      const inbound = async () =>
        (
          await sqlAll<{ id: string }>(
            store,
            "SELECT inbound_message_id AS id FROM thread_messages WHERE direction = 'inbound' ORDER BY id",
          )
        ).map((r) => r.id);
      assert.deepEqual(await inbound(), ['<k1@rows.example>', '<k3@rows.example>'], 'recorded before the kill');
      assert.equal(await position(), 3, 'the position past the hostile message and the last one recorded');

      // The next start, once the killed process's lease has run out (the default deadline: no
      // hostile message is left to read, and this process is busy with other tests' garbage).
      const { OUTREACH_API_INBOX_PARSE_TIMEOUT_MS: _, ...nextEnv } = env;
      const config = loadConfig(undefined, nextEnv);
      const clock = { now: () => Date.now() + 5 * 60_000 };
      const logger = recordingLogger();
      const [restart] = await runInboxPass({ store, clock, config, logger, env });
      assert.deepEqual(
        [restart!.status, restart!.fetched, restart!.matched, restart!.duplicates, restart!.skipped],
        ['ok', 2, 2, 0, 0],
        'only the two it had not recorded',
      );
      assert.deepEqual(await inbound(), [
        '<k1@rows.example>',
        '<k3@rows.example>',
        '<k4@rows.example>',
        '<k5@rows.example>',
      ]);
      assert.equal(await position(), 5);
      const [again] = await runInboxPass({ store, clock, config, logger, env });
      assert.equal(again!.fetched, 0, 'nothing is read twice');
    } finally {
      await store.close();
    }
  });
});
