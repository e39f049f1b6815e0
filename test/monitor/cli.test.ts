/**
 * `outreach-api backlinks check` as an operator runs it, on a real database file against a local
 * site (decisions.md §13): its summary table and exit codes (run in this process), and a real
 * process killed with SIGKILL mid-pass, which loses no check it reported and leaves none
 * half-written.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { importDocument } from '../../src/import/index.js';
import { cliBundle, cli as runCli } from '../helpers/cli.js';
import { type FreshStore, freshStore } from '../helpers/stores.js';
import { assertConsistent, documentOf, TARGET, type BacklinkSpec } from './helpers.js';
import { html, startTestSite, type TestSite } from './site.js';
import { sqlAll } from '../helpers/sql.js';

const dir = mkdtempSync(join(tmpdir(), 'outreach-monitor-cli-'));
const config = join(dir, 'config.json');
writeFileSync(config, JSON.stringify({ monitor: { allowPrivateNetworks: true, perHostDelayMs: 0, concurrency: 2 } }));
let site: TestSite;

before(async () => {
  site = await startTestSite(['127.0.0.20', '127.0.0.21']);
});
after(async () => {
  await site.close();
  rmSync(dir, { recursive: true, force: true });
});

const stores: FreshStore[] = [];
after(async () => {
  for (const fresh of stores) await fresh.dispose();
});

/** A database of this process's store holding `backlinks` (test/helpers/stores.ts); its location for `--db`. */
async function database(name: string, backlinks: BacklinkSpec[]): Promise<string> {
  const fresh = await freshStore(mkdtempSync(join(dir, `${name}-`)), 'empty');
  stores.push(fresh);
  const store = await openStore(fresh.location);
  await migrate(store);
  await importDocument(store, documentOf(backlinks));
  await store.close();
  return fresh.location;
}

/** `backlinks check` in this process with the test's config file and no OUTREACH_API_* variables. */
const cli = (args: string[]) => runCli(['--config', config, ...args]);

async function withStore<T>(path: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(path);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('outreach-api backlinks check', () => {
  it('checks the due backlinks, prints a line per check and the summary table, exits 0', async () => {
    const [a, b] = site.origins as [string, string];
    site.route(`${a}/ok`, html(`<a href="${TARGET}">guide</a>`));
    site.route(`${b}/err`, (_req, res) => res.writeHead(500).end());
    const db = await database('summary', [
      { id: 'bl_ok', sourceUrl: `${a}/ok` },
      { id: 'bl_lost', sourceUrl: `${a}/missing` },
      { id: 'bl_err', sourceUrl: `${b}/err` },
      { id: 'bl_closed', sourceUrl: `${a}/ok`, status: 'closed' },
    ]);
    const run = await cli(['--db', db, 'backlinks', 'check']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^checked +3\nlive +1\nchanged +0\nlost +1\nblocked +0\nerror +1\ntime +\d+\.\d\d s\n$/);
    assert.equal(run.stderr.split('\n').filter((l) => /^\[\d\/3\] bl_/.test(l)).length, 3);
    assert.match(run.stderr, /bl_err error: .*HTTP 500/);
    const again = await cli(['--db', db, 'backlinks', 'check']);
    assert.match(again.stdout, /^checked +0\n/, 'nothing due');
    const all = await cli([
      '--db',
      db,
      'backlinks',
      'check',
      '--all',
      '--site',
      'site_m',
      '--backlink',
      'bl_ok',
      '--backlink',
      'bl_err',
    ]);
    assert.equal(all.code, 0);
    assert.match(all.stdout, /^checked +2\nlive +1\n/);
  });

  it('exits 1 when it cannot run: an unknown id, no database', async () => {
    const db = await database('unknown', []);
    const unknown = await cli(['--db', db, 'backlinks', 'check', '--project', 'prj_nope', '--backlink', 'bl_nope']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /not found: project prj_nope, backlink bl_nope/);
    const missing = await cli(['--db', join(dir, 'absent.db'), 'backlinks', 'check']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no database/);
  });

  it('killed with SIGKILL mid-pass: every reported check is recorded, none is half-written, the next pass does the rest', async () => {
    const [a, b] = site.origins as [string, string];
    const backlinks: BacklinkSpec[] = [];
    for (let i = 0; i < 30; i++) {
      const origin = i % 2 ? a : b;
      // Slow pages, so the kill lands while fetches are in flight.
      site.route(`${origin}/slow${i}`, (_req, res) => {
        setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(`<a href="${TARGET}">g</a>`), 80);
      });
      backlinks.push({ id: `bl_k${String(i).padStart(2, '0')}`, sourceUrl: `${origin}/slow${i}` });
    }
    const db = await database('killed', backlinks);
    const child = spawn(process.execPath, [await cliBundle(), '--config', config, '--db', db, 'backlinks', 'check'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH },
    });
    let stderr = '';
    const reported = await new Promise<string[]>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const lines = stderr.split('\n').filter((l) => /^\[\d+\/30\] /.test(l));
        if (lines.length >= 6 && child.exitCode === null) {
          child.kill('SIGKILL');
          resolve(lines);
        }
      });
      child.once('exit', (code, signal) =>
        signal === 'SIGKILL' ? undefined : reject(new Error(`exited ${code} before the kill: ${stderr}`)),
      );
    });
    await new Promise((resolve) => child.once('close', resolve));
    const recorded = await withStore(db, async (store) => {
      await assertConsistent(store);
      return (await sqlAll(store, 'SELECT backlink_id AS id, status FROM backlink_checks')) as {
        id: string;
        status: string;
      }[];
    });
    const byId = new Map(recorded.map((r) => [r.id, r.status]));
    for (const line of reported) {
      const [, id, status] = /^\[\d+\/30\] (\S+) (\w+)/.exec(line)!;
      assert.equal(byId.get(id!), status, `${id} was reported ${status} before the kill`);
    }
    assert.ok(recorded.length < 30, 'the kill came mid-pass');
    const rest = await cli(['--db', db, 'backlinks', 'check']);
    assert.equal(rest.code, 0, rest.stderr);
    assert.match(rest.stdout, new RegExp(`^checked +${30 - recorded.length}\\n`));
    await withStore(db, async (store) => {
      await assertConsistent(store);
      const perBacklink = (await sqlAll(store, 'SELECT count(*) AS n FROM backlink_checks GROUP BY backlink_id')) as {
        n: number;
      }[];
      assert.equal(perBacklink.length, 30);
      assert.ok(
        perBacklink.every((r) => r.n === 1),
        'exactly one check per backlink over the two passes',
      );
    });
  });
});
