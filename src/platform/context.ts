import type { FastifyRequest } from 'fastify';
import { forbidden } from './errors.ts';

/**
 * The request context: who is calling, in which organization, confined to which project. It lives
 * in the platform so that every module reads it the same way; the auth module's Guard is the only
 * code that fills it (request.principal, request.org).
 */

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export interface ApiKeyPrincipal {
  kind: 'apiKey';
  keyId: string;
  orgId: string;
  /** The project the key is bound to (CONTRACT §2); null for an organization-wide key. */
  projectId: string | null;
  scopes: string[];
}

export type Principal = { kind: 'user'; userId: string } | ApiKeyPrincipal;

/** Who a change is recorded as: on events (`actor`), approvals, posts. An agent's id is its run's id. */
export interface Actor {
  type: 'user' | 'apiKey' | 'agent' | 'workflow' | 'system';
  id: string;
}

/**
 * Who acts, in which organization, and the project an API key is bound to. Every service takes
 * this one scope and filters its rows with `tenant()` (platform/tenant.ts). `projectId` has one
 * meaning everywhere: a restriction (CONTRACT §2), never a default; a caller's default project is
 * passed as the input's `projectId`.
 */
export interface Scope {
  orgId: string;
  /** The only project this caller sees (an API key bound to one, an agent run's project); null: the whole organization. */
  projectId: string | null;
  actor: Actor;
}

/** The scope of a request under /orgs/:orgId, with the credential it came from. */
export interface OrgContext extends Scope {
  principal: Principal;
  /** The member's role for a session; null for an API key. */
  role: Role | null;
}

/**
 * What a route needs. `scope`: an API key needs one of these (a `:write` scope also bars viewers);
 * `admin`: owner or admin session only (managing members, keys, webhook endpoints);
 * `sessionOnly`: API keys may not call it at all.
 */
export interface Access {
  scope?: string | string[];
  admin?: boolean;
  sessionOnly?: boolean;
  /** Sessions must be owner or admin; API keys are governed by `scope` as usual. */
  manage?: boolean;
  write?: boolean;
  /** Organization-level (members, keys, invitations, budget): refused to an API key bound to a project (CONTRACT §2). */
  orgLevel?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    /** SSE routes also accept `?access_token=` (SPEC "Authentication", rule 2). */
    sse?: boolean;
  }
  interface FastifyRequest {
    principal?: Principal;
    org?: OrgContext;
  }
}

/** The organization context of a request under /orgs/:orgId; set by the org guard hook. */
export function orgOf(request: FastifyRequest): OrgContext {
  if (!request.org) throw new Error('Route is missing the org guard');
  return request.org;
}

/** The agent run acting, when the actor is an agent (its id is the run's id); recorded on what it writes. */
export function agentRunOf(actor: Actor): string | null {
  return actor.type === 'agent' ? actor.id : null;
}

/**
 * A key bound to a project that names another one, as `projectId` in the query or the JSON body,
 * gets 403 on every route (CONTRACT §2), before any handler runs; services still confine the key to
 * its project (OrgsService.projectFor and `tenant()`), this only makes the answer the same
 * everywhere instead of an empty list here and a 404 there. In the body, every `projectId` its
 * schema declares counts, however deep (a campaign's `audience.projectId`): reading the top level
 * only let a bound key's campaign "for project 2" through, to be sent to its own project's leads.
 * Free-form objects (a lead's `custom`, a trigger's payload) declare no `projectId`, so a key of
 * theirs that happens to be named so is data, not a project.
 */
export function assertNamedProject(request: FastifyRequest): void {
  const bound = request.org?.projectId;
  if (!bound) return;
  const named = [(request.query as { projectId?: unknown } | null)?.projectId, (request.body as { projectId?: unknown } | null)?.projectId];
  declaredProjectIds(request.routeOptions.schema?.body, request.body, named, 0);
  for (const value of named) {
    if (typeof value === 'string' && value !== '' && value !== bound) throw forbidden('This API key is bound to another project');
  }
}

/** Collects into `out` the values at the `projectId` properties `schema` declares in `value` (objects, unions, arrays; 8 levels at most). */
function declaredProjectIds(schema: unknown, value: unknown, out: unknown[], depth: number): void {
  if (!schema || typeof schema !== 'object' || value === null || typeof value !== 'object' || depth > 8) return;
  const s = schema as { properties?: Record<string, unknown>; anyOf?: unknown[]; oneOf?: unknown[]; allOf?: unknown[]; items?: unknown };
  for (const part of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) declaredProjectIds(part, value, out, depth + 1);
  if (Array.isArray(value)) {
    for (const item of value) declaredProjectIds(s.items, item, out, depth + 1);
    return;
  }
  for (const [key, sub] of Object.entries(s.properties ?? {})) {
    const v = (value as Record<string, unknown>)[key];
    if (key === 'projectId') out.push(v);
    else declaredProjectIds(sub, v, out, depth + 1);
  }
}
