/**
 * A throwaway Dovecot (Debian's `dovecot-imapd`) for the inbox tests: started on a free loopback
 * port with a temporary configuration (plain IMAP, a passwd-file of test users, Maildir under a
 * temporary folder, every runtime, state and log path under that folder too), run in the
 * foreground (`-F`) as a child of the test, and killed by `stop()` (or when the test process exits).
 *
 *   const skip = await serviceSkip('dovecot');
 *   const dovecot = await startDovecot({ ana: 'secret' });
 *   dovecot.deliver('ana', rawMessage);   // as a delivery agent: Maildir tmp/ then new/
 *   await dovecot.stop();
 *
 * Run as root (a container), the mail processes run as Debian's `dovecot` user (Dovecot refuses
 * uid 0 for them) and the Maildir is handed to it; as anyone else, everything runs as that user.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import { freePort, waitForPort } from './ports.js';

export const DOVECOT = '/usr/sbin/dovecot';

export interface DeliveryOptions {
  /** Default `INBOX`. */
  mailbox?: string;
  /** The server's internal date of the message (ms since the epoch); default: now (real time). */
  receivedAt?: number;
}

export interface TestDovecot {
  host: string;
  port: number;
  /** The folder that holds everything (config, Maildirs, logs). */
  dir: string;
  /**
   * Puts `raw` into `user`'s mailbox (`INBOX`, or a Maildir++ folder) as a delivery agent does:
   * written under `tmp/`, then renamed into `new/`. Line ends become CRLF.
   */
  deliver(user: string, raw: string | Buffer, options?: DeliveryOptions): void;
  /** APPENDs `raw` over IMAP. */
  append(user: string, raw: string | Buffer, options?: DeliveryOptions): Promise<void>;
  /** Each message's UID and flags, as a read-only session sees them. */
  flags(user: string, mailbox?: string): Promise<{ uid: number; flags: string[] }[]>;
  /** The mailbox's UIDVALIDITY. */
  uidValidity(user: string, mailbox?: string): Promise<number>;
  /**
   * Deletes and creates the (non-INBOX) `mailbox` again: Dovecot gives it a new UIDVALIDITY.
   * Its messages are gone; deliver them again.
   */
  recreate(user: string, mailbox: string): Promise<void>;
  /**
   * Disconnects every IMAP session of `user` (`doveadm kick`), as a server restart would;
   * resolves once Dovecot logs that a session ended (`user` must have one).
   */
  kick(user: string): Promise<void>;
  /** Dovecot's log so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

/** Uid and gid of a system user, from the passwd database. */
const idsOf = (name: string) => ({
  uid: Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim()),
  gid: Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim()),
});

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

let unique = 0;

/**
 * Starts Dovecot with one passwd-file user per entry of `users` (name → password).
 * @throws when it does not start or listen within 10 s (check `serviceSkip('dovecot')` first).
 */
export async function startDovecot(users: Record<string, string>): Promise<TestDovecot> {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-dovecot-'));
  chmodSync(dir, 0o755);
  const root = process.getuid?.() === 0;
  const me = userInfo();
  const mail = root ? idsOf('dovecot') : { uid: me.uid, gid: me.gid };
  const loginUser = root ? 'dovenull' : me.username;
  const internalUser = root ? 'dovecot' : me.username;
  const port = await freePort();
  for (const sub of ['run', 'state', 'mail']) mkdirSync(join(dir, sub));
  if (root) chownSync(join(dir, 'mail'), mail.uid, mail.gid);
  writeFileSync(
    join(dir, 'passwd'),
    Object.entries(users)
      .map(([name, password]) => `${name}:{PLAIN}${password}::::::\n`)
      .join(''),
  );
  writeFileSync(
    join(dir, 'dovecot.conf'),
    `base_dir = ${dir}/run
state_dir = ${dir}/state
instance_name = outreach-test-${process.pid}-${++unique}
log_path = ${dir}/dovecot.log
info_log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_login_user = ${loginUser}
default_internal_user = ${internalUser}
mail_location = maildir:${dir}/mail/%u
first_valid_uid = ${mail.uid}
first_valid_gid = ${mail.gid}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${mail.uid} gid=${mail.gid} home=${dir}/mail/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service pop3-login {
  inet_listener pop3 {
    port = 0
  }
}
service submission-login {
  inet_listener submission {
    port = 0
  }
}
`,
  );
  const child = spawn(DOVECOT, ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: 'ignore' });
  running.add(child);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const log = () => {
    try {
      return readdirSync(dir).includes('dovecot.log')
        ? execFileSync('tail', ['-n', '20', join(dir, 'dovecot.log')], { encoding: 'utf8' })
        : '(no log)';
    } catch {
      return '(no log)';
    }
  };
  await waitForPort(port, {
    name: 'dovecot',
    timeoutMs: 10_000,
    exited: () => (child.exitCode !== null ? String(child.exitCode) : null),
    log: () => `: ${log()}`,
  });

  const folder = (user: string, mailbox = 'INBOX') =>
    mailbox === 'INBOX' ? join(dir, 'mail', user) : join(dir, 'mail', user, `.${mailbox}`);
  const own = (path: string) => {
    if (root) chownSync(path, mail.uid, mail.gid);
  };
  let delivered = 0;
  const session = async <T>(user: string, fn: (client: ImapFlow) => Promise<T>): Promise<T> => {
    const client = new ImapFlow({
      host: '127.0.0.1',
      port,
      secure: false,
      auth: { user, pass: users[user]! },
      logger: false,
      disableAutoIdle: true,
    });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.logout().catch(() => client.close());
    }
  };
  return {
    host: '127.0.0.1',
    port,
    dir,
    deliver(user, raw, { mailbox = 'INBOX', receivedAt } = {}) {
      const base = folder(user, mailbox);
      const created: string[] = [];
      for (const path of [join(dir, 'mail', user), base, join(base, 'tmp'), join(base, 'new'), join(base, 'cur')]) {
        try {
          mkdirSync(path);
          created.push(path);
        } catch {
          // exists
        }
      }
      if (mailbox !== 'INBOX') writeFileSync(join(base, 'maildirfolder'), '');
      for (const path of created) own(path);
      const name = `${Date.now()}.M${++delivered}P${process.pid}.outreach-test`;
      const body = typeof raw === 'string' ? Buffer.from(raw.replace(/\r?\n/g, '\r\n')) : raw;
      writeFileSync(join(base, 'tmp', name), body);
      own(join(base, 'tmp', name));
      // Maildir's internal date is the file's modification time.
      if (receivedAt !== undefined) utimesSync(join(base, 'tmp', name), receivedAt / 1000, receivedAt / 1000);
      renameSync(join(base, 'tmp', name), join(base, 'new', `${name},S=${body.length}`));
    },
    append: (user, raw, { mailbox = 'INBOX', receivedAt } = {}) =>
      session(user, async (client) => {
        await client.append(mailbox, raw, [], receivedAt === undefined ? undefined : new Date(receivedAt));
      }),
    flags: (user, mailbox = 'INBOX') =>
      session(user, async (client) => {
        await client.mailboxOpen(mailbox, { readOnly: true });
        const out: { uid: number; flags: string[] }[] = [];
        for await (const m of client.fetch('1:*', { uid: true, flags: true }, { uid: true }))
          out.push({ uid: m.uid, flags: [...(m.flags ?? [])].filter((f) => f !== '\\Recent').sort() });
        return out.sort((a, b) => a.uid - b.uid);
      }),
    uidValidity: (user, mailbox = 'INBOX') =>
      session(user, async (client) => Number((await client.mailboxOpen(mailbox, { readOnly: true })).uidValidity)),
    recreate: (user, mailbox) =>
      session(user, async (client) => {
        await client.mailboxDelete(mailbox);
        await client.mailboxCreate(mailbox);
      }),
    async kick(user) {
      // doveadm signals the sessions' processes and returns; each logs its disconnection once it ends.
      const ended = () =>
        log()
          .split('\n')
          .filter((l) => l.includes('Disconnected: Server shutting down')).length;
      const before = ended();
      execFileSync('/usr/bin/doveadm', ['-c', join(dir, 'dovecot.conf'), 'kick', user], { stdio: 'ignore' });
      for (let waited = 0; ended() === before; waited += 20) {
        if (waited > 10_000) throw new Error(`doveadm kick ended no session of ${user}: ${log()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    log,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      running.delete(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
