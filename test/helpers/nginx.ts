/**
 * A real nginx in front of test instances, running the shipped `deploy/nginx.conf` (decisions.md
 * §16): that file's upstream `server` lines are replaced by the instances' addresses and its
 * `listen` line by a free loopback port; nothing else of it changes. It is included from a main
 * configuration of the test's own (pid file, error log, temporary paths in a fresh prefix
 * directory) and run in the foreground (`-g 'daemon off;'`) as a child process.
 *
 * Needs Debian's nginx (`serviceSkip('nginx')`).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../build/bundle.js';
import { freePort, waitForPort } from './ports.js';

export const NGINX = '/usr/sbin/nginx';
/** The shipped configuration the tests run. */
export const NGINX_CONF = join(ROOT, 'deploy/nginx.conf');

export interface Nginx {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** The master process's pid (its workers are its children). */
  pid: number;
  /** The configuration file as run (deploy/nginx.conf with the test's upstreams and port). */
  conf: string;
  /** What nginx wrote to its error log so far. */
  errorLog(): string;
  /** Stops nginx (SIGQUIT, then SIGKILL after 5 s) and removes its prefix directory. */
  stop(): Promise<void>;
}

/**
 * `deploy/nginx.conf` with its upstream `server` lines replaced by one per address of `upstreams`
 * (`host:port`, keeping the file's parameters: `max_fails`, `fail_timeout`) and its `listen`
 * line by `listen 127.0.0.1:PORT`.
 * @throws when the file no longer has the upstream block or the listen line this expects.
 */
export function nginxConfFor(upstreams: string[], port: number, text = readFileSync(NGINX_CONF, 'utf8')): string {
  const serverLine = /^( *)server \S+:\d+( [^;\n]*)?;\n/gm;
  const found = [...text.matchAll(serverLine)];
  if (found.length === 0) throw new Error('deploy/nginx.conf: no upstream server line');
  const [indent, params] = [found[0]![1]!, found[0]![2] ?? ''];
  const first = found[0]!.index;
  const last = found[found.length - 1]!;
  const servers = upstreams.map((address) => `${indent}server ${address}${params};\n`).join('');
  let conf = text.slice(0, first) + servers + text.slice(last.index + last[0].length);
  const listen = /^( *)listen [^;\n]+;$/m;
  if (!listen.test(conf)) throw new Error('deploy/nginx.conf: no listen line');
  conf = conf.replace(listen, `$1listen 127.0.0.1:${port};`);
  return conf;
}

/** Starts nginx in front of `upstreams` (`host:port` each); resolves once it listens. */
export async function startNginx(upstreams: string[]): Promise<Nginx> {
  const prefix = mkdtempSync(join(tmpdir(), 'outreach-nginx-'));
  // Worker processes run as `nobody` when nginx starts as root: they need the temporary paths.
  chmodSync(prefix, 0o755);
  for (const dir of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    mkdirSync(join(prefix, dir));
    chmodSync(join(prefix, dir), 0o777);
  }
  const port = await freePort();
  const conf = nginxConfFor(upstreams, port);
  writeFileSync(join(prefix, 'outreach-api.conf'), conf);
  const main = [
    'worker_processes 1;',
    `pid ${join(prefix, 'nginx.pid')};`,
    `error_log ${join(prefix, 'error.log')} warn;`,
    'events { worker_connections 1024; }',
    'http {',
    '  access_log off;',
    ...['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (dir) => `  ${dir === 'body' ? 'client_body' : dir}_temp_path ${join(prefix, dir)};`,
    ),
    `  include ${join(prefix, 'outreach-api.conf')};`,
    '}',
    '',
  ].join('\n');
  writeFileSync(join(prefix, 'nginx.conf'), main);
  const child = spawn(NGINX, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const closed = new Promise<void>((done) => child.once('close', () => done()));
  const errorLog = () => {
    try {
      return readFileSync(join(prefix, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  };
  try {
    await waitForPort(port, {
      name: 'nginx',
      timeoutMs: 15_000,
      exited: () =>
        child.exitCode !== null || child.signalCode !== null
          ? `${child.exitCode ?? child.signalCode}: ${stderr}${errorLog()}`
          : null,
    });
  } catch (error) {
    kill();
    await closed;
    rmSync(prefix, { recursive: true, force: true });
    throw error;
  }
  return {
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    conf,
    errorLog,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGQUIT');
        const timer = setTimeout(kill, 5000);
        await closed;
        clearTimeout(timer);
      }
      process.off('exit', kill);
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
