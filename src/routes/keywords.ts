/** TODO: routes of this resource are not written yet. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';

export function registerKeywords(_app: OpenAPIHono<AppEnv>, _deps: AppDeps): void {}
