/**
 * The settings area's figures (decisions.md §18, issue #23), run by `npm run bench` after its
 * own runs and on its own as `node --import tsx test/bench/settings.ts [--server exe|bundle]
 * [--seconds N] [--sessions N] [--quiet-budget S] [--json]`:
 *
 * 1. The API access page of an account with 10 tokens (the demo account with 9 more), signed in:
 *    a peak run (autocannon, 16 connections), then a run at half that rate; target p99 ≤ 20 ms.
 * 2. The scrypt cost of a sign-in: `verifyPassword` timed in this process (the parameters new
 *    hashes get), and whole sign-in requests to the server; target 50–250 ms.
 * 3. GET /me does not get slower because sessions exist: peak runs of /me with no session row,
 *    then with `--sessions` rows (default 10,000), alternated three times; medians compared.
 *
 * Its own small database (the demo data), under .bench/settings/. The server is the executable
 * (`--server exe`, rebuilt when stale, as the bench does) or `node` on its bundle. Prints one
 * line per step on stderr; with `--json`, the figures as JSON on stdout (what run.ts reads).
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashPassword, verifyPassword } from '../../src/domain/passwords.js';
import { generateToken } from '../../src/domain/tokens.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { DEMO_PASSWORD } from '../../src/seed/demo.js';
import { BUNDLE, EXE, build, buildReason } from './coldstart.js';
import type { Endpoint } from './endpoints.js';
import { BENCH_DIR, BENCH_TOKEN } from './generate.js';
import { paced, peak, waitForQuiet, type RunResult } from './load.js';
import { startServer } from './processes.js';

/** The page's p99 at half its peak rate, ms (issue #23). */
export const SETTINGS_PAGE_P99_MS = 20;
/** The range a sign-in's scrypt must take here, ms (issue #23). */
export const SCRYPT_RANGE_MS = [50, 250] as const;

export interface SettingsBench {
  page: {
    peak: RunResult;
    half: RunResult & { dueP99: number; rate: number };
    /** GET /me paced at the page's half rate on the same server, for comparison. */
    meSameRate: RunResult & { dueP99: number };
    bytes: number;
  };
  scrypt: { verifyMs: number[]; medianMs: number; signInMs: number[]; signInMedianMs: number };
  me: { sessions: number; without: RunResult[]; with: RunResult[]; rpsWithout: number; rpsWith: number };
}

const DEMO_EMAIL = 'owner@trailhead.test';
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length % 2
    ? sorted[(sorted.length - 1) / 2]!
    : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};
const say = (line: string) => process.stderr.write(`bench settings: ${line}\n`);

/** Runs the three measurements with the server `command` (the executable, or node and the bundle). */
export async function benchSettings(
  command: string[],
  options: { seconds: number; pacedSeconds: number; sessions: number; quietBudgetS: number },
): Promise<SettingsBench> {
  // On a shared machine each measurement first waits (within a total budget) for other processes to go quiet.
  let budgetMs = options.quietBudgetS * 1000;
  const quiet = async (before: string) => {
    const q = await waitForQuiet(Math.min(budgetMs, 30_000));
    budgetMs = Math.max(0, budgetMs - q.waitedMs);
    if (!q.quiet) say(`the machine was still busy (${q.load?.toFixed(2)} cores) before ${before}`);
  };
  const work = join(BENCH_DIR, 'settings');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const db = join(work, 'settings.db');
  const cli = (args: string[], input?: string) => {
    const run = spawnSync(command[0]!, [...command.slice(1), '--db', db, ...args], { input, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${args.join(' ')}: ${run.stderr}`);
  };
  // The demo data, the bench token the server's start probe uses, and 8 more: 10 tokens.
  cli(['seed', '--demo']);
  const doc = join(work, 'tokens.json');
  const token = (name: string, raw: string) => ({ accountId: 'acct_demo', name, scopes: [...SCOPES], token: raw });
  writeFileSync(
    doc,
    JSON.stringify({
      tokens: [
        token('bench', BENCH_TOKEN),
        ...Array.from({ length: 8 }, (_, i) => token(`bench ${i + 1}`, generateToken())),
      ],
    }),
  );
  cli(['import', doc]);
  cli(['accounts', 'password', 'acct_demo', '--password-stdin'], DEMO_PASSWORD);
  const config = join(work, 'config.json');
  writeFileSync(config, JSON.stringify({ limits: { requestsPerMinute: 0 } }));
  const server = await startServer(command, { db, config, logFile: join(work, 'server.log') });
  try {
    const signIn = async () => {
      const started = performance.now();
      const res = await fetch(`${server.origin}/settings/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { origin: server.origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: DEMO_EMAIL, password: DEMO_PASSWORD }).toString(),
      });
      const ms = performance.now() - started;
      const cookie = res.headers.get('set-cookie')?.split(';')[0];
      if (res.status !== 303 || !cookie) throw new Error(`sign-in answered ${res.status}`);
      return { cookie, ms };
    };

    // 1. The page.
    const { cookie } = await signIn();
    const pageEndpoint: Endpoint = {
      name: 'GET /settings/api-access',
      kind: 'detail',
      method: 'GET',
      url: '/settings/api-access',
      headers: { cookie },
    };
    const first = await fetch(`${server.origin}/settings/api-access`, { headers: { cookie } });
    const html = await first.text();
    if (first.status !== 200 || !html.includes('10 of 10 active tokens'))
      throw new Error(`the page: ${first.status}, ${html.slice(0, 200)}`);
    await quiet('the page');
    await peak(server.origin, pageEndpoint, { connections: 16, seconds: 1, pid: server.pid });
    const pagePeak = await peak(server.origin, pageEndpoint, {
      connections: 16,
      seconds: options.seconds,
      pid: server.pid,
    });
    const rate = Math.max(1, Math.round(pagePeak.rps / 2));
    await quiet('the page at half rate');
    const half = {
      ...(await paced(server.origin, pageEndpoint, { rate, seconds: options.pacedSeconds, pid: server.pid })),
      rate,
    };
    // For reading the page's tail: GET /me (the lightest authenticated answer) paced at the same
    // rate, on the same server, right after: what the machine and the client add at that rate.
    const meEndpoint: Endpoint = { name: 'GET /me', kind: 'me', method: 'GET', url: '/api/public/v1/me' };
    await quiet('GET /me at the same rate');
    const meSameRate = await paced(server.origin, meEndpoint, { rate, seconds: options.pacedSeconds, pid: server.pid });
    say(
      `API access page (10 tokens, ${Buffer.byteLength(html)} B): ${pagePeak.rps.toFixed(0)} req/s, p99@${rate}/s ${half.p99.toFixed(2)} ms ` +
        `(p50 ${half.p50.toFixed(2)}, p90 ${half.p90.toFixed(2)}); GET /me at ${rate}/s: p99 ${meSameRate.p99.toFixed(2)} ms`,
    );

    // 2. scrypt: in this process, and whole sign-ins.
    await quiet('the scrypt timings');
    const hash = await hashPassword(DEMO_PASSWORD);
    const verifyMs: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      await verifyPassword(DEMO_PASSWORD, hash);
      verifyMs.push(performance.now() - started);
    }
    const signInMs: number[] = [];
    for (let i = 0; i < 10; i++) signInMs.push((await signIn()).ms);
    say(
      `scrypt verify median ${median(verifyMs).toFixed(1)} ms; sign-in request median ${median(signInMs).toFixed(1)} ms`,
    );

    // 3. GET /me without and with session rows.
    const raw = new Database(db);
    const insert = raw.prepare(
      'INSERT INTO settings_sessions (id_hash, account_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)',
    );
    const fill = raw.transaction((n: number) => {
      const now = new Date().toISOString();
      for (let i = 0; i < n; i++) insert.run(`bench${String(i).padStart(59, '0')}`, 'acct_demo', now, now);
    });
    const without: RunResult[] = [];
    const withSessions: RunResult[] = [];
    await peak(server.origin, meEndpoint, { connections: 16, seconds: 1, pid: server.pid });
    for (let i = 0; i < 3; i++) {
      raw.prepare("DELETE FROM settings_sessions WHERE id_hash LIKE 'bench%'").run();
      await quiet('GET /me without sessions');
      without.push(await peak(server.origin, meEndpoint, { connections: 16, seconds: 3, pid: server.pid }));
      fill(options.sessions);
      await quiet('GET /me with sessions');
      withSessions.push(await peak(server.origin, meEndpoint, { connections: 16, seconds: 3, pid: server.pid }));
    }
    raw.close();
    const rpsWithout = median(without.map((r) => r.rps));
    const rpsWith = median(withSessions.map((r) => r.rps));
    say(
      `GET /me: ${rpsWithout.toFixed(0)} req/s (${(1e6 / rpsWithout).toFixed(1)} µs a request) without sessions, ` +
        `${rpsWith.toFixed(0)} req/s (${(1e6 / rpsWith).toFixed(1)} µs) with ${options.sessions}`,
    );
    return {
      page: { peak: pagePeak, half, meSameRate, bytes: Buffer.byteLength(html) },
      scrypt: { verifyMs, medianMs: median(verifyMs), signInMs, signInMedianMs: median(signInMs) },
      me: { sessions: options.sessions, without, with: withSessions, rpsWithout, rpsWith },
    };
  } finally {
    await server.stop();
  }
}

async function main(argv: string[]): Promise<void> {
  const value = (name: string) => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const server = value('--server') ?? 'exe';
  if (server !== 'exe' && server !== 'bundle') throw new Error('--server must be exe or bundle');
  const reason = buildReason();
  if (reason) {
    say(`${reason}: npm run build …`);
    build();
  }
  const result = await benchSettings(server === 'exe' ? [EXE] : [process.execPath, BUNDLE], {
    seconds: Number(value('--seconds') ?? 5),
    pacedSeconds: Number(value('--paced-seconds') ?? 5),
    sessions: Number(value('--sessions') ?? 10_000),
    quietBudgetS: Number(value('--quiet-budget') ?? 120),
  });
  if (argv.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`)
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`bench settings: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  });
