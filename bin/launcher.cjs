#!/usr/bin/env node
'use strict';
/**
 * The npm package's `outreach-api` command (issue #29): runs the program bin/platform.cjs picks
 * (this platform's single executable, `OUTREACH_API_BINARY`, or the JavaScript bundle under this
 * Node) with this command line and stdio inherited. SIGINT, SIGTERM and SIGHUP sent to the
 * launcher are passed on; the launcher exits with the program's exit code, or dies of the signal
 * that ended it. Run by npm (npx), it also sends SIGTERM when its parent, npm's shell, is gone. A
 * program that cannot be found or started: one line on stderr, exit 1.
 * Dependency-free CommonJS: nothing is compiled or loaded but Node's own modules.
 */
const { spawn } = require('node:child_process');
const { serverCommand } = require('./platform.cjs');

/** How often the launcher run by npm checks that its parent is still there, ms. */
const PARENT_POLL_MS = 200;

/** @param {string} message */
const fail = (message) => {
  process.stderr.write(`outreach-api: ${message}\n`);
  process.exit(1);
};

const found = serverCommand();
if ('error' in found) fail(found.error);
else {
  const child = spawn(found.command, [...found.args, ...process.argv.slice(2)], { stdio: 'inherit' });
  /** @type {NodeJS.Signals[]} */
  const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  /** @param {NodeJS.Signals} signal */
  const forward = (signal) => {
    child.kill(signal);
  };
  for (const signal of forwarded) process.on(signal, forward);
  // Under npx, `npm exec` and `npm run`, npm starts the launcher through a shell, which dies of a
  // SIGTERM sent to npm without passing it on: when that parent goes, stop the program as SIGTERM would.
  if (process.env.npm_command) {
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(watch);
      child.kill('SIGTERM');
    }, PARENT_POLL_MS);
    watch.unref();
  }
  child.on('error', (error) => fail(`cannot run ${found.command}: ${error.message}`));
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // Die of the same signal, so whoever started the launcher sees what ended the program.
    for (const name of forwarded) process.off(name, forward);
    process.kill(process.pid, signal);
  });
}
