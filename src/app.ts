/**
 * The app assembled: the HTTP application of `src/http/` (the pipeline, the error envelope, the
 * documents, the operator's endpoints) around every resource's routes (`src/routes/`) and, when
 * `settings.enabled`, the settings area's pages (`src/web/`). The fixture's control plane, when
 * there is one, comes in `input.fixture` (built by `startServer`, src/fixture/). Nothing below
 * this module knows the parts it puts together.
 */
import { createApp, type App } from './http/app.js';
import type { AppDeps } from './http/context.js';
import { registerRoutes, TAGS } from './routes/index.js';
import { settingsArea } from './web/index.js';

export type { App } from './http/app.js';

/** Builds the app over `input` (see `createApp`, src/http/app.ts). */
export function assembleApp(input: Omit<AppDeps, 'shutdown' | 'clientOf'>): App {
  return createApp(input, {
    registerRoutes,
    tags: TAGS,
    pages: input.config.settings.enabled ? settingsArea : undefined,
  });
}
