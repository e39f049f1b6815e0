/**
 * `npm start` (the README's demo command) and signals: npm runs the script through `sh -c`, and a
 * SIGTERM sent to npm reached only that shell, which died and left the server running, orphaned.
 * The script `exec`s node, so npm's signal reaches the server itself and it stops.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('npm start', () => {
  it('stops the server when npm is sent SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outreach-npm-start-'));
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: { ...process.env, OUTREACH_API_DB: join(dir, 'demo.db'), OUTREACH_API_SERVER_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so the cleanup below also ends a server that outlived npm.
      detached: true,
    });
    try {
      let out = '';
      const origin = await new Promise<string>((resolve, reject) => {
        npm.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /listening on (http:\/\/\S+)/.exec(out);
          if (match) resolve(match[1]!);
        });
        npm.once('exit', () => reject(new Error(`npm start exited before listening:\n${out}`)));
      });
      assert.equal((await fetch(`${origin}/healthz`)).status, 200);
      const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
      npm.kill('SIGTERM');
      await exited;
      // The server was npm's (exec'd) child: it stops too, and nothing answers on its port
      // (polled for up to 10 s; before the fix it answered for ever).
      const deadline = Date.now() + 10_000;
      let answering = true;
      while (answering && Date.now() < deadline) {
        answering = await fetch(`${origin}/healthz`).then(
          () => true,
          () => false,
        );
        if (answering) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(answering, false, 'the server still answers after npm was stopped');
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // The group is gone already: nothing outlived npm.
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
