/**
 * The three floors, each a server run as its own process (so it gets a core of its own, like the
 * real server), answering the bench's endpoints:
 *
 * - static: a plain `node:http` server answering the pre-serialized JSON body the real server gave
 *   for that endpoint (same bytes, so the same size), with nothing computed per request. What
 *   Node's HTTP stack costs.
 * - framework: a bare Hono app on @hono/node-server (the adapter and router the real server
 *   uses, no middleware) answering the same bytes on the same path. What the framework costs on
 *   top of Node: a Web `Request`/`Response` pair and a route match per request.
 * - direct: a plain `node:http` server running the endpoint's page SQL (captured from the real app, see capture.ts) run through
 *   prepared better-sqlite3 statements with the captured parameters, and the rows
 *   JSON.stringify'd in an envelope with a constant `total` (rows the store wrote as JSON text
 *   joined as they are, as the server does: `envelopeOf`). No auth, router, validation or
 *   mapping. What Node plus SQLite cost. On PostgreSQL (`db` a postgres:// URL, `--store
 *   postgres`): the same statements, as captured, run through a `pg` pool of `poolSize`
 *   connections (the server's `db.poolSize`), with the same parsing of counts as the server's
 *   store (`int8` as numbers). What Node plus PostgreSQL cost.
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
  /**
   * direct: the one statement's rows are the store's JSON text of each item (`{ item }`,
   * src/db/json-rows.ts), as captured: they go into the answer as they are, as the server puts them.
   */
  jsonItems?: boolean;
}

export interface FloorSpec {
  mode: 'static' | 'framework' | 'direct';
  /** direct: the SQLite file, or a PostgreSQL URL. */
  db?: string;
  /** direct on PostgreSQL: connections of the pool. */
  poolSize?: number;
  routes: FloorRoute[];
}

type Handler = (res: ServerResponse) => void;

/**
 * The direct floor's handler on PostgreSQL: each statement through a pool (one after another, as
 * the server runs a page's statements), the rows in the same envelope as on SQLite.
 */
async function postgresHandlers(
  spec: FloorSpec,
): Promise<{ handler: (route: FloorRoute) => Handler; close: () => void }> {
  const { default: pg } = await import('pg');
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return Number;
      return pg.types.getTypeParser(oid, format);
    },
  };
  const pool = new pg.Pool({ connectionString: spec.db, max: spec.poolSize ?? 10, types });
  const fail = (res: ServerResponse, error: unknown) => {
    process.stderr.write(`floors: ${(error as Error).message}\n`);
    res.writeHead(500).end();
  };
  return {
    handler(route) {
      const statements = route.statements!;
      const envelope = envelopeOf(route);
      const rowsOf = async () => {
        const results: unknown[][] = [];
        for (const s of statements) results.push((await pool.query(s.sql, s.params)).rows);
        return results;
      };
      return (res) => {
        rowsOf().then(
          (results) => send(res, envelope(results)),
          (error: unknown) => fail(res, error),
        );
      };
    },
    close: () => void pool.end(),
  };
}

/**
 * How the direct floor answers `route`, chosen once: one statement's rows as the page's data,
 * several statements' as `results`; rows that are JSON texts (`route.jsonItems`) joined as they
 * are, not serialized again as strings.
 */
function envelopeOf(route: FloorRoute): (results: unknown[][]) => string {
  const pagination = route.pagination!;
  const after = `],"pagination":${JSON.stringify(pagination)}}}`;
  if (route.jsonItems)
    return ([rows]) =>
      `{"ok":true,"data":{"data":[${rows!.map((row) => (row as { item: string }).item).join(',')}${after}`;
  return (results) =>
    JSON.stringify(
      results.length === 1
        ? { ok: true, data: { data: results[0], pagination } }
        : { ok: true, data: { results, pagination } },
    );
}

function send(res: ServerResponse, body: string | Buffer): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The framework floor: one Hono route per path, answering the captured body for the exact URL
 * (paths with several endpoints, e.g. a list with different queries, pick theirs by query).
 * Writes read their body first, as a server must, and answer every request of their method.
 */
async function serveFramework(spec: FloorSpec): Promise<void> {
  const { Hono } = await import('hono');
  const { serve } = await import('@hono/node-server');
  const app = new Hono();
  const headers = { 'Content-Type': 'application/json' };
  const byPath = new Map<string, Map<string, string>>();
  for (const route of spec.routes) {
    const body = route.body ?? '{}';
    if (route.url === null) {
      app.on(route.method, '*', async (c) => {
        await c.req.arrayBuffer();
        return c.body(body, 200, headers);
      });
      continue;
    }
    const at = route.url.indexOf('?');
    const path = at < 0 ? route.url : route.url.slice(0, at);
    let bodies = byPath.get(`${route.method} ${path}`);
    if (!bodies) {
      const forPath = (bodies = new Map());
      byPath.set(`${route.method} ${path}`, forPath);
      app.on(route.method, path, (c) => {
        const url = c.req.url;
        const query = url.indexOf('?');
        const found = forPath.get(query < 0 ? '' : url.slice(query));
        return found === undefined ? c.body(null, 404) : c.body(found, 200, headers);
      });
    }
    bodies.set(at < 0 ? '' : route.url.slice(at), body);
  }
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
    process.stdout.write(`listening ${info.port}\n`),
  );
  process.on('SIGTERM', () => {
    server.close();
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    process.exit(0);
  });
}

async function main(specPath: string): Promise<void> {
  const spec = JSON.parse(readFileSync(specPath, 'utf8')) as FloorSpec;
  if (spec.mode === 'framework') return serveFramework(spec);
  const exact = new Map<string, Handler>();
  const byMethod = new Map<string, Handler>();
  let db: import('better-sqlite3').Database | undefined;
  const postgres = spec.mode === 'direct' && /^postgres(ql)?:/i.test(spec.db!) ? await postgresHandlers(spec) : null;
  if (spec.mode === 'direct' && !postgres) {
    const { default: Database } = await import('better-sqlite3');
    db = new Database(spec.db!, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
  }
  for (const route of spec.routes) {
    let handler: Handler;
    if (spec.mode !== 'direct') {
      const body = Buffer.from(route.body ?? '{}');
      handler = (res) => send(res, body);
    } else if (postgres) {
      handler = postgres.handler(route);
    } else {
      const statements = route.statements!.map((s) => ({ stmt: db!.prepare(s.sql), params: s.params }));
      const envelope = envelopeOf(route);
      handler = (res) => send(res, envelope(statements.map((s) => s.stmt.all(...s.params))));
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
    postgres?.close();
    process.exit(0);
  });
}

main(process.argv[2]!).catch((error: unknown) => {
  process.stderr.write(`floors: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
