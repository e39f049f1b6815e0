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

/** The OpenAPI tags of the operations above, declared with what each groups. */
export const TAGS: { name: string; description: string }[] = [
  { name: 'Account', description: 'The caller: its account, plan and token (`GET /me`); needs no scope.' },
  { name: 'Projects', description: 'Projects of the account, addressed as `/projects/{projectId}`.' },
  { name: 'Workspaces', description: 'The same records as Projects, addressed as `/workspaces/{workspaceId}`.' },
  { name: 'Sites', description: 'The sites a project promotes; most records hang under a site.' },
  { name: 'Keywords', description: 'Keywords tracked for a site.' },
  { name: 'Blocked domains', description: 'Domains never proposed or contacted for a site.' },
  { name: 'Backlinks', description: 'Links to a site found on other pages, with their status.' },
  { name: 'Prospects', description: 'Pages proposed as link opportunities; searchable by title, URL and domain.' },
  { name: 'Leads', description: 'Conversations elsewhere worth answering, by stage and tier; searchable.' },
  { name: 'Contacts', description: 'People to write to, their discovery and their address verification.' },
  { name: 'Drafts', description: 'Outreach messages before sending: read, edit and regenerate.' },
  {
    name: 'Threads',
    description: 'Mail conversations with prospects, their messages, and replies sent through the outbox.',
  },
  { name: 'Discovery jobs', description: 'Background jobs that find prospects or contacts, with their queries.' },
  { name: 'Email accounts', description: 'Mail connections and their senders, with warm-up and health.' },
  { name: 'Pipeline', description: "Counts of a site's records by status." },
];

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
