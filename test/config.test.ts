/** Configuration: defaults, file, OUTREACH_API_* environment variables, flags (decisions.md §12). */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, envVariables, loadConfig } from '../src/config.js';

describe('config', () => {
  it('has defaults that serve a demo on loopback with the contract limits', () => {
    const config = loadConfig(undefined, {});
    assert.equal(config.db, './data/outreach.db');
    assert.equal(config.server.host, '127.0.0.1');
    assert.equal(config.limits.requestsPerMinute, 100);
    assert.equal(config.providers.mail, 'log');
  });

  it('reads the example file, then lets environment variables and flags override it', () => {
    const fromFile = loadConfig('config.example.json', {});
    assert.equal(fromFile.smtp.host, 'smtp.example.com');
    const config = loadConfig('config.example.json', {
      OUTREACH_API_DB: '/tmp/x.db',
      OUTREACH_API_LIMITS_REQUESTS_PER_MINUTE: '0',
      OUTREACH_API_CRAWL_ALLOW_PRIVATE_NETWORKS: 'true',
    }, { 'server.port': 9000 });
    assert.equal(config.db, '/tmp/x.db');
    assert.equal(config.limits.requestsPerMinute, 0);
    assert.equal(config.crawl.allowPrivateNetworks, true);
    assert.equal(config.server.port, 9000);
  });

  it('names a variable for every key', () => {
    const names = envVariables().map((v) => v.name);
    assert.ok(names.includes('OUTREACH_API_SERVER_PORT'));
    assert.ok(names.includes('OUTREACH_API_OPENAI_API_KEY_ENV'));
  });

  it('fails with a message naming the bad key or file', () => {
    assert.throws(() => loadConfig(undefined, { OUTREACH_API_SERVER_PORT: 'eighty' }), (e: Error) => e instanceof ConfigError && /server\.port/.test(e.message));
    assert.throws(() => loadConfig('/nonexistent/config.json', {}), /not found/);
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    writeFileSync(join(dir, 'bad.json'), '{ nope');
    assert.throws(() => loadConfig(join(dir, 'bad.json'), {}), /not valid JSON/);
    writeFileSync(join(dir, 'enum.json'), JSON.stringify({ providers: { mail: 'carrier-pigeon' } }));
    assert.throws(() => loadConfig(join(dir, 'enum.json'), {}), /providers\.mail/);
  });
});
