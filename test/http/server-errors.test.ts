/**
 * A 500 is diagnosable (decisions.md §4, §15): the server's log has an `error` line with the
 * request id the client received, the error's message and its stack; the body has none of it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Logger } from '../../src/logger.js';
import type { TestServer } from '../helpers/harness.js';
import { startWriteServer } from '../writes/helpers.js';

describe('a 500 in the log', () => {
  let t: TestServer;
  let token: string;
  const lines: { level: string; message: string; fields: Record<string, any> }[] = [];
  const logger: Logger = { log: (level, message, fields = {}) => lines.push({ level, message, fields }) };
  before(async () => {
    t = await startWriteServer({ logger });
    token = await t.mintToken('acct_a', ['outreach:write']);
  });
  after(() => t.close());

  it('logs the request id, message and stack of an unexpected failure, and sends none of them', async () => {
    const generator = t.server.app.deps.providers.generator;
    const original = generator.generate;
    generator.generate = async () => {
      throw new TypeError('generator exploded at /srv/secret/path.ts');
    };
    try {
      const res = await t.request('POST', '/projects/prj_a1/sites/site_a1/drafts/drf_a1/regenerate', {
        token,
        body: { instruction: 'Make it fail.' },
        headers: { 'idempotency-key': 'fail-500-key' },
      });
      assert.equal(res.status, 500);
      assert.deepEqual(res.body, {
        ok: false,
        error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred' },
      });
      const requestId = res.headers.get('x-request-id');
      const entry = lines.find((l) => l.level === 'error' && l.fields.requestId === requestId);
      assert.ok(entry, JSON.stringify(lines));
      assert.equal(entry.fields.error.name, 'TypeError');
      assert.equal(entry.fields.error.message, 'generator exploded at /srv/secret/path.ts');
      assert.match(entry.fields.error.stack, /TypeError: generator exploded[\s\S]*\n\s+at /);
    } finally {
      generator.generate = original;
    }
  });
});
