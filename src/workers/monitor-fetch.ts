/**
 * How the backlink monitor fetches (decisions.md §13 "Fetching"): pages through the project's
 * safe fetch (`../providers/safe-fetch.ts`: the crawl finder's address rules, checked after DNS
 * resolution and on every redirect), streamed into the link scanner so that at most
 * `monitor.maxBytes` per fetch is ever read, and never held; `robots.txt` read once per origin
 * per pass; and a scheduler that keeps `monitor.concurrency` fetches going, one at a time per
 * host, with `monitor.perHostDelayMs` between two fetches from one host.
 */
import http from 'node:http';
import https from 'node:https';
import robotsParserModule from 'robots-parser';
import type { Config } from '../config.js';
import {
  decoderFor,
  discard,
  readBody,
  type SafeOpenOptions,
  type SafeResponse,
  safeOpen,
} from '../providers/safe-fetch.js';
import { MAX_OPEN_ELEMENTS } from '../providers/bounded-html.js';
import { VERSION } from '../version.js';
import { headerNofollow, LinkScanner } from './monitor-links.js';
import type { FetchOutcome } from './monitor-rules.js';

/** The `robots.txt` user-agent token of the monitor (decisions.md §13). */
export const ROBOTS_TOKEN = 'outreach-api-monitor';
/** The part of a `robots.txt` that is read (RFC 9309 asks crawlers to read at least 500 KiB). */
export const ROBOTS_MAX_BYTES = 512 * 1024;
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** A parsed robots.txt (the package's `Robot`). */
interface Robots {
  isAllowed(url: string, ua?: string): boolean | undefined;
}
// robots-parser is CommonJS (`module.exports = function`), which its typings declare as a default
// export; under NodeNext that default is the whole module, so the call is typed by hand here.
const robotsParser = robotsParserModule as unknown as (url: string, contents: string) => Robots;
/** A host's robots.txt as a pass knows it: rules, "none" (allow all), or why it could not be read. */
type RobotsEntry = { rules: Robots | null } | { unreadable: string };

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Fetches for one pass: a keep-alive connection pool (closed by `close()`) and the pass's
 * robots.txt cache, so each origin's robots.txt is read once per pass.
 */
export class PageFetcher {
  private readonly options: SafeOpenOptions;
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxFreeSockets: 1 }),
    https: new https.Agent({ keepAlive: true, maxFreeSockets: 1 }),
  };
  private readonly robots = new Map<string, RobotsEntry>();
  private readonly robotsAsked = new Set<string>();

  constructor(private readonly monitor: Config['monitor']) {
    this.options = {
      allowPrivateNetworks: monitor.allowPrivateNetworks,
      maxRedirects: monitor.maxRedirects,
      maxBytes: monitor.maxBytes,
      timeoutMs: monitor.timeoutMs,
      headers: { 'user-agent': monitor.userAgent || `${ROBOTS_TOKEN}/${VERSION}` },
      agents: this.agents,
    };
  }

  /**
   * The task that reads the robots.txt of `url`'s origin, the first time this pass asks for that
   * origin; null after that, or when `monitor.respectRobotsTxt` is false.
   */
  robotsTask(url: string): (() => Promise<void>) | null {
    const origin = originOf(url);
    if (!this.monitor.respectRobotsTxt || this.robotsAsked.has(origin)) return null;
    this.robotsAsked.add(origin);
    return () => this.readRobots(origin);
  }

  /**
   * Reads the robots.txt of `origin` into the pass's cache: 2xx → its rules; another 4xx
   * → no rules (RFC 9309: allow all); 5xx, 429 or no response → unreadable, and that origin's
   * pages are not fetched this pass (their checks end in `error`).
   */
  private async readRobots(origin: string): Promise<void> {
    const robotsUrl = `${origin}/robots.txt`;
    let entry: RobotsEntry;
    try {
      const response = await safeOpen(robotsUrl, { ...this.options, maxBytes: ROBOTS_MAX_BYTES });
      if (response.status >= 200 && response.status < 300) {
        // Only the first ROBOTS_MAX_BYTES are read; the rest is cut off, not an error.
        const chunks: Buffer[] = [];
        let size = 0;
        await readBody(response, Number.MAX_SAFE_INTEGER, (chunk) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= ROBOTS_MAX_BYTES) response.body.destroy();
        }).catch((error: unknown) => {
          if (size < ROBOTS_MAX_BYTES) throw error;
        });
        const text = decoderFor(undefined).decode(Buffer.concat(chunks).subarray(0, ROBOTS_MAX_BYTES));
        entry = { rules: robotsParser(robotsUrl, text) };
      } else {
        discard(response);
        entry =
          response.status >= 500 || response.status === 429
            ? { unreadable: `robots.txt answered HTTP ${response.status}` }
            : { rules: null };
      }
    } catch (error) {
      entry = { unreadable: `robots.txt could not be read: ${message(error)}` };
    }
    this.robots.set(origin, entry);
  }

  /**
   * Fetches `sourceUrl` and looks for `targetUrl` on it (decisions.md §13). Never throws: every
   * failure is a `failed` outcome. Run the origin's `robotsTask` first.
   */
  async check(sourceUrl: string, targetUrl: string): Promise<FetchOutcome> {
    if (this.monitor.respectRobotsTxt) {
      const entry = this.robots.get(originOf(sourceUrl));
      if (entry && 'unreadable' in entry)
        return { kind: 'failed', reason: entry.unreadable, finalSourceUrl: null, httpStatus: null };
      if (entry?.rules && entry.rules.isAllowed(sourceUrl, ROBOTS_TOKEN) === false) return { kind: 'disallowed' };
    }
    let response: SafeResponse;
    try {
      response = await safeOpen(sourceUrl, this.options);
    } catch (error) {
      return { kind: 'failed', reason: message(error), finalSourceUrl: null, httpStatus: null };
    }
    const { url: finalSourceUrl, status: httpStatus, headers } = response;
    const contentType = String(headers['content-type'] ?? '');
    if (httpStatus < 200 || httpStatus > 299 || !HTML_TYPES.has(contentType.split(';')[0]!.trim().toLowerCase())) {
      discard(response);
      return { kind: 'response', finalSourceUrl, httpStatus, scan: null, headerNofollow: false };
    }
    const scanner = new LinkScanner(targetUrl, finalSourceUrl);
    const decoder = decoderFor(contentType);
    try {
      await readBody(response, this.monitor.maxBytes, (chunk) =>
        scanner.write(decoder.decode(chunk, { stream: true })),
      );
      await scanner.write(decoder.decode());
    } catch (error) {
      return { kind: 'failed', reason: message(error), finalSourceUrl, httpStatus };
    }
    const scan = scanner.end();
    if (scan.truncated && scan.match === null) {
      // Not read to the end: the link may be further on, so this is no answer, like a page over the limit.
      const reason = `the page nests more than ${MAX_OPEN_ELEMENTS} elements and was not read past that point`;
      return { kind: 'failed', reason, finalSourceUrl, httpStatus };
    }
    return {
      kind: 'response',
      finalSourceUrl,
      httpStatus,
      scan,
      headerNofollow: headerNofollow(headers['x-robots-tag']),
    };
  }

  /** Closes the pooled connections. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

/** `scheme://host:port` of a URL (the scope of a robots.txt). */
export const originOf = (url: string): string => new URL(url).origin;

/** The politeness key of a URL: its host name, lower-cased (ports and schemes share it). */
export const hostOf = (url: string): string => new URL(url).hostname;

interface HostState {
  tasks: (() => Promise<void>)[];
  busy: boolean;
  /** `performance.now()` before which the host's next fetch may not start. */
  readyAt: number;
  /** A timer is set to mark the host ready. */
  waiting: boolean;
}

/**
 * Runs tasks (each one fetch) with at most `concurrency` at once, one at a time per host, and
 * `perHostDelayMs` from the end of one task of a host to the start of its next; a host's tasks
 * run in the order they were added. The delays are real elapsed time (a politeness promise to
 * other people's servers, whatever the service's clock says). `stop()` drops the tasks not yet
 * started; `idle()` resolves when none is running or queued.
 */
export class HostScheduler {
  private readonly hosts = new Map<string, HostState>();
  private readonly ready: HostState[] = [];
  private running = 0;
  private queued = 0;
  private stopped = false;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly perHostDelayMs: number,
  ) {}

  /** Tasks queued or running. */
  get pending(): number {
    return this.queued + this.running;
  }

  /** Queues `task` for `host`. Ignored after `stop()`. */
  add(host: string, task: () => Promise<void>): void {
    if (this.stopped) return;
    let state = this.hosts.get(host);
    if (!state) {
      if (this.hosts.size >= 10_000) this.forgetIdleHosts();
      state = { tasks: [], busy: false, readyAt: 0, waiting: false };
      this.hosts.set(host, state);
    }
    state.tasks.push(task);
    this.queued++;
    if (state.tasks.length === 1 && !state.busy) this.schedule(state);
    this.pump();
  }

  /** Resolves once `pending` is at most `n`. */
  async below(n: number): Promise<void> {
    while (this.pending > n) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Resolves when nothing is queued or running. */
  idle(): Promise<void> {
    return this.below(0);
  }

  /** Drops every task not yet started; the running ones finish. */
  stop(): void {
    this.stopped = true;
    for (const state of this.hosts.values()) {
      this.queued -= state.tasks.length;
      state.tasks = [];
    }
    this.ready.length = 0;
    this.notify();
  }

  private schedule(state: HostState): void {
    const wait = state.readyAt - performance.now();
    if (wait <= 0) {
      this.ready.push(state);
      return;
    }
    if (state.waiting) return;
    state.waiting = true;
    setTimeout(() => {
      state.waiting = false;
      if (!this.stopped && state.tasks.length > 0 && !state.busy) {
        this.ready.push(state);
        this.pump();
      }
    }, Math.ceil(wait));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.ready.length > 0) {
      const state = this.ready.shift()!;
      const task = state.tasks.shift();
      if (!task) continue;
      this.queued--;
      this.running++;
      state.busy = true;
      void task()
        .catch(() => undefined)
        .finally(() => {
          this.running--;
          state.busy = false;
          state.readyAt = performance.now() + this.perHostDelayMs;
          if (state.tasks.length > 0 && !this.stopped) this.schedule(state);
          this.pump();
          this.notify();
        });
    }
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Keeps the host table small on passes over many hosts: a host idle past its delay needs no state. */
  private forgetIdleHosts(): void {
    const now = performance.now();
    for (const [host, state] of this.hosts)
      if (!state.busy && state.tasks.length === 0 && state.readyAt <= now) this.hosts.delete(host);
  }
}
