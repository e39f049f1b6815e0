/**
 * Requests refused below the application (decisions.md §4): what Node's HTTP parser rejects (a
 * malformed request line or header, `Content-Length: abc`, both `Content-Length` and
 * `Transfer-Encoding`, headers or a request line over the header size limit) and what the Node
 * adapter cannot turn into a `Request` (a backslash in the path, a bad `Host`). Each is answered
 * with the JSON error envelope, an `X-Request-Id` and `Connection: close`, and logged at `warn`
 * with that id, instead of Node's or the adapter's bare status line.
 *
 * Two hooks, wired by `src/server.ts`: `adapterErrorHandler` is the `errorHandler` option of
 * `@hono/node-server`'s `getRequestListener`, and `onClientError` listens to the Node server's
 * `clientError` event (emitted before any request object exists, so the answer is written to the
 * socket directly).
 */
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import type { Logger } from '../logger.js';
import type { ErrorCode } from '../domain/errors.js';
import { ApiError, errorBody } from './errors.js';

/** Headers of every refusal: the envelope's type, a fresh request id, and the end of the connection. */
function refusalHeaders(requestId: string): Record<string, string> {
  return { 'Content-Type': 'application/json', 'X-Request-Id': requestId, Connection: 'close' };
}

/** The error thrown by the adapter when it cannot build a `Request` (its `RequestError`). */
const isRequestError = (error: unknown) => error instanceof Error && error.name === 'RequestError';

/**
 * The adapter's `errorHandler`: a request the adapter could not build (its `RequestError`: a
 * backslash in the path, an invalid `Host`) is 400 `BAD_REQUEST`; anything else that escaped the
 * application is 500 `INTERNAL_ERROR`, logged with its message and stack.
 */
export function adapterErrorHandler(logger: Logger): (error: unknown) => Response {
  return (error) => {
    const requestId = randomUUID();
    const refusal = isRequestError(error)
      ? new ApiError('BAD_REQUEST', `The request could not be read: ${(error as Error).message}`)
      : new ApiError('INTERNAL_ERROR', 'An unexpected error occurred');
    if (refusal.status === 500) {
      logger.log('error', 'unexpected failure', { requestId, error: describeError(error) });
    } else
      logger.log('warn', 'request refused before routing', {
        requestId,
        status: refusal.status,
        errorCode: refusal.code,
        reason: refusal.message,
      });
    return new Response(JSON.stringify(errorBody(refusal)), {
      status: refusal.status,
      headers: refusalHeaders(requestId),
    });
  };
}

/** `{ message, stack }` of a thrown value, for a server-side log line (decisions.md §15). */
export function describeError(error: unknown): { name: string; message: string; stack?: string } {
  if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack };
  return { name: typeof error, message: String(error) };
}

/** What a parser error code means for the client: 431 for sizes, else 400. */
function parserRefusal(error: NodeJS.ErrnoException & { reason?: string }): ApiError {
  const code: ErrorCode = error.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : 'BAD_REQUEST';
  if (code === 'HEADERS_TOO_LARGE') return new ApiError(code, 'The request line and headers are too large');
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError(code, 'The request was not received in time');
  return new ApiError(code, `The request could not be parsed${error.reason ? `: ${error.reason}` : ''}`);
}

/**
 * The server's `clientError` listener: writes the envelope for a request Node's parser refused and
 * closes the connection; a connection already reset or mid-response is just destroyed.
 */
export function onClientError(logger: Logger): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    const responding = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || responding) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const refusal = parserRefusal(error);
    logger.log('warn', 'request refused before routing', {
      requestId,
      status: refusal.status,
      errorCode: refusal.code,
      reason: error.code,
    });
    const body = JSON.stringify(errorBody(refusal));
    const head = Object.entries({ ...refusalHeaders(requestId), 'Content-Length': String(Buffer.byteLength(body)) })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n${head}\r\n${body}`);
  };
}
