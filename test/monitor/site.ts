/**
 * A local test site for the backlink monitor: one HTTP server answering on several loopback
 * addresses (127.0.0.0/8), each a distinct host to the monitor, with scriptable routes and its
 * own log of every request (host, path, user agent, when it arrived and when its answer ended).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server, type AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface SiteRequest {
  /** `127.0.0.2:41234` */
  host: string;
  /** Path and query. */
  path: string;
  userAgent: string;
  /** `performance.now()` when the request arrived and when its answer ended (or the socket closed). */
  start: number;
  end: number | null;
}

export interface TestSite {
  /** `http://127.0.0.N:PORT` of each address given, in order. */
  origins: string[];
  /** Answers `origin + path` (path with its query) with `handler`; unrouted requests get 404. */
  route(url: string, handler: Handler): void;
  log: SiteRequest[];
  /** Requests of `origin` (all paths), in arrival order. */
  requestsTo(origin: string): SiteRequest[];
  close(): Promise<void>;
}

/** An HTML answer. */
export const html =
  (body: string, headers: Record<string, string> = {}, status = 200): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
    res.end(body);
  };

/** A redirect to `location`. */
export const redirect =
  (location: string, status = 302): Handler =>
  (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };

/** A bare status. */
export const status =
  (code: number, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(code, headers);
    res.end();
  };

/**
 * Starts the site on `addresses` (each listens on its own free port). `fallback` answers the
 * requests no route names (default 404); `keepLog` false keeps no log (long benchmark runs).
 */
export async function startTestSite(
  addresses: string[],
  options: { fallback?: Handler; keepLog?: boolean } = {},
): Promise<TestSite> {
  const routes = new Map<string, Handler>();
  const log: SiteRequest[] = [];
  const http = createServer((req, res) => {
    const entry: SiteRequest = {
      host: req.headers.host ?? '',
      path: req.url ?? '',
      userAgent: req.headers['user-agent'] ?? '',
      start: performance.now(),
      end: null,
    };
    if (options.keepLog !== false) log.push(entry);
    const finish = () => (entry.end ??= performance.now());
    res.on('finish', finish);
    res.on('close', finish);
    const handler = routes.get(`http://${entry.host}${entry.path}`);
    if (handler) handler(req, res);
    else if (options.fallback) options.fallback(req, res);
    else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  http.keepAliveTimeout = 2000;
  const listeners: Server[] = [];
  const origins: string[] = [];
  for (const address of addresses) {
    const tcp = createTcpServer((socket) => http.emit('connection', socket));
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(0, address, () => resolve());
    });
    listeners.push(tcp);
    origins.push(`http://${address}:${(tcp.address() as AddressInfo).port}`);
  }
  return {
    origins,
    route: (url, handler) => routes.set(url, handler),
    log,
    requestsTo: (origin) => log.filter((r) => `http://${r.host}` === origin),
    async close() {
      http.closeAllConnections();
      await Promise.all(listeners.map((l) => new Promise<void>((resolve) => l.close(() => resolve()))));
    },
  };
}
