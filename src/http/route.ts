/**
 * The route a request matched, one form everywhere a request is recorded (issue #21): the access
 * log's `route`, the metrics' `route` label, the fixture journal's `route` and the fault rules'.
 */
import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';
import { API_BASE } from './paths.js';

/**
 * The template of the endpoint that served the request, as the router holds it: the whole path,
 * parameters as `:name` (`/api/public/v1/projects/:projectId/backlinks`), what OpenTelemetry
 * calls `http.route`. The last matched route registered for a method (a `use` middleware is not
 * an endpoint); null when none matched (a 404, or a 405 before it is answered).
 */
export function routeTemplate(c: Context): string | null {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) if (routes[i]!.method !== 'ALL') return routes[i]!.path;
  return null;
}

/** An example of the form, for documentation and messages. */
export const ROUTE_TEMPLATE_EXAMPLE = `${API_BASE}/projects/:projectId/backlinks`;
