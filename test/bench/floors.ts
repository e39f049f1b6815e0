/**
 * The two floors, each a plain `node:http` server run as its own process (so it gets a core of
 * its own, like the real server), answering the bench's endpoints:
 *
 * - static: the pre-serialized JSON body the real server gave for that endpoint (same bytes, so
 *   the same size), with nothing computed per request. What Node's HTTP stack costs.
 * - direct: the endpoint's page SQL (captured from the real app, see capture.ts) run through
 *   prepared better-sqlite3 statements with the captured parameters, and the rows
 *   JSON.stringify'd in an envelope with a constant `total`. No auth, router, validation or
 *   mapping. What Node plus SQLite cost.
 *
 *   node --import tsx test/bench/floors.ts <spec.json>
 *
 * The spec (written by run.ts) names the mode, the database and the routes. Prints
 * `listening <port>` on stdout once it accepts connections.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FloorRoute {
  method: string;
  /** Exact path with query (GET), or null to answer every request of `method` (writes, whose ids vary). */
  url: string | null;
  /** static: the body to send. */
  body?: string;
  /** direct: the statements that produce the page, with their parameters as captured. */
  statements?: { sql: string; params: unknown[] }[];
  /** direct: the envelope's pagination, `total` constant. */
  pagination?: { page: number; limit: number; total: number; hasMore: boolean };
}

export interface FloorSpec {
  mode: 'static' | 'direct';
  db?: string;
  routes: FloorRoute[];
}

type Handler = (res: ServerResponse) => void;

function send(res: ServerResponse, body: string | Buffer): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

async function main(specPath: string): Promise<void> {
  const spec = JSON.parse(readFileSync(specPath, 'utf8')) as FloorSpec;
  const exact = new Map<string, Handler>();
  const byMethod = new Map<string, Handler>();
  let db: import('better-sqlite3').Database | undefined;
  if (spec.mode === 'direct') {
    const { default: Database } = await import('better-sqlite3');
    db = new Database(spec.db!, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
  }
  for (const route of spec.routes) {
    let handler: Handler;
    if (spec.mode === 'static') {
      const body = Buffer.from(route.body ?? '{}');
      handler = (res) => send(res, body);
    } else {
      const statements = route.statements!.map((s) => ({ stmt: db!.prepare(s.sql), params: s.params }));
      const pagination = route.pagination!;
      handler =
        statements.length === 1
          ? (res) => send(res, JSON.stringify({ ok: true, data: { data: statements[0]!.stmt.all(...statements[0]!.params), pagination } }))
          : (res) => send(res, JSON.stringify({ ok: true, data: { results: statements.map((s) => s.stmt.all(...s.params)), pagination } }));
    }
    if (route.url === null) byMethod.set(route.method, handler);
    else exact.set(`${route.method} ${route.url}`, handler);
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const handler = exact.get(`${req.method} ${req.url}`) ?? byMethod.get(req.method!);
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    if (req.method === 'GET') return handler(res);
    // A write: read the body first, as a server must.
    req.on('data', () => {});
    req.on('end', () => handler(res));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
  process.on('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    db?.close();
    process.exit(0);
  });
}

main(process.argv[2]!).catch((error: unknown) => {
  process.stderr.write(`floors: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
