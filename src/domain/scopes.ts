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
