/**
 * Reading a request's body whole under `limits.maxBodyBytes` (decisions.md §4): the body rules of
 * `./middleware/json-body.ts`, and the fixture, which reads a body before the request enters its
 * gate (../fixture/journal.ts), share it.
 */

/** How much of an oversized body is read and discarded to keep the connection, bytes (16 MiB). */
export const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * A request body read whole under the limit: its bytes, or the fact that it was over the limit
 * and whether it ended within `DISCARD_LIMIT_BYTES` (the connection can then be kept).
 */
export type ReadBody = { kind: 'read'; bytes: Uint8Array } | { kind: 'tooLarge'; ended: boolean };

/**
 * Reads the body of `request` to its end: its bytes when it is within `maxBytes`; past that, the
 * rest is read and thrown away up to `DISCARD_LIMIT_BYTES` (a declared `Content-Length` over that
 * is not read at all). The stream is released, never cancelled: cancelling it would destroy the
 * socket before an answer is written. Null when the request has no body.
 */
export async function readRequestBody(request: Request, maxBytes: number): Promise<ReadBody | null> {
  const body = request.body;
  if (!body) return null;
  const declared = request.headers.has('transfer-encoding') ? null : request.headers.get('content-length');
  const declaredOver = declared !== null && Number(declared) > maxBytes;
  if (declared !== null && Number(declared) > DISCARD_LIMIT_BYTES) return { kind: 'tooLarge', ended: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      size += chunk.value.length;
      if (size > DISCARD_LIMIT_BYTES) return { kind: 'tooLarge', ended: false };
      if (!declaredOver && size <= maxBytes) chunks.push(chunk.value);
    }
  } finally {
    reader.releaseLock();
  }
  return declaredOver || size > maxBytes
    ? { kind: 'tooLarge', ended: true }
    : { kind: 'read', bytes: Buffer.concat(chunks) };
}
