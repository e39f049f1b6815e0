/**
 * The Redis limiter's default key prefix (decisions.md §16): `outreach:<install id>:`, the id each
 * database is given by its migration (0007_install_id.sql). On the shared Redis, with one token
 * id in both installs (as the demo token, or ids an import brings) and no `redis.keyPrefix`:
 * - two installs (two databases) count two windows: install B is not refused because install A
 *   used the limit (with the old default, `outreach:`, B answered 429);
 * - two instances of one install (two servers on one database) count one;
 * - an explicit `redis.keyPrefix` is used as it is.
 * On SQLite (a file per install) and on PostgreSQL (a database per install), each migrated here
 * from empty: the harness's databases are copies of one template, which is one install.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/logger.js';
import { installId } from '../../src/repos/install.js';
import { createAccount, createToken } from '../../src/repos/tokens.js';
import { DEMO_TOKEN } from '../../src/seed/demo.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { REDIS_URL, createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';

const redisSkip = await serviceSkip('redis');
const postgresSkip = redisSkip || (await serviceSkip('postgres'));
const TOKEN_ID = 'tok_demo_all_scopes';

for (const kind of ['sqlite', 'postgres'] as const)
  describe(`the default Redis key prefix is the install's own (${kind})`, {
    skip: kind === 'sqlite' ? redisSkip : postgresSkip,
  }, () => {
    const clock = new FakeClock();
    const servers: RunningServer[] = [];
    const databases: TestDatabase[] = [];
    const ids: string[] = [];
    let dir: string;
    let redis: Redis;

    /** A new install: an empty database, migrated (its install id made), with the shared token. */
    const newInstall = async (name: string): Promise<string> => {
      let location = join(dir, `${name}.db`);
      if (kind === 'postgres') {
        const database = await createTestDatabase(`install_${name}`);
        databases.push(database);
        location = database.url;
      }
      const store = await openStore(location);
      try {
        await migrate(store);
        const nowIso = isoAt(clock.now());
        await createAccount(store.db, { id: 'acct_i', email: 'i@example.test', name: 'I', plan: 'pro' }, nowIso);
        await createToken(
          store.db,
          { id: TOKEN_ID, accountId: 'acct_i', name: 'shared id', scopes: [], expiresAt: null, rawToken: DEMO_TOKEN },
          nowIso,
        );
        ids.push(await installId(store.db));
      } finally {
        await store.close();
      }
      return location;
    };
    /** An instance of the install at `location`: a server of its own (its own store) on it. */
    const instance = async (location: string, config: Record<string, unknown> = {}) => {
      const server = await startServer({
        config: loadConfig(
          undefined,
          {},
          {
            db: location,
            'server.port': 0,
            'limits.store': 'redis',
            'limits.requestsPerMinute': 3,
            'redis.url': REDIS_URL,
            'redis.timeoutMs': 5000, // a loaded machine must not turn a slow answer into a fallback
            ...config,
          },
        ),
        clock,
        logger: silentLogger,
      });
      servers.push(server);
      return server;
    };
    const me = async (server: RunningServer) => {
      const res = await fetch(`${server.origin}/api/public/v1/me`, {
        headers: { authorization: `Bearer ${DEMO_TOKEN}` },
      });
      await res.arrayBuffer();
      return `${res.status} ${res.headers.get('x-ratelimit-remaining')}`;
    };

    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'outreach-installs-'));
      redis = new Redis(REDIS_URL, { lazyConnect: true });
    });
    after(async () => {
      for (const server of servers) await server.close();
      if (ids.length) await redis.del(...ids.map((id) => `outreach:${id}:ratelimit:${TOKEN_ID}`));
      redis.disconnect();
      for (const database of databases) await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('counts one window per install: instances of one install share it, another install does not', async () => {
      const [a, b] = [await newInstall('a'), await newInstall('b')];
      const [idA, idB] = ids;
      assert.match(idA!, /^[0-9a-f]{32}$/);
      assert.notEqual(idA, idB, 'two databases, two installs');
      const [a1, a2, b1] = [await instance(a), await instance(a), await instance(b)];

      // Install A uses its limit, through both of its instances.
      assert.deepEqual([await me(a1), await me(a2), await me(a1)], ['200 2', '200 1', '200 0']);
      assert.equal(await me(a2), '429 0', "A's second instance counts A's window");
      // Install B, on the same Redis, with the same token id: a window of its own.
      assert.deepEqual([await me(b1), await me(b1)], ['200 2', '200 1']);
      assert.equal(await redis.zcard(`outreach:${idA}:ratelimit:${TOKEN_ID}`), 3);
      assert.equal(await redis.zcard(`outreach:${idB}:ratelimit:${TOKEN_ID}`), 2);
      assert.equal(await redis.exists(`outreach:ratelimit:${TOKEN_ID}`), 0, 'nothing under the old default');

      // An explicit redis.keyPrefix is used as it is: here A's, so this instance of B counts A's window.
      const named = await instance(b, { 'redis.keyPrefix': `outreach:${idA}:` });
      assert.equal(await me(named), '429 0');
    });
  });
