/**
 * 413 `PAYLOAD_TOO_LARGE` and the connection it leaves (decisions.md §4): after a 413 the
 * connection is either kept usable (the rest of the body read and discarded, up to
 * DISCARD_LIMIT_BYTES) or closed with `Connection: close` said in the answer; a client sending a
 * large body, all at once or streamed in chunks, always reads the 413.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DISCARD_LIMIT_BYTES } from '../../src/http/request-body.js';
import type { TestServer } from '../helpers/harness.js';
import { startWriteServer } from '../writes/helpers.js';

const PATCH_PATH = '/api/public/v1/projects/prj_a1/sites/site_a1/drafts/drf_a1';

/** Reads HTTP/1.1 responses (Content-Length bodies) off one socket, in order. */
function responses(socket: Socket) {
  let buffered = Buffer.alloc(0);
  let closed = false;
  const waiters: (() => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on('close', () => {
    closed = true;
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on('error', () => undefined); // EPIPE on a write after the server's answer is the test's concern, below
  return {
    get closed() {
      return closed;
    },
    async next(): Promise<{ status: number; headers: Record<string, string>; body: any }> {
      for (;;) {
        const split = buffered.indexOf('\r\n\r\n');
        if (split > 0) {
          const head = buffered.subarray(0, split).toString('latin1').split('\r\n');
          const headers: Record<string, string> = {};
          for (const line of head.slice(1))
            headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
          const length = Number(headers['content-length']);
          if (buffered.length >= split + 4 + length) {
            const body = JSON.parse(buffered.subarray(split + 4, split + 4 + length).toString('utf8'));
            buffered = buffered.subarray(split + 4 + length);
            return { status: Number(head[0]!.split(' ')[1]), headers, body };
          }
        }
        if (closed) throw new Error('connection closed before a complete response');
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

/** Writes `total` bytes of padding to `socket`, respecting backpressure, as `chunked` frames or raw. */
async function pump(socket: Socket, total: number, chunked: boolean): Promise<void> {
  const piece = Buffer.alloc(64 * 1024, 0x20);
  for (let sent = 0; sent < total && !socket.destroyed; sent += piece.length) {
    const data = chunked
      ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
      : piece;
    if (!socket.write(data)) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
  }
  if (chunked && !socket.destroyed) socket.write('0\r\n\r\n');
}

describe('413 and the connection after it', () => {
  let t: TestServer;
  let token: string;
  before(async () => {
    t = await startWriteServer();
    token = await t.mintToken('acct_a', ['outreach:write', 'outreach:read']);
  });
  after(() => t.close());

  const open = () => {
    const socket = connect(t.server.port, '127.0.0.1');
    return { socket, read: responses(socket) };
  };
  const head = (length: number | 'chunked') =>
    `PATCH ${PATCH_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
    (length === 'chunked' ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${length}\r\n`) +
    '\r\n';
  const me = () => `GET /api/public/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`;

  for (const form of [2 * 1024 * 1024, 'chunked'] as const) {
    it(`a keep-alive client's next request on the same connection works after a 413 (${form === 'chunked' ? 'chunked' : 'Content-Length'} body of 2 MiB)`, async () => {
      const { socket, read } = open();
      try {
        socket.write(head(form));
        await pump(socket, 2 * 1024 * 1024, form === 'chunked');
        const first = await read.next();
        assert.equal(first.status, 413);
        assert.equal(first.body.error.code, 'PAYLOAD_TOO_LARGE');
        assert.notEqual(first.headers.connection?.toLowerCase(), 'close');
        socket.write(me());
        const second = await read.next();
        assert.equal(second.status, 200, JSON.stringify(second.body));
        assert.equal(read.closed, false);
      } finally {
        socket.destroy();
      }
    });
  }

  it('a client streaming a large body always reads the 413 (10 uploads of 15 MiB, chunked and not)', async () => {
    for (let i = 0; i < 10; i++) {
      const { socket, read } = open();
      try {
        const chunked = i % 2 === 0;
        socket.write(head(chunked ? 'chunked' : 15 * 1024 * 1024));
        const [res] = await Promise.all([read.next(), pump(socket, 15 * 1024 * 1024, chunked)]);
        assert.equal(res.status, 413, `upload ${i}`);
        assert.equal(res.body.error.code, 'PAYLOAD_TOO_LARGE');
      } finally {
        socket.destroy();
      }
    }
  });

  it('a body declared larger than the discard limit is refused at once with Connection: close', async () => {
    const { socket, read } = open();
    try {
      socket.write(head(DISCARD_LIMIT_BYTES + 1));
      const res = await read.next();
      assert.equal(res.status, 413);
      assert.equal(res.headers.connection?.toLowerCase(), 'close');
    } finally {
      socket.destroy();
    }
  });

  it('fetch: the request after a 413 succeeds', async () => {
    const big = JSON.stringify({ subject: 'A subject line', body: 'x'.repeat(2 * 1024 * 1024) });
    for (let i = 0; i < 5; i++) {
      const refused = await fetch(t.origin + PATCH_PATH, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: big,
      });
      assert.equal(refused.status, 413);
      await refused.arrayBuffer();
      const next = await fetch(`${t.origin}/api/public/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(next.status, 200);
      await next.arrayBuffer();
    }
  });
});
