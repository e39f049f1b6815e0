/** Configuration: defaults, file, OUTREACH_API_* environment variables, flags (decisions.md §12). */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  ConfigError,
  envVariables,
  loadConfig,
  requireInboxSettings,
  requireProviderSettings,
  storeLocation,
} from '../src/config.js';
import { openStore } from '../src/db/connection.js';
import { sqlGet } from './helpers/sql.js';

describe('config', () => {
  it('has defaults that serve a demo on loopback with the contract limits', () => {
    const config = loadConfig(undefined, {});
    assert.equal(config.db.path, './data/outreach.db');
    assert.equal(config.db.synchronous, 'full');
    assert.equal(config.server.host, '127.0.0.1');
    assert.equal(config.limits.requestsPerMinute, 100);
    assert.equal(config.providers.mail, 'log');
  });

  it('reads the example file, then lets environment variables and flags override it', () => {
    const fromFile = loadConfig('config.example.json', {});
    assert.equal(fromFile.smtp.host, '', 'smtp.host has no default');
    const config = loadConfig(
      'config.example.json',
      {
        OUTREACH_API_DB: '/tmp/x.db',
        OUTREACH_API_LIMITS_REQUESTS_PER_MINUTE: '0',
        OUTREACH_API_CRAWL_ALLOW_PRIVATE_NETWORKS: 'true',
      },
      { 'server.port': 9000 },
    );
    assert.equal(config.db.path, '/tmp/x.db');
    assert.equal(config.limits.requestsPerMinute, 0);
    assert.equal(config.crawl.allowPrivateNetworks, true);
    assert.equal(config.server.port, 9000);
  });

  it('reads inbox.connections from the file or as JSON from its variable, with each mailbox’s defaults', () => {
    const config = loadConfig(undefined, {
      OUTREACH_API_INBOX_CONNECTIONS: JSON.stringify({ conn_1: { host: 'imap.example.com', passwordEnv: 'PW_1' } }),
    });
    assert.deepEqual(config.inbox, {
      enabled: false,
      intervalMs: 60000,
      maxBytes: 10 * 1024 * 1024,
      initialDays: 30,
      timeoutMs: 30000,
      parseTimeoutMs: 10000,
      connections: {
        conn_1: { host: 'imap.example.com', port: 993, secure: true, passwordEnv: 'PW_1', mailbox: 'INBOX' },
      },
    });
    assert.throws(
      () => loadConfig(undefined, { OUTREACH_API_INBOX_CONNECTIONS: 'not json' }),
      /OUTREACH_API_INBOX_CONNECTIONS \(inbox\.connections\): Invalid input/,
    );
    assert.throws(
      () => loadConfig(undefined, {}, { 'inbox.connections': { conn_1: { host: 'h', password: 'secret' } } }),
      (e: Error) =>
        /inbox\.connections\.conn_1\.passwordEnv/.test(e.message) && /conn_1\.password: unknown key/.test(e.message),
    );
    const enabled = loadConfig(undefined, {}, { 'inbox.enabled': true, 'inbox.connections': config.inbox.connections });
    assert.throws(
      () => requireInboxSettings(enabled, {}),
      /PW_1 \(inbox\.connections\.conn_1\.passwordEnv\) is not set/,
    );
    requireInboxSettings(enabled, { PW_1: 'x' });
    requireInboxSettings(config, {});
  });

  it('names a variable for every key', () => {
    const names = envVariables().map((v) => v.name);
    assert.ok(names.includes('OUTREACH_API_SERVER_PORT'));
    assert.ok(names.includes('OUTREACH_API_OPENAI_API_KEY_ENV'));
  });

  it('has config.example.json list every key of the schema, each with its default (issue #21)', () => {
    const example = JSON.parse(readFileSync('config.example.json', 'utf8')) as Record<string, unknown>;
    const keys = envVariables().map((v) => v.path.join('.'));
    // A key whose value is a map (inbox.connections) is one key, not an object of keys.
    const leavesOf = (node: unknown, path: string[] = []): [string, unknown][] =>
      typeof node === 'object' && node !== null && !Array.isArray(node) && !keys.includes(path.join('.'))
        ? Object.entries(node).flatMap(([key, child]) => leavesOf(child, [...path, key]))
        : [[path.join('.'), node]];
    const listed = new Map(leavesOf(example));
    assert.deepEqual([...listed.keys()].sort(), [...keys].sort(), 'the example lists exactly the keys of the schema');
    const defaults = new Map(leavesOf(loadConfig(undefined, {})));
    for (const key of keys) {
      // A key without a default (smtp.requireTLS: unset means "when there is a user") shows a valid value.
      if (defaults.get(key) === undefined) continue;
      assert.deepEqual(listed.get(key), defaults.get(key), `${key}: the example shows its default`);
    }
    loadConfig('config.example.json', {}); // and it is a valid configuration
  });

  it('stops on an OUTREACH_API_* variable that is no key, naming the closest known one (issue #21)', () => {
    assert.throws(
      () => loadConfig(undefined, { OUTREACH_API_SERVER_PROT: '80' }),
      (e: Error) =>
        e instanceof ConfigError &&
        /OUTREACH_API_SERVER_PROT: unknown variable \(the closest known one is OUTREACH_API_SERVER_PORT, for server\.port\)/.test(
          e.message,
        ),
    );
    assert.throws(
      () => loadConfig(undefined, { OUTREACH_API_MONITOR_ENABLE: 'true', OUTREACH_API_LOG_LEVELS: 'debug' }),
      (e: Error) =>
        /OUTREACH_API_LOG_LEVELS: .*OUTREACH_API_LOG_LEVEL\b.*OUTREACH_API_MONITOR_ENABLE: .*OUTREACH_API_MONITOR_ENABLED/.test(
          e.message,
        ),
      'every one is named',
    );
    // A variable the configuration names as holding a secret is not a typo; nor is another prefix.
    loadConfig(undefined, { OUTREACH_API_SMTP_PASSWORD_VALUE: 'pw', OUTREACH_APIX: '1', OTHER_VAR: '1' });
    loadConfig(undefined, {
      OUTREACH_API_OPENAI_API_KEY_ENV: 'OUTREACH_API_KEY_OF_OPENAI',
      OUTREACH_API_KEY_OF_OPENAI: 'sk',
    });
    // The variables of `serve --ready-file` and of the npm launcher are known, and no key's (issue #29).
    const plain = loadConfig(undefined, {});
    assert.deepEqual(
      loadConfig(undefined, { OUTREACH_API_READY_FILE: '/tmp/ready.json', OUTREACH_API_BINARY: '/opt/outreach-api' }),
      plain,
    );
    assert.throws(
      () => loadConfig(undefined, { OUTREACH_API_READY_FIEL: 'r.json' }),
      (e: Error) =>
        /OUTREACH_API_READY_FIEL: unknown variable \(the closest known one is OUTREACH_API_READY_FILE, for serve --ready-file\)/.test(
          e.message,
        ),
    );
    // An unknown key in the file names the known one it resembles.
    assert.throws(
      () => loadConfig(undefined, {}, { 'server.prot': 80 }),
      (e: Error) => /server\.prot: unknown key \(did you mean server\.port\?\)/.test(e.message),
    );
  });

  it('fails with a message naming the bad key or file', () => {
    assert.throws(
      () => loadConfig(undefined, { OUTREACH_API_SERVER_PORT: 'eighty' }),
      (e: Error) => e instanceof ConfigError && /server\.port/.test(e.message),
    );
    assert.throws(() => loadConfig('/nonexistent/config.json', {}), /not found/);
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    writeFileSync(join(dir, 'bad.json'), '{ nope');
    assert.throws(() => loadConfig(join(dir, 'bad.json'), {}), /not valid JSON/);
    writeFileSync(join(dir, 'enum.json'), JSON.stringify({ providers: { mail: 'carrier-pigeon' } }));
    assert.throws(() => loadConfig(join(dir, 'enum.json'), {}), /providers\.mail/);
  });

  const rejects = (env: Record<string, string>, pattern: RegExp, file?: string) =>
    assert.throws(
      () => loadConfig(file, env),
      (e: Error) => e instanceof ConfigError && pattern.test(e.message),
      `${JSON.stringify(env)} ${file ?? ''}`,
    );
  const fileWith = (content: unknown) => {
    const path = join(mkdtempSync(join(tmpdir(), 'cfg-')), 'config.json');
    writeFileSync(path, JSON.stringify(content));
    return path;
  };

  it('reads a boolean variable as true/false/1/0 only, and refuses anything else naming the variable', () => {
    for (const [text, value] of [
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
    ] as const) {
      assert.equal(
        loadConfig(undefined, { OUTREACH_API_CRAWL_ALLOW_PRIVATE_NETWORKS: text }).crawl.allowPrivateNetworks,
        value,
        text,
      );
      assert.equal(loadConfig(undefined, { OUTREACH_API_SMTP_SECURE: text }).smtp.secure, value, text);
    }
    for (const text of ['no', 'off', 'FALSE', 'False', 'yes', 'on', '2', ' true']) {
      rejects(
        { OUTREACH_API_CRAWL_ALLOW_PRIVATE_NETWORKS: text },
        /OUTREACH_API_CRAWL_ALLOW_PRIVATE_NETWORKS \(crawl\.allowPrivateNetworks\): must be true, false, 1 or 0/,
      );
      rejects({ OUTREACH_API_SMTP_SECURE: text }, /OUTREACH_API_SMTP_SECURE/);
      rejects({ OUTREACH_API_MONITOR_ALLOW_PRIVATE_NETWORKS: text }, /OUTREACH_API_MONITOR_ALLOW_PRIVATE_NETWORKS/);
    }
  });

  it('takes only JSON true/false for a boolean in the file', () => {
    assert.equal(loadConfig(fileWith({ crawl: { allowPrivateNetworks: true } }), {}).crawl.allowPrivateNetworks, true);
    for (const value of ['false', 'no', 0, 1, null])
      rejects({}, /crawl\.allowPrivateNetworks/, fileWith({ crawl: { allowPrivateNetworks: value } }));
  });

  it('keeps strings strings', () => {
    const config = loadConfig(undefined, {
      OUTREACH_API_SMTP_USER: 'false',
      OUTREACH_API_FIXTURE_ADMIN_TOKEN: '0',
      OUTREACH_API_MONITOR_USER_AGENT: 'true',
    });
    assert.equal(config.smtp.user, 'false');
    assert.equal(config.fixture.adminToken, '0');
    assert.equal(config.monitor.userAgent, 'true');
  });

  it('reads a number variable as a decimal only, naming the variable otherwise', () => {
    assert.equal(loadConfig(undefined, { OUTREACH_API_SERVER_PORT: '9090' }).server.port, 9090);
    assert.equal(loadConfig(undefined, { OUTREACH_API_MONITOR_INTERVAL_HOURS: '0.5' }).monitor.intervalHours, 0.5);
    for (const text of ['0x50', '1e3', ' 80', '80 ', '80a', 'Infinity', '.5', 'eighty']) {
      rejects(
        { OUTREACH_API_SERVER_PORT: text },
        /OUTREACH_API_SERVER_PORT \(server\.port\): must be a decimal number/,
      );
    }
    rejects({ OUTREACH_API_SERVER_PORT: '70000' }, /OUTREACH_API_SERVER_PORT \(server\.port\)/);
    rejects({ OUTREACH_API_OUTBOX_MAX_ATTEMPTS: '1.5' }, /OUTREACH_API_OUTBOX_MAX_ATTEMPTS \(outbox\.maxAttempts\)/);
    rejects({}, /server\.port/, fileWith({ server: { port: '8080' } }));
  });

  it('stops at an unknown key in the file, naming it', () => {
    rejects({}, /server\.prot: unknown key/, fileWith({ server: { prot: 8080 } }));
    rejects({}, /datbase: unknown key/, fileWith({ datbase: 'x.db' }));
    rejects({}, /db\.sync: unknown key/, fileWith({ db: { path: 'x.db', sync: 'normal' } }));
    // Every problem at once, with the file.
    rejects(
      { OUTREACH_API_SERVER_PORT: 'x' },
      /\(.*config\.json\): .*OUTREACH_API_SERVER_PORT.*; limits\.perMinute: unknown key/,
      fileWith({ limits: { perMinute: 5 } }),
    );
  });

  it('gives every key a variable, keys with an empty default too', () => {
    const names = new Map(envVariables().map((v) => [v.path.join('.'), v.name]));
    assert.equal(names.get('db.path'), 'OUTREACH_API_DB');
    assert.equal(names.get('db.synchronous'), 'OUTREACH_API_DB_SYNCHRONOUS');
    for (const key of [
      'verifier.httpUrl',
      'monitor.userAgent',
      'fixture.adminToken',
      'fixture.seed',
      'metrics.token',
      'smtp.user',
    ])
      assert.ok(names.get(key), key);
    const config = loadConfig(undefined, {
      OUTREACH_API_VERIFIER_HTTP_URL: 'http://127.0.0.1:1/v',
      OUTREACH_API_METRICS_TOKEN: 'm',
    });
    assert.equal(config.verifier.httpUrl, 'http://127.0.0.1:1/v');
    assert.equal(config.metrics.token, 'm');
  });

  it('reads server.trustProxy as a list (one comma-separated variable) of addresses and CIDR ranges', () => {
    assert.deepEqual(loadConfig(undefined, {}).server.trustProxy, []);
    const fromEnv = loadConfig(undefined, { OUTREACH_API_SERVER_TRUST_PROXY: '10.0.0.0/8, ::1,192.0.2.7' });
    assert.deepEqual(fromEnv.server.trustProxy, ['10.0.0.0/8', '::1', '192.0.2.7']);
    assert.deepEqual(loadConfig(fileWith({ server: { trustProxy: ['fd00::/8'] } }), {}).server.trustProxy, [
      'fd00::/8',
    ]);
    rejects(
      { OUTREACH_API_SERVER_TRUST_PROXY: '10.0.0.0/8,lb.internal' },
      /OUTREACH_API_SERVER_TRUST_PROXY \(server\.trustProxy\.1\): not an IP address or CIDR range/,
    );
  });

  it('counts limits in memory by default; limits.store redis needs a redis:// URL, never echoed, and no fixture', () => {
    const defaults = loadConfig(undefined, {});
    assert.equal(defaults.limits.store, 'memory');
    assert.deepEqual(defaults.redis, { url: '', keyPrefix: '', timeoutMs: 500 });
    const shared = loadConfig(undefined, {
      OUTREACH_API_LIMITS_STORE: 'redis',
      OUTREACH_API_REDIS_URL: 'rediss://user:s3cret@redis.internal:6380/2',
      OUTREACH_API_REDIS_KEY_PREFIX: 'outreach-eu:',
      OUTREACH_API_REDIS_TIMEOUT_MS: '250',
    });
    assert.equal(shared.limits.store, 'redis');
    assert.deepEqual(shared.redis, {
      url: 'rediss://user:s3cret@redis.internal:6380/2',
      keyPrefix: 'outreach-eu:',
      timeoutMs: 250,
    });
    rejects({ OUTREACH_API_LIMITS_STORE: 'redis' }, /redis\.url: must be set when limits\.store is redis/);
    rejects({ OUTREACH_API_LIMITS_STORE: 'cluster' }, /OUTREACH_API_LIMITS_STORE \(limits\.store\)/);
    assert.throws(
      () => loadConfig(undefined, { OUTREACH_API_REDIS_URL: 'http://user:s3cret@redis.internal' }),
      (e: Error) =>
        /OUTREACH_API_REDIS_URL \(redis\.url\): must start with redis:\/\/ or rediss:\/\//.test(e.message) &&
        !e.message.includes('s3cret'),
    );
    // The fixture is one instance with its own clock and reset (decisions.md §14, §16).
    assert.throws(
      () =>
        loadConfig(
          undefined,
          { OUTREACH_API_LIMITS_STORE: 'redis', OUTREACH_API_REDIS_URL: 'redis://127.0.0.1:6379' },
          {
            'fixture.enabled': true,
          },
        ),
      /\(limits\.store\): must be memory with the fixture \(--fixture\)/,
    );
  });

  it('takes db as a path or as { path, synchronous }, with OUTREACH_API_DB the path and --db over both', async () => {
    const db = (path: string, synchronous: 'full' | 'normal') => ({
      path,
      url: '',
      synchronous,
      poolSize: 10,
      statementTimeoutMs: 5000,
      searchWaitMs: 1000,
      preparedStatements: true,
    });
    assert.deepEqual(loadConfig(fileWith({ db: 'a.db' }), {}).db, db('a.db', 'full'));
    const file = fileWith({ db: { path: 'b.db', synchronous: 'normal' } });
    assert.deepEqual(loadConfig(file, {}).db, db('b.db', 'normal'));
    assert.deepEqual(loadConfig(file, { OUTREACH_API_DB: 'c.db' }).db, db('c.db', 'normal'));
    assert.deepEqual(loadConfig(file, { OUTREACH_API_DB_SYNCHRONOUS: 'full' }, { db: 'd.db' }).db, db('d.db', 'full'));
    assert.deepEqual(
      loadConfig(fileWith({ db: 'e.db' }), { OUTREACH_API_DB_SYNCHRONOUS: 'normal' }).db,
      db('e.db', 'normal'),
    );
    rejects({ OUTREACH_API_DB_SYNCHRONOUS: 'off' }, /OUTREACH_API_DB_SYNCHRONOUS \(db\.synchronous\)/);
  });

  it('names a PostgreSQL store by db, db.url, OUTREACH_API_DB_URL, OUTREACH_API_DB or --db, the later source first (decisions.md §16)', () => {
    const url = 'postgres://outreach@db.internal:5432/outreach';
    assert.equal(storeLocation(loadConfig(fileWith({ db: url }), {})), url);
    const withUrl = fileWith({ db: { url, poolSize: 4, statementTimeoutMs: 2000 } });
    const config = loadConfig(withUrl, {});
    assert.equal(storeLocation(config), url);
    assert.equal(config.db.poolSize, 4);
    assert.equal(config.db.statementTimeoutMs, 2000);
    assert.equal(storeLocation(loadConfig(undefined, { OUTREACH_API_DB_URL: url })), url);
    // A later source's db (the environment over the file, a flag over both) names the store.
    assert.equal(storeLocation(loadConfig(withUrl, { OUTREACH_API_DB: 'local.db' })), 'local.db');
    assert.equal(storeLocation(loadConfig(withUrl, {}, { db: 'flag.db' })), 'flag.db');
    assert.equal(storeLocation(loadConfig(undefined, {}, { db: url })), url);
    rejects({ OUTREACH_API_DB_URL: 'mysql://x/y' }, /OUTREACH_API_DB_URL \(db\.url\): must be a postgres/);
    rejects({ OUTREACH_API_DB_POOL_SIZE: '0' }, /OUTREACH_API_DB_POOL_SIZE \(db\.poolSize\)/);
  });

  it('gives searches fewer PostgreSQL connections than the pool, and any number of SQLite readers (issue #28)', () => {
    const url = 'postgres://outreach@db.internal:5432/outreach';
    const pgConfig = loadConfig(undefined, {
      OUTREACH_API_DB_URL: url,
      OUTREACH_API_DB_POOL_SIZE: '4',
      OUTREACH_API_DB_SEARCH_CONNECTIONS: '3',
      OUTREACH_API_DB_SEARCH_WAIT_MS: '250',
    });
    assert.deepEqual([pgConfig.db.searchConnections, pgConfig.db.searchWaitMs], [3, 250]);
    assert.equal(loadConfig(undefined, {}).db.searchConnections, undefined, 'derived from the pool by default');
    rejects(
      { OUTREACH_API_DB_URL: url, OUTREACH_API_DB_POOL_SIZE: '4', OUTREACH_API_DB_SEARCH_CONNECTIONS: '4' },
      /\(db\.searchConnections\): must be less than db\.poolSize \(4\), so that cheap requests always find a connection/,
    );
    assert.equal(
      loadConfig(undefined, { OUTREACH_API_DB_POOL_SIZE: '2', OUTREACH_API_DB_SEARCH_CONNECTIONS: '4' }).db
        .searchConnections,
      4,
      'SQLite: reader threads, not connections of the pool',
    );
    rejects(
      { OUTREACH_API_DB_SEARCH_CONNECTIONS: '0' },
      /OUTREACH_API_DB_SEARCH_CONNECTIONS \(db\.searchConnections\)/,
    );
  });

  it('refuses a workers.leaseMs shorter than twice the longest provider timeout, naming both', () => {
    assert.equal(loadConfig(undefined, {}).workers.leaseMs, 60000);
    rejects(
      { OUTREACH_API_WORKERS_LEASE_MS: '59999' },
      /workers\.leaseMs\): must be at least twice the longest provider timeout \(openai\.timeoutMs 30000 ms\): at least 60000/,
    );
    rejects({ OUTREACH_API_SMTP_TIMEOUT_MS: '40000' }, /workers\.leaseMs: .*smtp\.timeoutMs 40000 ms.*at least 80000/);
    assert.equal(
      loadConfig(undefined, { OUTREACH_API_SMTP_TIMEOUT_MS: '40000', OUTREACH_API_WORKERS_LEASE_MS: '80000' }).workers
        .leaseMs,
      80000,
    );
  });

  // `full` on a WAL file is group commit: SQLite's NORMAL, the WAL synced before a commit's caller
  // goes on (test/store/group-commit.test.ts); `:memory:` has no WAL and keeps FULL.
  it('opens the connection with group commit by default (PRAGMA synchronous NORMAL), NORMAL on request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-db-'));
    for (const [options, expected] of [
      [{}, 1],
      [{ synchronous: 'full' }, 1],
      [{ synchronous: 'normal' }, 1],
    ] as const) {
      const store = await openStore(join(dir, 'x.db'), options);
      assert.equal(
        (await sqlGet<{ synchronous: number }>(store, 'PRAGMA synchronous'))!.synchronous,
        expected,
        JSON.stringify(options),
      );
      await store.close();
    }
  });

  it('stops when a chosen provider lacks its settings, naming them', () => {
    const config = (values: Record<string, unknown>) => loadConfig(undefined, {}, values);
    const refuses = (values: Record<string, unknown>, env: Record<string, string>, pattern: RegExp) =>
      assert.throws(
        () => requireProviderSettings(config(values), env),
        (e: Error) => e instanceof ConfigError && pattern.test(e.message),
        JSON.stringify(values),
      );
    requireProviderSettings(config({}), {}); // the offline defaults need nothing
    refuses(
      { 'providers.generator': 'openai' },
      {},
      /generator: openai.*OPENAI_API_KEY \(named by openai\.apiKeyEnv\) is not set/,
    );
    refuses({ 'providers.generator': 'openai', 'openai.apiKeyEnv': 'MY_KEY' }, { OPENAI_API_KEY: 'sk' }, /MY_KEY/);
    requireProviderSettings(config({ 'providers.generator': 'openai' }), { OPENAI_API_KEY: 'sk' });
    // smtp.host has no default (issue #21 item 2): mail: smtp alone names it.
    assert.equal(config({}).smtp.host, '');
    refuses({ 'providers.mail': 'smtp' }, {}, /mail: smtp.*smtp\.host is not set/);
    refuses({ 'providers.mail': 'smtp', 'smtp.host': '' }, {}, /mail: smtp.*smtp\.host is not set/);
    refuses(
      { 'providers.mail': 'smtp', 'smtp.user': 'me' },
      {},
      /OUTREACH_API_SMTP_PASSWORD_VALUE \(named by smtp\.passwordEnv\)/,
    );
    requireProviderSettings(config({ 'providers.mail': 'smtp', 'smtp.host': 'relay.test', 'smtp.user': 'me' }), {
      OUTREACH_API_SMTP_PASSWORD_VALUE: 'pw',
    });
    // a relay without authentication
    requireProviderSettings(config({ 'providers.mail': 'smtp', 'smtp.host': 'relay.test' }), {});
    refuses(
      { 'providers.verifier': 'http' },
      {},
      /verifier\.httpUrl is empty; the environment variable VERIFIER_API_KEY/,
    );
    refuses({ 'providers.verifier': 'http', 'verifier.httpUrl': 'http://127.0.0.1:1/v' }, {}, /VERIFIER_API_KEY/);
    requireProviderSettings(config({ 'providers.verifier': 'http', 'verifier.httpUrl': 'http://127.0.0.1:1/v' }), {
      VERIFIER_API_KEY: 'k',
    });
  });
});
