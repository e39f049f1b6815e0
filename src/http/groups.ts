/**
 * The two path forms of every grouped operation (decisions.md §1): `/projects/{projectId}/…` and
 * `/workspaces/{workspaceId}/…` address the same record with identical payloads. A resource
 * module defines its route once as a function of the group and registers it for both.
 */
import { z } from '@hono/zod-openapi';
import { Id } from '../schemas/common.js';
import type { Scope } from '../domain/scopes.js';

export interface Group {
  /** First path segment. */
  name: 'projects' | 'workspaces';
  /** Name of the group id path parameter. */
  param: 'projectId' | 'workspaceId';
  /** Scope of the top-level list and detail in this form (decisions.md §2). */
  listScope: Scope;
  /** OpenAPI tag. */
  tag: string;
}

export const GROUPS: readonly Group[] = [
  { name: 'projects', param: 'projectId', listScope: 'projects:read', tag: 'Projects' },
  { name: 'workspaces', param: 'workspaceId', listScope: 'workspaces:read', tag: 'Workspaces' },
];

/** `/projects/{projectId}` + `rest` (OpenAPI path syntax). */
export const groupPath = (group: Group, rest = '') => `/${group.name}/{${group.param}}${rest}`;

/** A unique operationId per form: `listBacklinks` / `listBacklinksInWorkspace`. */
export const operationId = (group: Group, base: string) => (group.name === 'projects' ? base : `${base}InWorkspace`);

/**
 * The path-parameter schema of a grouped route: the group id plus `extra` ids.
 * Typed loosely on the group key so one handler serves both forms; read it with `groupIdOf`.
 */
export function groupParams<E extends Record<string, z.ZodType> = Record<never, never>>(group: Group, extra?: E) {
  return z.object({
    [group.param]: Id.openapi({ param: { name: group.param, in: 'path' }, example: 'prj_acme' }),
    ...extra,
  } as unknown as { projectId: typeof Id } & E);
}

/** The group id of a validated `groupParams` object, whichever form the request used. */
export const groupIdOf = (group: Group, params: object) => (params as Record<string, string>)[group.param]!;
