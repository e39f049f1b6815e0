/**
 * The shared list suite (decisions.md §5): for every paginated list, from one table of list
 * endpoints over the demo dataset — the default page, the documented order with its id
 * tie-break, exactly the scope's records (against the database), paging edges (first, middle,
 * last, exact fit, past the end with the true total), 422 with a detail for every bad `page` and
 * `limit`, validation before any lookup, and the same page under /workspaces.
 *
 * A new list route is covered by adding a row: the suite fails while an operation of the served
 * OpenAPI document that takes `page` has no row. A route's own test file keeps only what is
 * specific to it (fields, filters, its own 404s).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/harness.js';
import { sqlAll, sqlGet } from '../helpers/sql.js';

type Item = Record<string, any>;
/** Negative when `a` comes first. */
type Order = (a: Item, b: Item) => number;

/** SQLite's order: NULL below any value. */
const compare = (a: unknown, b: unknown): number => {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  return (a as string | number) < (b as string | number) ? -1 : 1;
};
const desc = (field: string) => (a: Item, b: Item) => compare(b[field], a[field]);
const asc = (field: string) => (a: Item, b: Item) => compare(a[field], b[field]);
/** Ascending with NULL last (the started / sent part of a two-part list first). */
const ascNullLast = (field: string) => (a: Item, b: Item) =>
  (a[field] === null) === (b[field] === null) ? compare(a[field], b[field]) : a[field] === null ? 1 : -1;
const by =
  (...keys: Order[]): Order =>
  (a, b) => {
    for (const key of keys) {
      const c = key(a, b);
      if (c !== 0) return c;
    }
    return 0;
  };
/** Newest `createdAt` first, ties by id descending: the default order of §5. */
const NEWEST = by(desc('createdAt'), desc('id'));

interface ListEndpoint {
  /** The operation's project-form template, as in the OpenAPI document. */
  template: string;
  /** The rows the list shows: `SELECT id FROM <from> WHERE <where>`, with the scope id as the one parameter. */
  from: string;
  where: string;
  /** The path parameter the `where` is scoped by. */
  scope: string;
  /** For the children of a record (checks, contacts, messages, queries): the parent's table. */
  parent?: string;
  order: Order;
  /** Where the items are in `data` (a paginated list: `data`; a record with its children: `checks`, …). */
  items?: string;
}

/** Every paginated list of the API. */
const LISTS: ListEndpoint[] = [
  { template: '/projects', from: 'projects', where: 'account_id = ?', scope: 'accountId', order: NEWEST },
  {
    template: '/projects/{projectId}/sites',
    from: 'sites',
    where: 'project_id = ?',
    scope: 'projectId',
    order: NEWEST,
  },
  {
    template: '/projects/{projectId}/sites/{siteId}/keywords',
    from: 'keywords',
    where: 'site_id = ?',
    scope: 'siteId',
    order: NEWEST,
  },
  {
    template: '/projects/{projectId}/blocked-domains',
    from: 'blocked_domains',
    where: 'project_id = ?',
    scope: 'projectId',
    order: NEWEST,
  },
  {
    template: '/projects/{projectId}/backlinks',
    from: 'backlinks',
    where: 'project_id = ?',
    scope: 'projectId',
    order: NEWEST,
  },
  {
    template: '/projects/{projectId}/backlinks/{backlinkId}',
    from: 'backlink_checks',
    where: 'backlink_id = ?',
    scope: 'backlinkId',
    parent: 'backlinks',
    order: by(desc('checkedAt'), desc('id')),
    items: 'checks',
  },
  {
    template: '/projects/{projectId}/prospects',
    from: 'prospects',
    where: 'project_id = ?',
    scope: 'projectId',
    order: NEWEST,
  },
  {
    template: '/projects/{projectId}/prospects/{prospectId}/contacts',
    from: 'contacts',
    where: 'prospect_id = ?',
    scope: 'prospectId',
    parent: 'prospects',
    order: NEWEST,
  },
  {
    // The default view (quality): not dismissed, tier hot or warm.
    template: '/projects/{projectId}/leads',
    from: 'leads',
    where: "project_id = ? AND dismissed = 0 AND tier IN ('hot', 'warm')",
    scope: 'projectId',
    order: by(desc('score'), desc('postedAt'), desc('id')),
  },
  {
    template: '/projects/{projectId}/sites/{siteId}/drafts',
    from: 'drafts',
    where: 'site_id = ?',
    scope: 'siteId',
    order: NEWEST,
  },
  {
    template: '/projects/{projectId}/sites/{siteId}/threads',
    from: 'threads',
    where: 'site_id = ?',
    scope: 'siteId',
    order: by(desc('updatedAt'), desc('id')),
  },
  {
    template: '/projects/{projectId}/sites/{siteId}/threads/{threadId}/messages',
    from: 'thread_messages',
    where: 'thread_id = ?',
    scope: 'threadId',
    parent: 'threads',
    order: by(ascNullLast('sentAt'), asc('createdAt'), asc('id')),
  },
  {
    template: '/projects/{projectId}/sites/{siteId}/discovery-jobs',
    from: 'discovery_jobs',
    where: 'site_id = ?',
    scope: 'siteId',
    order: NEWEST,
  },
  {
    template: '/projects/{projectId}/sites/{siteId}/discovery-jobs/{jobId}',
    from: 'discovery_queries',
    where: 'job_id = ?',
    scope: 'jobId',
    parent: 'discovery_jobs',
    order: by(ascNullLast('startedAt'), asc('id')),
    items: 'queries',
  },
];

/** `page`/`limit` values every list refuses, with the detail path it names (§5: never clamped). */
const BAD_PAGING: [string, string][] = [
  ['limit=0', 'query.limit'],
  ['limit=101', 'query.limit'],
  ['limit=2.5', 'query.limit'],
  ['limit=abc', 'query.limit'],
  ['limit=', 'query.limit'],
  ['limit=-1', 'query.limit'],
  ['page=0', 'query.page'],
  ['page=-1', 'query.page'],
  ['page=1.5', 'query.page'],
  ['page=1e', 'query.page'],
  ['page=', 'query.page'],
  ['page=abc', 'query.page'],
  ['page=1e3', 'query.page'],
  ['page=0x2', 'query.page'],
  ['page=+2', 'query.page'],
  ['page=1000000001', 'query.page'],
  ['limit=%2010', 'query.limit'],
];

describe('every paginated list', () => {
  let t: TestServer;
  let token: string;
  const one = async (sql: string, ...params: unknown[]) =>
    (await sqlGet(t.store, sql, ...params)) as Record<string, string>;
  const pathOf = (template: string, ids: Record<string, string>) =>
    template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
  const page = (list: ListEndpoint, body: any): { items: Item[]; pagination: any } => ({
    items: body.data[list.items ?? 'data'],
    pagination: body.data.pagination,
  });
  const twinOf = (template: string) =>
    template.replace('/projects/{projectId}', '/workspaces/{workspaceId}').replace(/^\/projects$/, '/workspaces');

  /**
   * The path ids of a list: acct_demo's records with the most rows in the list (its project
   * prj_demo_main for a project's list; the site, or the parent record, with the most rows).
   */
  async function idsFor(list: ListEndpoint): Promise<Record<string, string>> {
    const ids: Record<string, string> = {
      accountId: 'acct_demo',
      projectId: 'prj_demo_main',
      workspaceId: 'prj_demo_main',
    };
    const column = list.where.split(' ')[0]!;
    const mine = "project_id IN (SELECT id FROM projects WHERE account_id = 'acct_demo')";
    if (list.parent) {
      const top =
        await one(`SELECT ${column} AS id FROM ${list.from} WHERE ${column} IN (SELECT id FROM ${list.parent} WHERE ${mine})
        GROUP BY ${column} ORDER BY count(*) DESC, ${column} LIMIT 1`);
      const parent = await one(`SELECT site_id, project_id FROM ${list.parent} WHERE id = ?`, top.id);
      Object.assign(ids, {
        [list.scope]: top.id,
        siteId: parent.site_id,
        projectId: parent.project_id,
        workspaceId: parent.project_id,
      });
    } else if (list.scope === 'siteId') {
      const top = await one(
        `SELECT site_id, min(project_id) AS project_id FROM ${list.from} WHERE ${mine} GROUP BY site_id ORDER BY count(*) DESC, site_id LIMIT 1`,
      );
      Object.assign(ids, { siteId: top.site_id, projectId: top.project_id, workspaceId: top.project_id });
    }
    return ids;
  }

  before(async () => {
    t = await startTestServer({ fixture: 'demo', config: { 'limits.requestsPerMinute': 0 } });
    token = await t.mintToken('acct_demo');
  });
  after(() => t.close());

  it('has a row for every operation that takes page and limit', async () => {
    const doc = t.server.app.openapi as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const paged = Object.entries(doc.paths).flatMap(([template, item]) =>
      Object.values(item).some((op) => op.parameters?.some((p) => p.in === 'query' && p.name === 'page'))
        ? [template]
        : [],
    );
    const covered = new Set(LISTS.flatMap((l) => [l.template, twinOf(l.template)]));
    assert.deepEqual(
      paged.filter((p) => !covered.has(p)),
      [],
    );
    assert.equal(paged.length, LISTS.length * 2);
  });

  for (const list of LISTS) {
    describe(list.template, () => {
      /** The whole list, walked in pages of 100, and what the database holds for its scope. */
      let all: Item[];
      let stored: string[];
      let ids: Record<string, string>;
      const get = async (query: string, path = pathOf(list.template, ids)) => {
        const res = await t.get(`${path}?${query}`, token);
        assert.equal(res.status, 200, `${path}?${query}: ${JSON.stringify(res.body)}`);
        return page(list, res.body);
      };

      before(async () => {
        ids = await idsFor(list);
        stored = (
          (await sqlAll(t.store, `SELECT id FROM ${list.from} WHERE ${list.where}`, ids[list.scope])) as {
            id: string;
          }[]
        ).map((r) => r.id);
        all = [];
        for (let n = 1; ; n++) {
          const { items, pagination } = await get(`limit=100&page=${n}`);
          all.push(...items);
          if (!pagination.hasMore) break;
        }
      });

      it('lists exactly the records of its scope, each once, in the documented order with id breaking ties', async () => {
        assert.ok(stored.length >= 2, `the demo has ${stored.length} records for ${list.template}`);
        assert.deepEqual(all.map((i) => i.id).sort(), [...stored].sort());
        assert.deepEqual(all, [...all].sort(list.order));
        for (let i = 1; i < all.length; i++)
          assert.ok(list.order(all[i - 1]!, all[i]!) < 0, `${all[i - 1]!.id} before ${all[i]!.id}`);
      });

      it('serves page 1 of 25 by default, with the true total', async () => {
        const { items, pagination } = await get('');
        assert.deepEqual(items, all.slice(0, 25));
        assert.deepEqual(pagination, { page: 1, limit: 25, total: all.length, hasMore: all.length > 25 });
      });

      it('pages: first, middle and last page, an exact fit, and past the end with the true total', async () => {
        const total = all.length;
        const limit = Math.max(1, Math.floor(total / 3));
        const pages = Math.ceil(total / limit);
        for (const n of [1, 2, pages]) {
          const { items, pagination } = await get(`limit=${limit}&page=${n}`);
          assert.deepEqual(items, all.slice((n - 1) * limit, n * limit), `page ${n} of ${limit}`);
          assert.deepEqual(pagination, { page: n, limit, total, hasMore: n * limit < total });
        }
        let res = await get('limit=1');
        assert.deepEqual(res.items, all.slice(0, 1));
        assert.deepEqual(res.pagination, { page: 1, limit: 1, total, hasMore: true });
        if (total <= 100) {
          res = await get(`limit=${total}`);
          assert.equal(res.items.length, total);
          assert.equal(res.pagination.hasMore, false, 'an exact fit has no more');
        }
        for (const n of [pages + 1, 1000]) {
          res = await get(`limit=${limit}&page=${n}`);
          assert.deepEqual(res.items, []);
          assert.deepEqual(res.pagination, { page: n, limit, total, hasMore: false });
        }
        res = await get('limit=100');
        assert.equal(res.pagination.limit, 100);
      });

      it('answers 422 VALIDATION_ERROR naming the parameter for each bad page and limit, never clamping', async () => {
        for (const [query, path] of BAD_PAGING) {
          const res = await t.get(`${pathOf(list.template, ids)}?${query}`, token);
          assert.equal(res.status, 422, query);
          assert.equal(res.body.error.code, 'VALIDATION_ERROR');
          assert.deepEqual(
            res.body.error.details.map((d: { path: string }) => d.path),
            [path],
            query,
          );
        }
        const both = await t.get(`${pathOf(list.template, ids)}?page=0&limit=0`, token);
        assert.deepEqual(both.body.error.details.map((d: { path: string }) => d.path).sort(), [
          'query.limit',
          'query.page',
        ]);
      });

      it('validates the query before looking anything up', async () => {
        if (!list.template.includes('{')) return;
        const unknown = Object.fromEntries(Object.keys(ids).map((k) => [k, `${ids[k]}_missing`]));
        const res = await t.get(`${pathOf(list.template, unknown)}?page=0`, token);
        assert.equal(res.status, 422);
      });

      it('serves the same page under /workspaces', async () => {
        const limit = Math.max(1, Math.floor(all.length / 3));
        const a = await t.get(`${pathOf(list.template, ids)}?limit=${limit}&page=2`, token);
        const b = await t.get(`${pathOf(twinOf(list.template), ids)}?limit=${limit}&page=2`, token);
        assert.equal(b.status, 200);
        assert.deepEqual(b.body, a.body);
      });
    });
  }
});
