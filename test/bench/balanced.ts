/**
 * Instances behind nginx (decisions.md §16, issue #20 "req/s with 1 and 2 instances behind
 * nginx"): the shipped deploy/nginx.conf (test/helpers/nginx.ts: its upstreams replaced by the
 * bench's instances) in front of 1, then 2 `serve` instances on the same database, each with the
 * bench's configuration (limiter off), and a peak run of each endpoint through it.
 *
 * The CPU of the whole set (the instances, nginx's processes, and PostgreSQL's backends when the
 * store is PostgreSQL) is reported as target + helpers: on the 2-core bench machine the load
 * client takes about one core, so two instances share the other with nginx and the database, and
 * the figure shows what the topology costs here rather than what two machines would give.
 */
import { appendFileSync } from 'node:fs';
import { startNginx } from '../helpers/nginx.js';
import type { Endpoint } from './endpoints.js';
import { peak, setHelperProcesses, type RunResult } from './load.js';
import { childrenOf } from './postgres.js';
import { startServer, type Child } from './processes.js';

export interface BalancedRun {
  endpoint: string;
  instances: number;
  run: RunResult;
}

/**
 * Peak runs of `endpoints` through nginx in front of each count of `instances` (e.g. [1, 2]):
 * `first` is the running server, more are started with `command` on `db` and stopped after.
 * `helpers` lists the processes (pids) already counted with the target (PostgreSQL's backends), or
 * null; it is what `setHelperProcesses` is left with.
 */
export async function balancedRuns(options: {
  command: string[];
  db: string;
  config: string;
  logFile: string;
  first: Child;
  instances: number[];
  endpoints: Endpoint[];
  connections: number;
  seconds: number;
  helpers: (() => number[]) | null;
  /** Where nginx's error log goes when a run had failures. */
  nginxLog: string;
  quiet: (label: string) => Promise<void>;
  log: (line: string) => void;
}): Promise<BalancedRun[]> {
  const servers: Child[] = [options.first];
  const runs: BalancedRun[] = [];
  try {
    for (const n of options.instances) {
      while (servers.length < n)
        servers.push(
          await startServer(options.command, { db: options.db, config: options.config, logFile: options.logFile }),
        );
      const upstreams = servers.slice(0, n).map((s) => new URL(s.origin).host);
      const nginx = await startNginx(upstreams);
      const others = servers.slice(1, n).map((s) => s.pid);
      setHelperProcesses(() => [...(options.helpers?.() ?? []), ...others, nginx.pid, ...childrenOf(nginx.pid)]);
      try {
        for (const e of options.endpoints) {
          const label = `${e.name} (${n} instance${n > 1 ? 's' : ''} behind nginx)`;
          await options.quiet(label);
          await peak(nginx.origin, e, { connections: options.connections, seconds: 1, pid: options.first.pid });
          const run = await peak(nginx.origin, e, {
            connections: options.connections,
            seconds: options.seconds,
            pid: options.first.pid,
          });
          runs.push({ endpoint: e.name, instances: n, run });
          options.log(
            `${label}: ${run.rps.toFixed(0)} req/s, p99 ${run.p99.toFixed(2)} ms, cpu ${((run.targetCpu ?? 0) + (run.helperCpu ?? 0)).toFixed(2)}${run.failures ? `, ${run.failures} failures` : ''}`,
          );
        }
        if (runs.some((r) => r.instances === n && r.run.failures > 0))
          appendFileSync(options.nginxLog, `--- ${n} instance(s)\n${nginx.errorLog()}`);
      } finally {
        await nginx.stop();
      }
    }
  } finally {
    setHelperProcesses(options.helpers);
    for (const s of servers.slice(1)) await s.stop();
  }
  return runs;
}
