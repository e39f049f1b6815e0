/**
 * TLS to the SMTP relay (issue #19, item 3): with a user or a password set, `smtp.requireTLS`
 * defaults to true, so against a real relay (smtp-server) that advertises AUTH but not STARTTLS,
 * as when someone on the path strips it, the send fails with a clear error and neither the
 * password nor the message goes out: every byte the client sent is recorded and searched. A
 * local relay without authentication keeps working without TLS.
 */
import assert from 'node:assert/strict';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../../src/config.js';
import { createSmtpTransport } from '../../src/providers/mail.js';
import { ProviderError, type OutgoingMail } from '../../src/providers/index.js';

const USER = 'outreach@example.com';
const PASSWORD = 'correct-horse-battery-staple';
const PASSWORD_ENV = 'SMTP_TLS_TEST_PASSWORD';

const mail: OutgoingMail = {
  messageId: '<msg_tls_1@example.com>',
  from: { name: 'Ana', address: USER },
  replyTo: null,
  to: ['eve@hikingblog.example'],
  cc: [],
  subject: 'A resource for your roundup',
  text: 'Hi Eve, here is the link we talked about.',
};

/** A relay on 127.0.0.1 that offers AUTH PLAIN and LOGIN without TLS, and records what it is sent. */
async function startPlaintextRelay() {
  const seen = { bytes: [] as Buffer[], logins: [] as string[], messages: 0 };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      seen.logins.push(`${auth.username}:${auth.password}`);
      callback(null, { user: auth.username });
    },
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => {
        seen.messages++;
        callback();
      });
    },
  });
  server.server.on('connection', (socket: Socket) => socket.on('data', (chunk: Buffer) => seen.bytes.push(chunk)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { seen, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const smtpConfig = (port: number, smtp: Record<string, unknown>) =>
  loadConfig(undefined, {}, { 'smtp.host': '127.0.0.1', 'smtp.port': port, 'smtp.timeoutMs': 5000, ...smtp }).smtp;

describe('TLS to the SMTP relay', () => {
  let relay: Awaited<ReturnType<typeof startPlaintextRelay>>;
  before(async () => {
    relay = await startPlaintextRelay();
  });
  after(() => relay.close());

  it('with a user and password, sends nothing to a relay that offers no STARTTLS, and says why', async () => {
    const before = relay.seen.bytes.length;
    const transport = createSmtpTransport(
      smtpConfig(relay.port, { 'smtp.user': USER, 'smtp.passwordEnv': PASSWORD_ENV }),
      { [PASSWORD_ENV]: PASSWORD },
    );
    try {
      await assert.rejects(
        transport.send(mail),
        (e) =>
          e instanceof ProviderError &&
          e.retryable &&
          /did not switch to TLS \(STARTTLS/.test(e.message) &&
          /smtp\.requireTLS is on, so nothing was sent, credentials included/.test(e.message),
      );
    } finally {
      transport.close();
    }
    const sent = Buffer.concat(relay.seen.bytes.slice(before)).toString('latin1');
    assert.match(sent, /^EHLO /m, 'the client spoke');
    assert.doesNotMatch(sent, /^AUTH/im, 'no AUTH command');
    for (const secret of [
      PASSWORD,
      Buffer.from(PASSWORD).toString('base64'),
      Buffer.from(`\0${USER}\0${PASSWORD}`).toString('base64'),
    ])
      assert.ok(!sent.includes(secret), 'the password did not go out, in any form');
    assert.ok(!sent.includes(mail.text), 'nor did the message');
    assert.deepEqual(relay.seen.logins, []);
    assert.equal(relay.seen.messages, 0);
  });

  it('requires TLS with a password alone too, and not when smtp.requireTLS is false', async () => {
    const passwordOnly = createSmtpTransport(smtpConfig(relay.port, { 'smtp.passwordEnv': PASSWORD_ENV }), {
      [PASSWORD_ENV]: PASSWORD,
    });
    try {
      await assert.rejects(passwordOnly.send(mail), /smtp\.requireTLS is on/);
    } finally {
      passwordOnly.close();
    }
    // Turned off on purpose (a relay on a trusted network): the old behaviour, AUTH in plain text.
    const optedOut = createSmtpTransport(
      smtpConfig(relay.port, { 'smtp.user': USER, 'smtp.passwordEnv': PASSWORD_ENV, 'smtp.requireTLS': false }),
      { [PASSWORD_ENV]: PASSWORD },
    );
    try {
      await optedOut.send(mail);
    } finally {
      optedOut.close();
    }
    assert.deepEqual(relay.seen.logins, [`${USER}:${PASSWORD}`]);
    assert.equal(relay.seen.messages, 1);
  });

  it('a local relay without authentication keeps working without TLS', async () => {
    const messages = relay.seen.messages;
    const transport = createSmtpTransport(smtpConfig(relay.port, {}), {});
    try {
      await transport.send(mail);
    } finally {
      transport.close();
    }
    assert.equal(relay.seen.messages, messages + 1);
  });

  it('reads smtp.requireTLS from the file and from OUTREACH_API_SMTP_REQUIRE_TLS', async () => {
    assert.equal(loadConfig('config.example.json', {}).smtp.requireTLS, true);
    assert.equal(loadConfig(undefined, {}).smtp.requireTLS, undefined, 'unset: decided by the credentials');
    assert.equal(loadConfig(undefined, { OUTREACH_API_SMTP_REQUIRE_TLS: 'false' }).smtp.requireTLS, false);
  });
});
