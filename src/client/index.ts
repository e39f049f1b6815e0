/**
 * `outreach-api/client`: a typed client of the public API (outreach-api-v1.md), openapi-fetch over
 * the types openapi-typescript generated from the served OpenAPI document (./openapi.ts, written
 * by build/client-types.ts). A wrong path, a wrong query value or a missing field is a type error.
 *
 *   const api = createClient({ baseUrl: 'http://127.0.0.1:8080/api/public/v1', token });
 *   const { data, error, response } = await api.GET('/projects/{projectId}/backlinks', {
 *     params: { path: { projectId: 'prj_demo_main' }, query: { limit: 5 } },
 *   });
 *   // data: the envelope { ok: true, data } on a 2xx; error: { ok: false, error } otherwise.
 *
 * It talks to a server over HTTP only and imports nothing of the server's code.
 */
import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './openapi.js';

export type { components, paths };

/** The client: `GET`, `POST`, `PATCH`, `PUT`, `DELETE` by path template, typed from the document. */
export type OutreachClient = Client<paths, 'application/json'>;

export interface CreateClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The API's base URL, `http(s)://host:port/api/public/v1` (a fixture's `apiUrl`). */
  baseUrl: string;
  /** An API token (`oapi_…`), sent as `Authorization: Bearer <token>`; absent: none is sent. */
  token?: string;
}

/**
 * A client of the API at `baseUrl`, sending `token` on every request. Other options go to
 * openapi-fetch as they are (`fetch`, `headers`, …).
 * @throws TypeError when `baseUrl` is not an absolute http(s) URL.
 */
export function createClient(options: CreateClientOptions): OutreachClient {
  const { baseUrl, token, ...rest } = options;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`createClient: baseUrl must be an absolute URL, got ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`createClient: baseUrl must be http(s), got ${url.protocol}`);
  const client = createFetchClient<paths, 'application/json'>({ ...rest, baseUrl });
  if (token !== undefined)
    client.use({
      onRequest({ request }) {
        request.headers.set('Authorization', `Bearer ${token}`);
        return request;
      },
    });
  return client;
}
