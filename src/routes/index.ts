/** Mounts every resource's routes on the `/api/public/v1` app, in one place. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps, AppEnv } from '../http/context.js';
import { registerBacklinks } from './backlinks.js';
import { registerBlockedDomains } from './blocked-domains.js';
import { registerContactActions } from './contact-actions.js';
import { registerDraftEdits } from './draft-edits.js';
import { registerDiscoveryJobs } from './discovery-jobs.js';
import { registerDrafts } from './drafts.js';
import { registerEmailAccounts } from './email-accounts.js';
import { registerKeywords } from './keywords.js';
import { registerLeads } from './leads.js';
import { registerMe } from './me.js';
import { registerPipeline } from './pipeline.js';
import { registerProjects } from './projects.js';
import { registerProspects } from './prospects.js';
import { registerReplies } from './replies.js';
import { registerSites } from './sites.js';
import { registerThreads } from './threads.js';

export function registerRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  registerMe(app, deps);
  registerProjects(app, deps);
  registerSites(app, deps);
  registerKeywords(app, deps);
  registerBlockedDomains(app, deps);
  registerBacklinks(app, deps);
  registerProspects(app, deps);
  registerLeads(app, deps);
  registerDrafts(app, deps);
  registerThreads(app, deps);
  registerDiscoveryJobs(app, deps);
  registerEmailAccounts(app, deps);
  registerPipeline(app, deps);
  registerDraftEdits(app, deps);
  registerReplies(app, deps);
  registerContactActions(app, deps);
}
