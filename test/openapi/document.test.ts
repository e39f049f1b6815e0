/**
 * The served OpenAPI document says what the service does (issue #9 item 14): every error code,
 * the response headers by status, declared tags, license and contact, 405. Redocly's lint of the
 * same document runs as `npm run lint:openapi`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import { STATUS_BY_CODE } from '../../src/http/errors.js';
import { servedDocument } from './document.js';

type Response = { headers?: Record<string, { $ref: string }> };
type Operation = { tags?: string[]; responses: Record<string, Response> };

describe('OpenAPI document', () => {
  let doc: Record<string, any>;
  let operations: [string, Operation][];
  before(async () => {
    doc = await servedDocument();
    operations = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]),
    );
  });
  const headersOf = (response: Response) => Object.keys(response.headers ?? {}).sort();

  it('lists every error code the service sends as the enum of error.code', () => {
    assert.deepEqual(
      [...doc.components.schemas.Error.properties.error.properties.code.enum].sort(),
      Object.keys(STATUS_BY_CODE).sort(),
    );
  });

  it('declares every tag an operation uses, each with a description', () => {
    const declared = new Map((doc.tags as { name: string; description: string }[]).map((t) => [t.name, t.description]));
    for (const [name, op] of operations)
      for (const tag of op.tags ?? []) assert.ok(declared.get(tag), `${name}: tag ${tag} declared with a description`);
  });

  it('has the license of package.json and a contact', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { license: string };
    assert.equal(doc.info.license.identifier, pkg.license);
    assert.ok(doc.info.contact?.name);
  });

  it('documents the headers of every response by status, and 405', () => {
    for (const name of [
      'X-Request-Id',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'WWW-Authenticate',
      'Allow',
      'Idempotent-Replayed',
    ]) {
      assert.ok(doc.components.headers[name]?.description, `components.headers.${name}`);
    }
    const limiter = [
      'RateLimit',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ];
    for (const [name, op] of operations) {
      assert.deepEqual(headersOf(op.responses['401']!), ['WWW-Authenticate', 'X-Request-Id'], `${name} 401`);
      assert.deepEqual(headersOf(op.responses['405']!), ['Allow', 'X-Request-Id'], `${name} 405`);
      assert.deepEqual(
        headersOf(op.responses['429']!),
        [...limiter, 'Retry-After', 'X-Request-Id'].sort(),
        `${name} 429`,
      );
      for (const [status, response] of Object.entries(op.responses).filter(([s]) => s.startsWith('2'))) {
        const replayable = name.startsWith('POST');
        assert.deepEqual(
          headersOf(response),
          [...limiter, 'X-Request-Id', ...(replayable ? ['Idempotent-Replayed'] : [])].sort(),
          `${name} ${status}`,
        );
      }
    }
  });
});
