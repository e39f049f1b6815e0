/** Mounts every resource's routes on the `/api/public/v1` app, in one place. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { registerMe } from './me.js';
import { registerProjects } from './projects.js';
import { registerSites } from './sites.js';

export function registerRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  registerMe(app, deps);
  registerProjects(app, deps);
  registerSites(app, deps);
}
