/**
 * The idempotency-key rules (decisions.md §7) that the write routes' own tests leave open: the
 * canonical JSON a request is hashed over, a reply key reused with other `ccEmails`, a key past
 * its 24 h that the purge has not deleted yet, and what the claim finds when a same-key request
 * completed (or claimed the key, or used it for another request) while this one ran its checks.
 * Those races cannot be timed through HTTP, so they drive `IdempotencyKeys.run` from a small
 * hono app over the same store, with checks that wait until the test lets them go on.
 */
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { FakeClock, isoAt } from '../../src/domain/clock.js';
import type { AppEnv, Caller } from '../../src/http/context.js';
import {
  IdempotencyKeys,
  type IdempotentSteps,
  canonicalJson,
  groupOperation,
  providerFailure,
  requestHash,
} from '../../src/http/middleware/idempotency.js';
import { ApiError } from '../../src/http/errors.js';
import { importDocument } from '../../src/import/index.js';
import { ProviderError } from '../../src/providers/types.js';
import type { TestServer } from '../helpers/harness.js';
import { createTestDatabase, serviceSkip, type TestDatabase } from '../helpers/services.js';
import { gate, startWriteServer, writesFixture } from './helpers.js';

const THREAD = '/projects/prj_a1/sites/site_a1/threads/thr_a1';
/** A key lives 24 h (decisions.md §7). */
const DAY_MS = 24 * 60 * 60 * 1000;
const REUSED = {
  code: 'IDEMPOTENCY_KEY_REUSED',
  message: 'This idempotency key was already used for a different request; use a new key',
};
const CONFLICT = {
  code: 'IDEMPOTENCY_CONFLICT',
  message: 'A request with this idempotency key is still being processed; retry later',
};

describe('canonicalJson', () => {
  it('sorts object keys at every level and keeps array order', () => {
    assert.equal(canonicalJson({ b: 1, a: 2 }), '{"a":2,"b":1}');
    assert.equal(canonicalJson({ b: 1, a: 2 }), canonicalJson({ a: 2, b: 1 }));
    assert.equal(
      canonicalJson({ z: { y: [{ d: 1, c: 2 }], x: null }, a: 'é"\n' }),
      '{"a":"é\\"\\n","z":{"x":null,"y":[{"c":2,"d":1}]}}',
    );
    assert.equal(canonicalJson({ B: 1, a: 2, _: 3, 10: 4, 9: 5 }), '{"10":4,"9":5,"B":1,"_":3,"a":2}');
  });

  it('tells arrays apart by their items and their order', () => {
    assert.equal(canonicalJson(['a', 'b']), '["a","b"]');
    assert.equal(canonicalJson([]), '[]');
    assert.equal(canonicalJson([[1, 2], [3]]), '[[1,2],[3]]');
    const texts = [['a', 'b'], ['b', 'a'], ['ab'], ['a,b'], ['a'], [], [null], [['a', 'b']]].map(canonicalJson);
    assert.equal(new Set(texts).size, texts.length, texts.join(' '));
  });

  it('drops undefined object members, writes null and undefined items as null, and numbers, strings, booleans as JSON', () => {
    assert.equal(canonicalJson({ a: undefined, b: null }), '{"b":null}');
    assert.equal(canonicalJson({ a: undefined }), canonicalJson({}));
    assert.equal(canonicalJson([undefined, null, 1.5, true, 'x']), '[null,null,1.5,true,"x"]');
    assert.equal(canonicalJson(undefined), 'null');
    assert.equal(canonicalJson(null), 'null');
    assert.equal(canonicalJson(0), '0');
    assert.equal(canonicalJson(''), '""');
    assert.equal(canonicalJson(false), 'false');
  });

  it('is what the request hash is taken over: SHA-256 of the ids and the body', () => {
    assert.equal(
      requestHash({ siteId: 's', projectId: 'p' }, { b: [1], a: 1 }),
      requestHash({ projectId: 'p', siteId: 's' }, { a: 1, b: [1] }),
    );
    assert.notEqual(requestHash({ siteId: 's' }, { b: [1, 2] }), requestHash({ siteId: 's' }, { b: [2, 1] }));
    assert.notEqual(requestHash({ siteId: 's' }, {}), requestHash({ siteId: 't' }, {}));
    // echo -n '{"body":{"a":1},"ids":{"siteId":"s"}}' | sha256sum
    assert.equal(
      requestHash({ siteId: 's' }, { a: 1 }),
      '6324a65fd1fec1597607a36d5d2e7ae975c833a756f51ad97eb47c9527552523',
    );
  });
});

describe('idempotency keys of the reply route', () => {
  let t: TestServer;
  let token: string;
  before(async () => {
    t = await startWriteServer();
    token = await t.mintToken('acct_a', ['outreach:send', 'outreach:read']);
  });
  after(() => t.close());
  const reply = (body: Record<string, unknown>) => t.request('POST', `${THREAD}/replies`, { token, body });
  const messageCount = async () => {
    const res = await t.get(`${THREAD}/messages?limit=100`, token);
    assert.equal(res.status, 200);
    return res.body.data.pagination.total as number;
  };

  it('answers 422 IDEMPOTENCY_KEY_REUSED for the same key with other ccEmails, in any way they differ', async () => {
    const body = { body: 'A reply with two copies.', idempotencyKey: 'cc-key-0001' };
    const first = await reply({ ...body, ccEmails: ['boss@trailgear.example', 'team@trailgear.example'] });
    assert.equal(first.status, 202);
    const count = await messageCount();
    for (const ccEmails of [
      ['team@trailgear.example', 'boss@trailgear.example'],
      ['boss@trailgear.example'],
      ['boss@trailgear.example', 'team@trailgear.example', 'more@trailgear.example'],
      [],
      undefined,
    ]) {
      const reused = await reply({ ...body, ccEmails });
      assert.equal(reused.status, 422, JSON.stringify(ccEmails));
      assert.deepEqual(reused.body.error, REUSED);
    }
    const again = await reply({ ...body, ccEmails: ['boss@trailgear.example', 'team@trailgear.example'] });
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(await messageCount(), count, 'nothing queued again');
  });

  it('runs the request afresh once its key expired, before the purge deleted it', async () => {
    const start = t.clock.now();
    const first = await reply({ body: 'The first reply of the day.', idempotencyKey: 'expiry-key-0001' });
    assert.equal(first.status, 202);
    const count = await messageCount();
    t.clock.set(start + DAY_MS - 1);
    const replayed = await reply({ body: 'The first reply of the day.', idempotencyKey: 'expiry-key-0001' });
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true', 'still stored 1 ms before 24 h');
    const other = await reply({ body: 'Another reply, same key.', idempotencyKey: 'expiry-key-0001' });
    assert.deepEqual([other.status, other.body.error], [422, REUSED]);
    t.clock.set(start + DAY_MS);
    const stored = await t.store.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('key', '=', 'expiry-key-0001')
      .execute();
    assert.equal(stored.length, 1, 'the purge has not run: the expired key is still stored');
    const fresh = await reply({ body: 'Another reply, same key.', idempotencyKey: 'expiry-key-0001' });
    assert.equal(fresh.status, 202);
    assert.equal(fresh.headers.get('idempotent-replayed'), null);
    assert.equal(await messageCount(), count + 1, 'queued: the expired key counted as unused');
    const replayedAgain = await reply({ body: 'Another reply, same key.', idempotencyKey: 'expiry-key-0001' });
    assert.equal(replayedAgain.headers.get('idempotent-replayed'), 'true', 'stored again for 24 h');
    assert.equal(await messageCount(), count + 1);
  });
});

type Steps = IdempotentSteps<string, string, { status: 201; data: { commit: number } }>;

/**
 * Resolves once `step` does; fails at once if `answer` (the request that should get there) comes
 * first, so a broken rule fails the test instead of leaving it waiting for a gate never opened.
 */
const reached = (step: Promise<unknown>, answer: Promise<unknown>, what: string) =>
  Promise.race([step, answer.then((got) => assert.fail(`answered before it reached ${what}: ${JSON.stringify(got)}`))]);

/**
 * An app with one write, `POST /w`, under `key`, made by `caller`, whose steps `steps(body)`
 * gives; errors as the envelope. Resolves with a `send(n)` that posts `{ n }`.
 */
function writeAppOf(caller: Caller, keys: IdempotencyKeys, key: string, steps: (body: { n: number }) => Steps) {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set('caller', caller);
    await next();
  });
  app.post('/w', async (c) => {
    const body = (await c.req.json()) as { n: number };
    return keys.run(c, { operation: 'POST /w', key, ids: { projectId: 'prj_a1' }, body }, steps(body));
  });
  app.onError((error, c) =>
    error instanceof ApiError
      ? c.json({ ok: false, error: { code: error.code, message: error.message } }, error.status)
      : c.json({ ok: false, error: { code: 'INTERNAL_ERROR', message: error.message } }, 500),
  );
  return async (n: number) => {
    const res = await app.request('/w', { method: 'POST', body: JSON.stringify({ n }) });
    return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: (await res.json()) as any };
  };
}

// A guard, not a bound on speed: a broken rule may leave a request waiting for ever (the test then fails).
describe('IdempotencyKeys.run: the claim looks again after the checks', { timeout: 60_000 }, () => {
  let t: TestServer;
  let caller: Caller;
  before(async () => {
    t = await startWriteServer();
    const account = await t.store.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', 'acct_a')
      .executeTakeFirstOrThrow();
    caller = { account, tokenId: 'tok_test', scopes: new Set() };
  });
  after(() => t.close());

  const writeApp = (keys: IdempotencyKeys, key: string, steps: (body: { n: number }) => Steps) =>
    writeAppOf(caller, keys, key, steps);

  /**
   * Starts request `n` of `send` and resolves once it is waiting in its checks (past the replay
   * lookup); `go()` lets it go on, `done` is its answer.
   */
  const startHeld = (send: (n: number) => Promise<unknown>, n: number, held: Map<number, ReturnType<typeof gate>>) => {
    const checking = gate();
    const go = gate();
    held.set(n, { promise: go.promise, open: checking.open });
    const done = send(n);
    const answeredEarly = done.then((answer) => {
      throw new Error(`request ${n} answered before it reached its checks: ${JSON.stringify(answer)}`);
    });
    return Promise.race([checking.promise, answeredEarly]).then(() => ({ go: go.open, done }));
  };

  for (const withPrepare of [false, true]) {
    const variant = withPrepare ? 'with a prepare step' : 'without a prepare step';

    it(`replays the answer of a same-key request that completed meanwhile (${variant})`, async () => {
      const keys = new IdempotencyKeys(t.store, t.clock);
      const held = new Map<number, ReturnType<typeof gate>>();
      let commits = 0;
      const send = writeApp(keys, `claim-replay-${variant}`, (body) => ({
        check: async () => {
          const hold = held.get(body.n);
          hold?.open(); // tells the test this request is in its checks
          await hold?.promise;
          return 'checked';
        },
        ...(withPrepare ? { prepare: async () => 'prepared' } : {}),
        commit: async () => ({ status: 201, data: { commit: ++commits } }),
      }));
      const slow = await startHeld(send, 1, held);
      held.delete(1);
      const fast = await send(1);
      assert.deepEqual(fast, { status: 201, replayed: null, body: { ok: true, data: { commit: 1 } } });
      slow.go();
      assert.deepEqual(await slow.done, { status: 201, replayed: 'true', body: { ok: true, data: { commit: 1 } } });
      assert.equal(commits, 1, 'committed once');
    });

    it(`answers 422 when a request with other content took the key meanwhile (${variant})`, async () => {
      const keys = new IdempotencyKeys(t.store, t.clock);
      const held = new Map<number, ReturnType<typeof gate>>();
      let commits = 0;
      const send = writeApp(keys, `claim-reused-${variant}`, (body) => ({
        check: async () => {
          const hold = held.get(body.n);
          hold?.open();
          await hold?.promise;
          return 'checked';
        },
        ...(withPrepare ? { prepare: async () => 'prepared' } : {}),
        commit: async () => ({ status: 201, data: { commit: ++commits } }),
      }));
      const slow = await startHeld(send, 1, held);
      assert.equal((await send(2)).status, 201);
      slow.go();
      assert.deepEqual(await slow.done, { status: 422, replayed: null, body: { ok: false, error: REUSED } });
      assert.equal(commits, 1);
    });
  }

  it('answers 409 when a same-key request claimed the key meanwhile and is still preparing; the key then replays', async () => {
    const keys = new IdempotencyKeys(t.store, t.clock);
    const held = new Map<number, ReturnType<typeof gate>>();
    const preparing = gate();
    const finish = gate();
    let commits = 0;
    const send = writeApp(keys, 'claim-conflict', (body) => ({
      check: async () => {
        const hold = held.get(body.n);
        hold?.open();
        await hold?.promise;
        return 'checked';
      },
      prepare: async () => {
        preparing.open();
        await finish.promise;
        return 'prepared';
      },
      commit: async () => ({ status: 201, data: { commit: ++commits } }),
    }));
    const slow = await startHeld(send, 1, held);
    held.delete(1);
    const first = send(1);
    await reached(preparing.promise, first, 'its prepare step'); // the first holds the key in_flight
    slow.go();
    assert.deepEqual(await slow.done, { status: 409, replayed: null, body: { ok: false, error: CONFLICT } });
    const whileInFlight = await send(1);
    assert.deepEqual(whileInFlight.body.error, CONFLICT, 'at the replay lookup too');
    finish.open();
    assert.deepEqual(await first, { status: 201, replayed: null, body: { ok: true, data: { commit: 1 } } });
    assert.equal((await send(1)).replayed, 'true');
    assert.equal(commits, 1);
  });

  it('releases the key when the prepare step fails or the shutdown grace ends, so a retry runs again', async () => {
    const stopping = new AbortController();
    const keys = new IdempotencyKeys(t.store, t.clock, stopping.signal);
    let attempt = 0;
    const waiting = gate();
    const send = writeApp(keys, 'release-key', () => ({
      check: () => 'checked',
      prepare: async () => {
        attempt++;
        if (attempt === 1) throw new Error('provider down');
        if (attempt === 2) {
          waiting.open();
          return new Promise<string>(() => {}); // never answers: the shutdown grace ends first
        }
        return 'prepared';
      },
      commit: async () => ({ status: 201, data: { commit: attempt } }),
    }));
    assert.equal((await send(1)).status, 500);
    const stopped = send(1);
    await reached(waiting.promise, stopped, 'its prepare step');
    stopping.abort();
    const answer = await stopped;
    assert.equal(answer.status, 503);
    assert.equal(answer.body.error.code, 'SERVICE_UNAVAILABLE');
    const stopAgain = await send(1);
    assert.equal(stopAgain.status, 503, 'aborted already: no wait');
    const released = new IdempotencyKeys(t.store, t.clock);
    const retry = await writeApp(released, 'release-key', () => ({
      check: () => 'checked',
      prepare: async () => 'prepared',
      commit: async () => ({ status: 201, data: { commit: 9 } }),
    }))(1);
    assert.deepEqual(retry, { status: 201, replayed: null, body: { ok: true, data: { commit: 9 } } });
  });

  it('takes the key back from a request whose claim outlived its lease: the next runs, the late one gets 409 and writes nothing', async () => {
    const LEASE_MS = 1000;
    const keys = new IdempotencyKeys(t.store, t.clock, undefined, LEASE_MS);
    const preparing = gate();
    const finish = gate();
    const send = writeApp(keys, 'lease-key', (body) => ({
      check: () => 'checked',
      prepare: async () => {
        if (body.n === 1) {
          preparing.open();
          await finish.promise;
        }
        return 'prepared';
      },
      commit: async (trx, _checked, _prepared, nowIso) => {
        // A write of this request's own, to see which commits stayed.
        await trx
          .insertInto('idempotency_keys')
          .values({
            account_id: 'acct_a',
            operation: 'lease test marks',
            key: `mark-${body.n}`,
            request_hash: '-',
            state: 'completed',
            created_at: nowIso,
            expires_at: nowIso,
          })
          .execute();
        return { status: 201, data: { commit: body.n } };
      },
    }));
    const stalled = send(1);
    await reached(preparing.promise, stalled, 'its prepare step'); // request 1 holds the key in flight
    t.clock.advance(LEASE_MS - 1);
    assert.deepEqual((await send(1)).body.error, CONFLICT, 'the same request within the lease: 409');
    assert.deepEqual((await send(2)).body.error, REUSED, 'another request within the lease: 422');
    t.clock.advance(1);
    assert.deepEqual(
      await send(2),
      { status: 201, replayed: null, body: { ok: true, data: { commit: 2 } } },
      'once the lease ran out the key counts as unused, whatever the request',
    );
    finish.open();
    assert.deepEqual(await stalled, {
      status: 409,
      replayed: null,
      body: {
        ok: false,
        error: {
          code: 'IDEMPOTENCY_CONFLICT',
          message: 'A request with this idempotency key is being processed; retry later',
        },
      },
    });
    const marks = await t.store.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('operation', '=', 'lease test marks')
      .execute();
    assert.deepEqual(
      marks.map((m) => m.key),
      ['mark-2'],
      "the late request's writes were rolled back",
    );
    assert.deepEqual(await send(2), { status: 201, replayed: 'true', body: { ok: true, data: { commit: 2 } } });
  });

  it('replays a stored answer before any check runs, and the first answer of each key only', async () => {
    const keys = new IdempotencyKeys(t.store, t.clock);
    let checks = 0;
    const send = writeApp(keys, 'replay-first-key', (body) => ({
      check: () => {
        checks++;
        if (checks > 1) throw new ApiError('NOT_FOUND', 'the record is gone');
        return 'checked';
      },
      commit: async () => ({ status: 201, data: { commit: body.n } }),
    }));
    assert.deepEqual(await send(1), { status: 201, replayed: null, body: { ok: true, data: { commit: 1 } } });
    assert.deepEqual(await send(1), { status: 201, replayed: 'true', body: { ok: true, data: { commit: 1 } } });
    assert.equal(checks, 1, 'the replay ran no check');
    assert.deepEqual(await send(2), { status: 422, replayed: null, body: { ok: false, error: REUSED } });
    assert.equal(checks, 1);
  });

  it('stores nothing when the checks refuse: the same key then runs its checks again', async () => {
    const keys = new IdempotencyKeys(t.store, t.clock);
    let checks = 0;
    const send = writeApp(keys, 'refused-key', () => ({
      check: () => {
        checks++;
        if (checks === 1) throw new ApiError('NOT_FOUND', 'no such record');
        return 'checked';
      },
      commit: async () => ({ status: 201, data: { commit: checks } }),
    }));
    assert.equal((await send(1)).status, 404);
    assert.deepEqual(await send(1), { status: 201, replayed: null, body: { ok: true, data: { commit: 2 } } });
  });
});

// On PostgreSQL, instances claim a key in transactions that run at once: a claim that finds no
// row may then wait on another instance's uncommitted one, and must answer from that row once it
// commits. The other instance is a transaction on a second pool, held open by the test.
describe("IdempotencyKeys.run on PostgreSQL: a claim that waits on another instance's transaction", () => {
  let skip: string | false = false;
  let database: TestDatabase | undefined;
  /** This instance's store, and the other instance's. */
  const stores: Store[] = [];
  let caller: Caller;
  const clock = new FakeClock(Date.parse('2026-03-02T10:00:00.000Z'));

  before(async () => {
    skip = await serviceSkip('postgres');
    if (skip) return;
    database = await createTestDatabase('idempotency');
    stores.push(await openStore(database.url), await openStore(database.url));
    await migrate(stores[0]!);
    await importDocument(stores[0]!, writesFixture(), { nowIso: isoAt(clock.now()) });
    const account = await stores[0]!.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', 'acct_a')
      .executeTakeFirstOrThrow();
    caller = { account, tokenId: 'tok_test', scopes: new Set() };
  });
  after(async () => {
    for (const store of stores) await store.close();
    await database?.drop();
  });

  /** The row of `key` as the other instance stores it for request `{ n }`. */
  const keyRow = (key: string, n: number, answer?: number) => ({
    account_id: 'acct_a',
    operation: 'POST /w',
    key,
    request_hash: requestHash({ projectId: 'prj_a1' }, { n }),
    state: answer === undefined ? ('in_flight' as const) : ('completed' as const),
    response_status: answer === undefined ? null : 201,
    response_body: answer === undefined ? null : JSON.stringify({ ok: true, data: { commit: answer } }),
    created_at: isoAt(clock.now()),
    expires_at: isoAt(clock.now() + DAY_MS),
  });
  /** The other instance: writes `row` in a transaction it holds open until `commit()`. */
  const otherInstance = (row: ReturnType<typeof keyRow>) => {
    const written = gate();
    const commit = gate();
    const done = stores[1]!.db.transaction().execute(async (trx) => {
      await trx.insertInto('idempotency_keys').values(row).execute();
      written.open();
      await commit.promise;
    });
    return { written: written.promise, commit: commit.open, done };
  };
  /** Resolves once a statement on this database waits for a lock (the claim, on the other's row). */
  const claimWaits = async () => {
    for (let i = 0; i < 500; i++) {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(stores[1]!.db);
      if (rows[0]!.n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.fail('the claim never waited on the other instance');
  };
  /** Sends request `{ n }` under `key` while the other instance holds `row`, then lets it commit. */
  const sendDuring = async (key: string, n: number, row: ReturnType<typeof keyRow>, whileWaiting = () => {}) => {
    let commits = 0;
    const send = writeAppOf(caller, new IdempotencyKeys(stores[0]!, clock), key, () => ({
      check: () => 'checked',
      commit: async () => ({ status: 201, data: { commit: ++commits } }),
    }));
    const other = otherInstance(row);
    await other.written;
    const answer = send(n);
    await reached(claimWaits(), answer, 'a wait on the other instance');
    whileWaiting();
    other.commit();
    await other.done;
    return { answer: await answer, commits };
  };
  const stored = (key: string) =>
    stores[0]!.db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'state', 'created_at', 'response_body'])
      .where('key', '=', key)
      .executeTakeFirstOrThrow();

  it('replays the answer the other instance committed meanwhile', async (t) => {
    if (skip) return t.skip(skip);
    const { answer, commits } = await sendDuring('pg-completed', 1, keyRow('pg-completed', 1, 7));
    assert.deepEqual(answer, { status: 201, replayed: 'true', body: { ok: true, data: { commit: 7 } } });
    assert.equal(commits, 0, 'not run again');
  });

  it('answers 409 while the claim the other instance committed meanwhile is in flight, and leaves it alone', async (t) => {
    if (skip) return t.skip(skip);
    const row = keyRow('pg-in-flight', 1);
    const { answer, commits } = await sendDuring('pg-in-flight', 1, row);
    assert.deepEqual(answer, { status: 409, replayed: null, body: { ok: false, error: CONFLICT } });
    assert.equal(commits, 0);
    assert.deepEqual(await stored('pg-in-flight'), {
      request_hash: row.request_hash,
      state: 'in_flight',
      created_at: row.created_at,
      response_body: null,
    });
  });

  it("answers 409 when the other instance's claim outlived its lease while this claim waited on it", async (t) => {
    if (skip) return t.skip(skip);
    // This claim was made before the lease ran out, so it lost; the key counts as unused only
    // after it: the client retries.
    const { answer, commits } = await sendDuring('pg-stale', 1, keyRow('pg-stale', 1), () => clock.advance(60_000));
    assert.deepEqual(answer, {
      status: 409,
      replayed: null,
      body: {
        ok: false,
        error: {
          code: 'IDEMPOTENCY_CONFLICT',
          message: 'A request with this idempotency key is being processed; retry later',
        },
      },
    });
    assert.equal(commits, 0);
  });

  it('answers 422 when the other instance took the key meanwhile for another request', async (t) => {
    if (skip) return t.skip(skip);
    const { answer, commits } = await sendDuring('pg-other', 2, keyRow('pg-other', 1, 7));
    assert.deepEqual(answer, { status: 422, replayed: null, body: { ok: false, error: REUSED } });
    assert.equal(commits, 0);
  });
});

describe('the helpers of keyed routes', () => {
  it('names a grouped operation by its method and the group-folded template', () => {
    assert.equal(groupOperation('post', '/sites/{siteId}/x'), 'POST /{group}/{groupId}/sites/{siteId}/x');
  });

  it('turns a provider failure into a logged 500 that keeps the key reusable, and rethrows anything else', () => {
    const logged: unknown[][] = [];
    const fail = providerFailure({ log: (...args: unknown[]) => logged.push(args) } as never, 'address verifier');
    assert.throws(
      () => fail(new ProviderError('timed out after 300 ms')),
      (error: unknown) =>
        error instanceof ApiError &&
        error.code === 'INTERNAL_ERROR' &&
        error.message === 'The address verifier failed; retry later with the same key',
    );
    assert.deepEqual(logged, [['warn', 'address verifier failed', { error: 'timed out after 300 ms' }]]);
    const other = new TypeError('a bug');
    assert.throws(
      () => fail(other),
      (error: unknown) => error === other,
    );
    assert.equal(logged.length, 1);
  });
});
