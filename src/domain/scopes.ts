/** Every scope a token can hold (contract §5.7, decisions.md §2). */
export const SCOPES = [
  'projects:read',
  'workspaces:read',
  'sites:read',
  'backlinks:read',
  'leads:read',
  'prospects:read',
  'contacts:read',
  'outreach:read',
  'outreach:write',
  'outreach:send',
  'contacts:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * What each scope grants, in a line (decisions.md §2), for people choosing scopes (the settings
 * area's create form). A scope grants only its own line: `outreach:write` does not imply
 * `outreach:read`. Every token, whatever its scopes, may call `GET /me`.
 */
export const SCOPE_GRANTS: Record<Scope, string> = {
  'projects:read': 'List projects and read a project (the /projects form).',
  'workspaces:read': 'List workspaces and read a workspace (the /workspaces form).',
  'sites:read': 'Sites, a site’s details and its keywords.',
  'backlinks:read': 'Backlinks and a backlink’s details.',
  'leads:read': 'Leads and a lead’s details.',
  'prospects:read': 'Prospects and their details, discovery jobs, pipeline status and blocked domains.',
  'contacts:read': 'The contacts of a prospect.',
  'outreach:read': 'Drafts and their details, threads, thread messages and email accounts.',
  'outreach:write': 'Edit a draft and regenerate a draft.',
  'outreach:send': 'Reply to a thread (sends mail).',
  'contacts:write': 'Run contact discovery and verify a contact.',
};
