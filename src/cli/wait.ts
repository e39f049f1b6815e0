/**
 * `outreach-api wait --url URL | --ready-file PATH [--timeout 30s]` (issue #29): exits 0 as soon
 * as the server answers `GET /readyz` with 200 (docs/operating.md), and 1 with the last error at
 * the timeout. With `--ready-file` it first waits for the file `serve --ready-file` writes
 * (./ready-file.ts), then for the URL in it; the file is read again at every attempt, so a server
 * that restarts on another port is found. Prints the server's URL on stdout when it is ready.
 *
 * It needs nothing but the executable (no shell, no curl), so it is the HEALTHCHECK of an image
 * built FROM scratch. Attempts are a few ms apart (`POLL_MS`; `SLOW_POLL_MS` after
 * `FAST_POLL_FOR_MS`): a refused connection on loopback or a missing file costs next to nothing,
 * and a server that starts in 200 ms is seen within a few ms of it.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cli } from './context.js';
import { parseDuration } from './duration.js';
import { readReadyFile } from './ready-file.js';

/** Between attempts, ms, for the first `FAST_POLL_FOR_MS`. */
const POLL_MS = 5;
/** How long attempts come every `POLL_MS`, ms; then every `SLOW_POLL_MS`. */
const FAST_POLL_FOR_MS = 2000;
const SLOW_POLL_MS = 25;
/** The longest one attempt may take, ms (a server that accepts and never answers). */
const ATTEMPT_TIMEOUT_MS = 2000;
/** `--timeout`'s default, ms. */
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * One `GET url`: resolves to null on a 200, else to what went wrong (`GET … answered 503`,
 * `connect ECONNREFUSED 127.0.0.1:8080`, or `timedOut` after `timeoutMs`). Never rejects.
 */
function probe(url: URL, timeoutMs: number): Promise<{ error: string; timedOut?: true } | null> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? null : { error: `GET ${url.href} answered ${res.statusCode}` });
    });
    req.on('timeout', () => {
      resolve({ error: `GET ${url.href}: no answer within ${Math.round(timeoutMs)} ms`, timedOut: true });
      req.destroy();
    });
    req.on('error', (error) => resolve({ error: error.message }));
    req.end();
  });
}

/** A `--url` value: an http or https URL (any path; /readyz is asked of its origin). */
function parseUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('not a URL (e.g. http://127.0.0.1:8080)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('must be http or https');
  return url;
}

/** Registers `wait` on `program`: the URL goes to the CLI's stdout. */
export function registerWaitCommand(program: Command, cli: Cli): void {
  program
    .command('wait')
    .description(
      'wait until a server answers GET /readyz with 200 and print its URL; exit 1 with the last error at the timeout',
    )
    .addOption(new Option('--url <url>', "the server's URL, e.g. http://127.0.0.1:8080").argParser(parseUrl))
    .option('--ready-file <path>', 'the file serve --ready-file writes: wait for it, then for the server it names')
    .addOption(
      new Option('--timeout <duration>', 'give up after this long: 500ms, 30s, 2m')
        .default(DEFAULT_TIMEOUT_MS, '30s')
        .argParser((value: string) => {
          try {
            return parseDuration(value);
          } catch (error) {
            throw new InvalidArgumentError((error as Error).message);
          }
        }),
    )
    .action(async (options: { url?: URL; readyFile?: string; timeout: number }, command: Command) => {
      if ((options.url === undefined) === (options.readyFile === undefined))
        command.error('outreach-api: wait needs one of --url and --ready-file', { exitCode: 2 });
      const started = performance.now();
      const deadline = started + options.timeout;
      let last = 'no attempt was made';
      let attempts = 0;
      for (;;) {
        let origin: URL | undefined = options.url;
        if (options.readyFile !== undefined) {
          const read = readReadyFile(options.readyFile);
          if ('ready' in read) {
            try {
              origin = parseUrl(read.ready.url);
            } catch {
              last = `${options.readyFile} names no http URL: ${read.ready.url}`;
            }
          } else last = read.missing;
        }
        if (origin) {
          const budget = Math.max(1, Math.min(ATTEMPT_TIMEOUT_MS, deadline - performance.now()));
          const failed = await probe(new URL('/readyz', origin), budget);
          if (failed === null) {
            cli.print(origin.origin);
            return;
          }
          // An attempt cut short by the deadline says less than the one before it.
          if (!(failed.timedOut && budget < ATTEMPT_TIMEOUT_MS && attempts > 0)) last = failed.error;
          attempts++;
        }
        const now = performance.now();
        if (now >= deadline) {
          const after = options.timeout % 1000 === 0 ? `${options.timeout / 1000} s` : `${options.timeout} ms`;
          throw cli.fail(`not ready after ${after}: ${last}`);
        }
        await sleep(Math.min(now - started < FAST_POLL_FOR_MS ? POLL_MS : SLOW_POLL_MS, deadline - now));
      }
    });
}
