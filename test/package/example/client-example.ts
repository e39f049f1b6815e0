// Compiled by test/package/client-types.test.ts with strict tsc against the installed package (not
// by the checkout's own tsconfig, where `outreach-api/client` is not installed). Each
// `@ts-expect-error` line must be a type error, and the file must otherwise compile.
import { createClient } from 'outreach-api/client';
import { startFixture } from 'outreach-api/testing';

const api = createClient({ baseUrl: 'http://127.0.0.1:8080/api/public/v1', token: 'oapi_example' });
const path = { projectId: 'prj_demo_main', siteId: 'site_demo_blog', threadId: 'thr_demo_012' };
const replies = '/projects/{projectId}/sites/{siteId}/threads/{threadId}/replies' as const;

export async function compiles(): Promise<string[]> {
  const page = await api.GET('/projects/{projectId}/backlinks', {
    params: { path: { projectId: 'prj_demo_main' }, query: { status: 'live', limit: 5 } },
  });
  await api.POST(replies, {
    params: { path },
    body: { body: 'Thanks, here is the link.', idempotencyKey: 'example-1' },
  });
  const fixture = await startFixture({ dataset: 'demo', seed: 1, config: { limits: { requestsPerMinute: 0 } } });
  await fixture.faults.add({ route: '/api/public/v1/projects/:projectId/backlinks', status: 429, retryAfter: 5 });
  const me = await fixture.client.GET('/me');
  await fixture.stop();
  return [...(page.data?.data.data.map((backlink) => backlink.targetUrl) ?? []), me.data?.data.owner.id ?? ''];
}

export async function wrong(): Promise<void> {
  // @ts-expect-error a path the API does not have
  await api.GET('/project/{projectId}/backlinks', { params: { path: { projectId: 'prj_demo_main' } } });
  // @ts-expect-error a query value the API does not take
  await api.GET('/projects/{projectId}/backlinks', { params: { path, query: { status: 'alive' } } });
  // @ts-expect-error a missing required field: idempotencyKey
  await api.POST(replies, { params: { path }, body: { body: 'x' } });
  // @ts-expect-error a missing path parameter
  await api.GET('/projects/{projectId}/backlinks', { params: { path: {} } });
  // @ts-expect-error a field of the answer that does not exist
  (await api.GET('/me')).data?.data.owner.nickname;
  // @ts-expect-error an option startFixture does not take
  await startFixture({ port: 8080 });
  // @ts-expect-error a status no fault forces
  await (await startFixture()).faults.add({ status: 418 });
}
