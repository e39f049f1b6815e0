/**
 * Requests refused before routing (decisions.md §4), sent as raw bytes over `node:net` so that
 * nothing on the client side repairs them: a backslash in the path, a 20 KB query, a malformed
 * request line or header, `Content-Length: abc`, both `Content-Length` and `Transfer-Encoding`.
 * Each answer is the JSON envelope with `X-Request-Id` and `Connection: close`, and the server
 * then closes the connection.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/harness.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection after the answer. */
  closed: boolean;
}

/** Parses the first HTTP/1.1 response in `raw` (a Content-Length body). */
function parseResponse(raw: string, closed: boolean): RawResponse {
  const split = raw.indexOf('\r\n\r\n');
  assert.ok(split > 0, `no complete response head in ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine, ...lines] = raw.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? raw.length - split - 4);
  return { status: Number(statusLine!.split(' ')[1]), headers, body: raw.slice(split + 4, split + 4 + length), closed };
}

/** Writes `bytes` to a new connection and reads until the server closes it (at most 10 s). */
function rawExchange(port: number, bytes: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      try {
        resolve(parseResponse(Buffer.concat(chunks).toString('latin1'), false));
      } catch (error) {
        reject(error);
      }
    }, 10_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      socket.destroy();
      try {
        resolve(parseResponse(Buffer.concat(chunks).toString('latin1'), true));
      } catch (error) {
        reject(error);
      }
    });
    socket.write(bytes);
  });
}

describe('requests refused before routing', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  const cases: [string, string, number, string][] = [
    ['a backslash in the path', 'GET /api/public/v1/me\\x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 400, 'BAD_REQUEST'],
    [
      'a 20 KB query',
      `GET /api/public/v1/me?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
    [
      '20 KB of headers',
      `GET /api/public/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
    ['a malformed request line', 'GET /api/public/v1/me NOT-HTTP\r\nHost: 127.0.0.1\r\n\r\n', 400, 'BAD_REQUEST'],
    ['an unknown method token', 'G(T /api/public/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 400, 'BAD_REQUEST'],
    [
      'a malformed header',
      'GET /api/public/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: y\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
    [
      'Content-Length: abc',
      'POST /api/public/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
    [
      'both Content-Length and Transfer-Encoding',
      'POST /api/public/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
  ];

  for (const [name, bytes, status, code] of cases) {
    it(`${name}: ${status} ${code} in the envelope, X-Request-Id, Connection: close`, async () => {
      const res = await rawExchange(t.server.port, bytes);
      assert.equal(res.status, status, JSON.stringify(res));
      assert.match(res.headers['content-type'] ?? '', /^application\/json/);
      assert.match(res.headers['x-request-id'] ?? '', /^[\w-]{8,}$/);
      assert.equal(res.headers.connection?.toLowerCase(), 'close');
      const body = JSON.parse(res.body);
      assert.equal(body.ok, false);
      assert.equal(body.error.code, code);
      assert.equal(typeof body.error.message, 'string');
      assert.doesNotMatch(res.body, /node:|\bat \w|\/src\//, 'nothing internal');
      assert.ok(res.closed, 'the server closed the connection');
    });
  }

  it('still serves a well-formed request on a new connection afterwards', async () => {
    const res = await rawExchange(
      t.server.port,
      'GET /api/public/v1/nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    assert.equal(res.status, 401);
  });
});
