/**
 * `npm run bench:inbox`: the inbox sync's throughput, memory and idle cost (issue #24).
 *
 * A throwaway Dovecot (test/helpers/dovecot.ts) gets one mailbox filled with `--messages` (default
 * 10,000) messages, written into its Maildir as a delivery agent would: 50 % replies to the
 * outbox's Message-IDs (In-Reply-To) of 2,000 threads, 15 % delivery status notifications
 * (failed), 15 % automatic replies (half out-of-office), 20 % from unknown senders. The mailbox is
 * opened once before the timing (Dovecot indexes new Maildir files on first sight, as it would
 * have while they were delivered). Then:
 *
 * 1. one first pass: `outreach-api inbox sync`, the bundle the executable is made from run
 *    under `node` (build/bundle.ts), as an operator runs it: messages per second (from the time
 *    the command prints for the connection), its peak RSS and CPU time (sampled from
 *    /proc/PID/status and /proc/PID/stat every 10 ms);
 * 2. idle passes with nothing new (`runInboxPass`, the code `serve`'s worker runs, in a child
 *    process): with the session kept open between passes, as `serve` keeps it (the median of
 *    20), and with a new login each time, as `inbox sync` does (the median of 5).
 *
 * It also prints the machine's load average before and after (the machine may be shared: compare
 * runs with that in mind). Exit 1 when the pass's counts are not the mailbox's mix.
 *
 * Options: `--messages N` (default 10000); `--heap-mb N` runs the first pass's process with
 * `--max-old-space-size=N` (how much garbage V8 lets pile up before a full collection; through
 * NODE_OPTIONS with `--exe`); `--exe
 * PATH` runs the first pass with that executable (`dist/outreach-api` after `npm run build`)
 * instead of the bundle under `node`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeClock } from '../../src/domain/clock.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument, type ImportDocument } from '../../src/import/index.js';
import { silentLogger } from '../../src/logger.js';
import type { MailboxSession } from '../../src/providers/imap.js';
import { runInboxPass } from '../../src/workers/inbox/pass.js';
import { cliBundle } from '../helpers/cli.js';
import { startDovecot } from '../helpers/dovecot.js';
import { dsn, mail, outboxId, SENDER_DOMAIN } from '../inbox/helpers.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};

const THREADS = 2000;
const USER = 'bench@trailgear.example';
const PASSWORD = 'bench-imap-password';
const PASSWORD_ENV = 'OUTREACH_BENCH_INBOX_PASSWORD';
/** The messages' internal date: now, so that the first read (the last `initialDays`) finds them. */
const NOW = Date.now();

/** 2,000 threads of one site, each with a contact and one outbound message `msg_bench_<i>`. */
export function dataset(): ImportDocument {
  const at = '2026-10-01T09:00:00.000Z';
  const stamp = { createdAt: at, updatedAt: at };
  const ids = Array.from({ length: THREADS }, (_, i) => i);
  return {
    accounts: [{ id: 'acct_bench', email: 'owner@bench.example', name: 'Bench', plan: 'pro', ...stamp }],
    projects: [{ id: 'prj_bench', accountId: 'acct_bench', name: 'Bench', ...stamp }],
    sites: [
      {
        id: 'site_bench',
        projectId: 'prj_bench',
        name: 'Bench',
        domain: SENDER_DOMAIN,
        url: `https://${SENDER_DOMAIN}/`,
        status: 'active',
        ...stamp,
      },
    ],
    prospects: ids.map((i) => ({
      id: `pr_${i}`,
      siteId: 'site_bench',
      status: 'proposed' as const,
      url: `https://p${i}.example/post`,
      domain: `p${i}.example`,
      ...stamp,
    })),
    contacts: ids.map((i) => ({
      id: `con_${i}`,
      prospectId: `pr_${i}`,
      email: `editor${i}@p${i}.example`,
      status: 'active' as const,
      verificationStatus: 'unverified' as const,
      ...stamp,
    })),
    threads: ids.map((i) => ({
      id: `thr_${i}`,
      siteId: 'site_bench',
      prospectId: `pr_${i}`,
      contactId: `con_${i}`,
      threadId: `gm-${i}`,
      status: 'awaiting_reply' as const,
      outcome: 'none' as const,
      classification: 'unclassified' as const,
      ...stamp,
      messages: [
        {
          id: `msg_bench_${i}`,
          direction: 'outbound' as const,
          status: 'sent' as const,
          fromEmail: `me@${SENDER_DOMAIN}`,
          toEmails: [`editor${i}@p${i}.example`],
          subject: 'A guest post idea',
          body: 'Would you be interested in a guest post?',
          sentAt: at,
          createdAt: at,
        },
      ],
    })),
    emailConnections: [
      { id: 'conn_bench', siteId: 'site_bench', provider: 'smtp', status: 'connected', accountEmail: USER, ...stamp },
    ],
  };
}

const PHRASES = ['Sounds good, send it over.', 'No thanks.', 'What would it be about?', 'Received, thanks.'];

/** The n-th message of the mix, and the result it should get. */
export function message(n: number): { raw: string; result: 'matched' | 'bounce' | 'unmatched' } {
  const thread = n % THREADS;
  const to = `editor${thread}@p${thread}.example`;
  const slot = n % 20;
  const quoted = '\n\nOn Mon, Mia wrote:\n> Would you be interested in a guest post?\n> Best, Mia';
  if (slot < 10)
    return {
      raw: mail({
        from: to,
        messageId: `<r${n}@p${thread}.example>`,
        inReplyTo: outboxId(`msg_bench_${thread}`),
        body: `${PHRASES[n % PHRASES.length]}${quoted}`,
      }),
      result: 'matched',
    };
  if (slot < 13)
    return {
      raw: dsn({
        original: outboxId(`msg_bench_${thread}`),
        recipient: to,
        action: 'failed',
        status: '5.1.1',
        messageId: `<d${n}@mx.example>`,
      }),
      result: 'bounce',
    };
  if (slot < 16)
    return {
      raw: mail({
        from: to,
        messageId: `<a${n}@p${thread}.example>`,
        subject: slot < 15 ? 'Out of office' : 'We received your message',
        headers: { 'Auto-Submitted': 'auto-replied' },
        body: 'I am away until Monday. For urgent matters write to the desk.',
      }),
      result: 'matched',
    };
  return {
    raw: mail({ from: `someone${n}@unknown${n}.example`, messageId: `<u${n}@unknown.example>`, body: 'Hello there.' }),
    result: 'unmatched',
  };
}

/** VmHWM (peak RSS, kB) of `pid` and its CPU time (ms), or null once it is gone. */
function sample(pid: number): { peakKb: number; cpuMs: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { peakKb: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0), cpuMs: (ticks * 1000) / 100 };
  } catch {
    return null;
  }
}

/** `inbox sync` on `db`, from the CLI bundle: its summary, pass time, peak RSS and CPU time. */
async function firstPass(db: string, configFile: string) {
  const heap = arg('heap-mb', '');
  const exe = arg('exe', '');
  const command = exe
    ? [exe]
    : [process.execPath, ...(heap ? [`--max-old-space-size=${heap}`] : []), await cliBundle()];
  const child = spawn(command[0]!, [...command.slice(1), '--config', configFile, '--db', db, 'inbox', 'sync'], {
    // The executable reads Node's options from NODE_OPTIONS.
    env: {
      PATH: process.env.PATH,
      [PASSWORD_ENV]: PASSWORD,
      ...(exe && heap ? { NODE_OPTIONS: `--max-old-space-size=${heap}` } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let peakRssKb = 0;
  let cpuMs = 0;
  const timer = setInterval(() => {
    const now = sample(child.pid!);
    if (now) [peakRssKb, cpuMs] = [Math.max(peakRssKb, now.peakKb), now.cpuMs];
  }, 10);
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  clearInterval(timer);
  if (code !== 0) throw new Error(`inbox sync exited with ${code}: ${stderr}`);
  // conn_bench  ok  10000  6500  2000  0  1500  0  0
  const cells = stdout.split('\n')[1]!.trim().split(/\s+/).slice(2).map(Number);
  const [fetched, matched, unmatched, duplicates, bounces, skipped, errors] = cells as number[];
  const seconds = Number(/ in (\d+\.\d+) s$/m.exec(stderr)?.[1]);
  return {
    first: {
      fetched: fetched!,
      matched: matched!,
      unmatched: unmatched!,
      duplicates: duplicates!,
      bounces: bounces!,
      skipped: skipped!,
      errors: errors!,
    },
    firstMs: seconds * 1000,
    cpuMs,
    peakRssKb,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Child mode: the passes over `db` with `configFile`; prints their figures as JSON. */
async function measure(db: string, configFile: string): Promise<void> {
  const config: Config = loadConfig(configFile, {}, { db });
  const store = await openStore(db);
  const clock = new FakeClock(NOW);
  const env = { [PASSWORD_ENV]: PASSWORD };
  const deps = { store, clock, config, logger: silentLogger, env };
  const sessions = new Map<string, MailboxSession>();
  await runInboxPass(deps, { sessions });
  const kept: number[] = [];
  for (let i = 0; i < 20; i++) {
    clock.advance(60_000);
    const t0 = performance.now();
    await runInboxPass(deps, { sessions });
    kept.push(performance.now() - t0);
  }
  for (const session of sessions.values()) await session.close();
  const fresh: number[] = [];
  for (let i = 0; i < 5; i++) {
    clock.advance(60_000);
    const t0 = performance.now();
    await runInboxPass(deps);
    fresh.push(performance.now() - t0);
  }
  await store.close();
  process.stdout.write(`${JSON.stringify({ idleKeptMs: median(kept), idleFreshMs: median(fresh) })}\n`);
}

async function main(): Promise<void> {
  const count = Number(arg('messages', '10000'));
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'outreach-bench-inbox-'));
  const dovecot = await startDovecot({ [USER]: PASSWORD });
  try {
    const db = join(dir, 'bench.db');
    const store = await openStore(db);
    await migrate(store);
    await importDocument(store, dataset());
    await store.close();
    const expected = { matched: 0, bounce: 0, unmatched: 0 };
    const filling = performance.now();
    for (let n = 0; n < count; n++) {
      const { raw, result } = message(n);
      expected[result]++;
      dovecot.deliver(USER, raw, { receivedAt: NOW });
    }
    const fillMs = performance.now() - filling;
    const indexing = performance.now();
    await dovecot.uidValidity(USER);
    const indexMs = performance.now() - indexing;
    const configFile = join(dir, 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        inbox: {
          connections: {
            conn_bench: { host: dovecot.host, port: dovecot.port, secure: false, passwordEnv: PASSWORD_ENV },
          },
        },
      }),
    );
    const first = await firstPass(db, configFile);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', '--db', db, '--config', configFile],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    if (code !== 0) throw new Error(`the measuring process exited with ${code}`);
    const result = { ...first, ...(JSON.parse(out) as { idleKeptMs: number; idleFreshMs: number }) };
    const loadAfter = loadavg();
    const rate = result.first.fetched / (result.firstMs / 1000);
    const rows: [string, string, string][] = [
      ['messages in the mailbox', String(count), ''],
      [
        'filled (Maildir) / indexed by Dovecot',
        `${(fillMs / 1000).toFixed(1)} s / ${(indexMs / 1000).toFixed(1)} s`,
        '',
      ],
      [
        'first pass',
        `${(result.firstMs / 1000).toFixed(2)} s: ${result.first.matched} matched, ${result.first.bounces} bounces, ${result.first.unmatched} unmatched, ${result.first.skipped} skipped, ${result.first.errors} errors`,
        '',
      ],
      ['messages per second', rate.toFixed(0), rate >= 200 ? 'target ≥ 200: met' : 'target ≥ 200: MISSED'],
      [
        'CPU time of the syncing process',
        `${(result.cpuMs / result.first.fetched).toFixed(2)} ms per message (start-up included)`,
        '',
      ],
      [
        'peak RSS of the syncing process',
        `${(result.peakRssKb / 1024).toFixed(0)} MB`,
        result.peakRssKb / 1024 <= 200 ? 'target ≤ 200 MB: met' : 'target ≤ 200 MB: MISSED',
      ],
      [
        'idle pass, session kept (serve)',
        `${result.idleKeptMs.toFixed(1)} ms`,
        result.idleKeptMs <= 50 ? 'target ≤ 50 ms: met' : 'target ≤ 50 ms: MISSED',
      ],
      ['idle pass, new login (inbox sync)', `${result.idleFreshMs.toFixed(1)} ms`, ''],
      ['load average before / after', `${loadBefore[0]!.toFixed(2)} / ${loadAfter[0]!.toFixed(2)}`, ''],
    ];
    const width = Math.max(...rows.map(([name]) => name.length));
    for (const [name, value, note] of rows) console.log(`${name.padEnd(width)}  ${value}${note ? `  (${note})` : ''}`);
    const ok =
      result.first.matched === expected.matched &&
      result.first.bounces === expected.bounce &&
      result.first.unmatched === expected.unmatched;
    if (!ok) {
      console.error(`the pass's counts are not the mailbox's mix: expected ${JSON.stringify(expected)}`);
      process.exitCode = 1;
    }
  } finally {
    await dovecot.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--child')) await measure(arg('db', ''), arg('config', ''));
  else await main();
}
