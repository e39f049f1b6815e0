/**
 * Load generation against one target (the server or a floor):
 *
 * - `peak`: autocannon, keep-alive, `connections` concurrent connections, closed loop: the
 *   highest rate the target sustains. Latencies are taken from autocannon's per-response
 *   timings (floats, ms), not its histogram, which rounds to whole milliseconds.
 * - `paced`: an open-loop client sending at a fixed rate (half the peak), requests spread evenly
 *   over time (a batch every millisecond at most), over a pool of raw keep-alive connections.
 *   autocannon's own
 *   `overallRate`/`connectionRate` are not used: they let each connection send its whole
 *   per-second budget back to back at the start of every second and then stall, so the target
 *   sees bursts at full concurrency, and the queueing this run is meant to remove comes back.
 *
 * Both report the target's CPU use (from /proc) and this process's, so a run whose client was
 * the bottleneck can be told apart.
 */
import autocannon from 'autocannon';
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import type { Endpoint } from './endpoints.js';
import { AUTH_HEADERS, WRITE_HEADERS } from './endpoints.js';

export interface RunResult {
  rps: number;
  requests: number;
  /** Non-2xx answers and transport errors (a healthy run has none). */
  failures: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  seconds: number;
  /** CPU of the target process, in cores (1.0 = one core busy all the time). */
  targetCpu: number | null;
  /** CPU of the load client (this process), in cores. */
  clientCpu: number;
  /**
   * CPU of the processes the target works through, in cores (`setHelperProcesses`: PostgreSQL's
   * backends of the bench database, nginx, a second instance); null when there are none (SQLite).
   */
  helperCpu: number | null;
  /**
   * The rest of the machine's CPU use during the run, in cores: kernel work (loopback
   * networking) and any other process. Much above ~0.3 means something else was running and
   * the run is not to be trusted.
   */
  otherCpu: number | null;
}

const CLK_TCK = 100;

/** User+system CPU ticks of `pid` so far. */
export function cpuTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

class Latencies {
  private values = new Float64Array(1 << 16);
  private n = 0;
  add(ms: number): void {
    if (this.n === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.n++] = ms;
  }
  summary() {
    const sorted = this.values.slice(0, this.n).sort();
    return {
      count: this.n,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted[this.n - 1] ?? NaN,
    };
  }
}

/** Busy CPU ticks of the whole machine (all cores), from /proc/stat. */
export function machineBusyTicks(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
    return user! + nice! + system! + irq! + softirq! + steal!;
  } catch {
    return null;
  }
}

/** Busy cores of the whole machine over the next `ms`. */
export async function machineLoad(ms = 300): Promise<number | null> {
  const t0 = performance.now();
  const a = machineBusyTicks();
  await new Promise((done) => setTimeout(done, ms));
  const b = machineBusyTicks();
  return a === null || b === null ? null : (b - a) / CLK_TCK / ((performance.now() - t0) / 1000);
}

/**
 * Waits (at most `maxMs`) until the machine is quiet: under `threshold` busy cores while the bench
 * itself is idle, so another process's work does not land in a measurement. On a shared machine.
 * @returns the ms waited and whether it got quiet.
 */
export async function waitForQuiet(
  maxMs: number,
  threshold = 0.25,
): Promise<{ waitedMs: number; quiet: boolean; load: number | null }> {
  const t0 = performance.now();
  for (;;) {
    const load = await machineLoad();
    if (load === null || load < threshold) return { waitedMs: performance.now() - t0, quiet: true, load };
    if (performance.now() - t0 >= maxMs) return { waitedMs: performance.now() - t0, quiet: false, load };
    await new Promise((done) => setTimeout(done, 700));
  }
}

let helperProcesses: (() => number[]) | null = null;

/**
 * Names the processes the target works through (their pids, listed at the start and the end of
 * each run), so that their CPU is reported as `helperCpu` rather than counted as another
 * process's (`otherCpu`); null for none. A helper that starts during a run counts from 0.
 */
export function setHelperProcesses(list: (() => number[]) | null): void {
  helperProcesses = list;
}

function measureCpu(pid: number | undefined) {
  const t0 = performance.now();
  const target0 = pid ? cpuTicks(pid) : null;
  const helpers = helperProcesses;
  const helpers0 = new Map((helpers?.() ?? []).map((p) => [p, cpuTicks(p) ?? 0]));
  const machine0 = machineBusyTicks();
  const client0 = process.cpuUsage();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const target1 = pid ? cpuTicks(pid) : null;
    const machine1 = machineBusyTicks();
    const client = process.cpuUsage(client0);
    const targetCpu = target0 !== null && target1 !== null ? (target1 - target0) / CLK_TCK / seconds : null;
    const clientCpu = (client.user + client.system) / 1e6 / seconds;
    const machineCpu = machine0 !== null && machine1 !== null ? (machine1 - machine0) / CLK_TCK / seconds : null;
    let helperCpu: number | null = null;
    if (helpers) {
      let ticks = 0;
      for (const p of new Set([...helpers0.keys(), ...helpers()]))
        ticks += Math.max(0, (cpuTicks(p) ?? helpers0.get(p) ?? 0) - (helpers0.get(p) ?? 0));
      helperCpu = ticks / CLK_TCK / seconds;
    }
    return {
      seconds,
      targetCpu,
      clientCpu,
      helperCpu,
      otherCpu: machineCpu === null ? null : Math.max(0, machineCpu - (targetCpu ?? 0) - clientCpu - (helperCpu ?? 0)),
    };
  };
}

let requestCounter = 0;

/** Closed-loop peak run with autocannon. */
export async function peak(
  origin: string,
  endpoint: Endpoint,
  options: { connections: number; seconds: number; pid?: number },
): Promise<RunResult> {
  const latencies = new Latencies();
  let failures = 0;
  const write = endpoint.request;
  const instance = autocannon({
    url: origin,
    connections: options.connections,
    duration: options.seconds,
    pipelining: 1,
    timeout: 30,
    requests: [
      write
        ? {
            method: endpoint.method,
            headers: WRITE_HEADERS,
            setupRequest: (req: Record<string, unknown>) => {
              const next = write(requestCounter++);
              return { ...req, path: next.url, body: next.body };
            },
          }
        : { method: endpoint.method, path: endpoint.url, headers: endpoint.headers ?? AUTH_HEADERS },
    ],
  } as autocannon.Options);
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.add(ms);
    else failures++;
  });
  const done = measureCpu(options.pid);
  const result = await instance;
  const cpu = done();
  const s = latencies.summary();
  return {
    rps: s.count / cpu.seconds,
    requests: s.count,
    failures: failures + result.errors + result.timeouts,
    p50: s.p50,
    p90: s.p90,
    p99: s.p99,
    max: s.max,
    ...cpu,
  };
}

/**
 * One keep-alive HTTP/1.1 connection with at most one request in flight, reading responses with
 * a minimal parser (status line, `Content-Length` or chunked body): far cheaper per request than
 * `node:http`, so the client's own delays stay out of the latencies.
 */
class Connection {
  private socket: Socket;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: ((status: number) => void) | null = null;
  busy = false;
  closed = false;

  constructor(host: string, port: number) {
    this.socket = connect({ host, port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
      this.parse();
    });
    const fail = () => {
      this.closed = true;
      const done = this.pending;
      this.pending = null;
      done?.(0);
    };
    this.socket.on('error', fail);
    this.socket.on('close', fail);
  }

  send(head: string, body: string | undefined, done: (status: number) => void): void {
    this.busy = true;
    this.pending = (status) => {
      this.busy = false;
      done(status);
    };
    this.socket.write(body === undefined ? head : head + body);
  }

  private parse(): void {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0 || !this.pending) return;
    const head = this.buffer.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    let total: number;
    if (length) total = end + 4 + Number(length[1]);
    else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const last = this.buffer.indexOf('\r\n0\r\n\r\n', end);
      if (last < 0) return;
      total = last + 7;
    } else total = end + 4;
    if (this.buffer.length < total) return;
    this.buffer = this.buffer.subarray(total);
    const done = this.pending;
    this.pending = null;
    done(status);
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * Open-loop run at `rate` requests/s for `seconds`, evenly spaced, over a pool of keep-alive
 * connections (a request due while every connection is busy waits for one). `p50`/`p99`: from
 * sending a request to its complete response. `dueP99`: from the time it was due (so client-side
 * waiting counts too: a target that cannot keep up shows here).
 */
export async function paced(
  origin: string,
  endpoint: Endpoint,
  options: { rate: number; seconds: number; pid?: number; connections?: number },
): Promise<RunResult & { dueP99: number }> {
  const url = new URL(origin);
  const pool = Array.from({ length: options.connections ?? 32 }, () => new Connection(url.hostname, Number(url.port)));
  await new Promise((done) => setTimeout(done, 50));
  const latencies = new Latencies();
  const fromDue = new Latencies();
  let failures = 0;
  let inFlight = 0;
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const waiting: number[] = [];
  let scheduled = 0;
  const headers = Object.entries(endpoint.request ? WRITE_HEADERS : (endpoint.headers ?? AUTH_HEADERS))
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');

  const fire = (conn: Connection, due: number) => {
    const write = endpoint.request?.(requestCounter++);
    const path = write?.url ?? endpoint.url;
    const length = write ? `content-length: ${Buffer.byteLength(write.body)}\r\n` : '';
    const sentAt = performance.now();
    inFlight++;
    conn.send(
      `${endpoint.method} ${path} HTTP/1.1\r\nhost: ${url.host}\r\n${headers}${length}\r\n`,
      write?.body,
      (status) => {
        const now = performance.now();
        inFlight--;
        if (status >= 200 && status < 300) {
          latencies.add(now - sentAt);
          fromDue.add(now - due);
        } else failures++;
        dispatch();
      },
    );
  };
  const dispatch = () => {
    while (waiting.length) {
      const conn = pool.find((c) => !c.busy && !c.closed);
      if (!conn) return;
      fire(conn, waiting.shift()!);
    }
  };

  const done = measureCpu(options.pid);
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * options.rate) + 1);
      while (scheduled < due) waiting.push(start + (scheduled++ * 1000) / options.rate);
      dispatch();
      if (scheduled < total) setTimeout(tick, 1);
      else {
        const drain = () => (inFlight === 0 && waiting.length === 0 ? resolve() : setTimeout(drain, 2));
        drain();
      }
    };
    tick();
  });
  const cpu = done();
  for (const c of pool) c.close();
  const s = latencies.summary();
  return {
    rps: s.count / cpu.seconds,
    requests: s.count,
    failures,
    p50: s.p50,
    p90: s.p90,
    p99: s.p99,
    max: s.max,
    dueP99: fromDue.summary().p99,
    ...cpu,
  };
}
