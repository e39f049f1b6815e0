/**
 * Checks a response against the served OpenAPI 3.1 document: the operation must exist for the
 * method and path, document the status, and the body must validate against its schema.
 */
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

export class OpenApiValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { method: string; regex: RegExp; template: string }[] = [];

  constructor(private readonly doc: Record<string, any>) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(doc, 'openapi');
    for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      const regex = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      for (const method of Object.keys(item)) this.templates.push({ method: method.toUpperCase(), regex, template });
    }
  }

  /** Finds the documented path template for a request, or undefined. */
  operationFor(method: string, path: string): { template: string; operation: Operation } | undefined {
    const bare = path.split('?')[0]!;
    const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    const hit = this.templates.find((t) => t.method === m && t.regex.test(bare));
    return hit && { template: hit.template, operation: this.doc.paths[hit.template][m.toLowerCase()] };
  }

  /** Asserts that `body` (status `status`) is what the document promises for this request. */
  check(method: string, path: string, status: number, body: unknown): void {
    const found = this.operationFor(method, path);
    if (!found) {
      // Unknown routes and wrong methods answer with the error envelope, which is all we can check.
      assert.ok([404, 405, 401, 429].includes(status), `${method} ${path}: undocumented route answered ${status}`);
      return;
    }
    const response = found.operation.responses[String(status)];
    assert.ok(response, `${method} ${found.template}: status ${status} is not documented`);
    const key = `${method} ${found.template} ${status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      const pointer = [
        'paths',
        found.template,
        method.toLowerCase(),
        'responses',
        String(status),
        'content',
        'application/json',
        'schema',
      ]
        .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/');
      validate = this.ajv.compile({ $ref: `openapi#/${pointer}` });
      this.compiled.set(key, validate);
    }
    assert.ok(
      validate(body),
      `${key}: response does not match the OpenAPI document: ${this.ajv.errorsText(validate.errors)}`,
    );
  }
}
