import type { FastifyRequest } from 'fastify';
import { forbidden, insufficientScope, notFound, unauthorized } from '../../platform/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { ApiKeyPrincipal, ApiKeysService } from '../api-keys/service.ts';
import type { OrgsService, Role } from '../orgs/service.ts';
import type { AuthService } from './service.ts';

export type Principal = { kind: 'user'; userId: string } | ApiKeyPrincipal;

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

export interface Actor {
  type: 'user' | 'apiKey' | 'agent' | 'workflow' | 'system';
  id: string;
}

export interface OrgContext {
  orgId: string;
  principal: Principal;
  role: Role | null;
  /** An API key bound to one project only sees that project. */
  projectId: string | null;
  actor: Actor;
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

export class Guard {
  private readonly auth: AuthService;
  private readonly apiKeys: ApiKeysService;
  private readonly orgs: OrgsService;
  private readonly clock: Clock;

  constructor(auth: AuthService, apiKeys: ApiKeysService, orgs: OrgsService, clock: Clock) {
    this.auth = auth;
    this.apiKeys = apiKeys;
    this.orgs = orgs;
    this.clock = clock;
  }

  /** Reads the credential of a request: `X-Api-Key`, `Authorization: Bearer`, or `access_token` on SSE routes. */
  async authenticate(request: FastifyRequest): Promise<Principal> {
    if (request.principal) return request.principal;
    const apiKey = request.headers['x-api-key'];
    let principal: Principal | null = null;
    if (typeof apiKey === 'string' && apiKey.length > 0) {
      principal = await this.apiKeys.authenticate(apiKey);
    } else {
      const token = bearer(request) ?? (request.routeOptions.config.sse ? queryToken(request) : undefined);
      if (token) {
        const userId = await this.auth.accessTokens.verify(token, this.clock.now());
        if (userId) principal = { kind: 'user', userId };
      }
    }
    if (!principal) throw unauthorized();
    request.principal = principal;
    return principal;
  }

  async authorizeOrg(principal: Principal, orgId: string, access: Access): Promise<OrgContext> {
    if (principal.kind === 'apiKey') {
      if (principal.orgId !== orgId) throw notFound('Organization');
      if (access.admin || access.sessionOnly) throw forbidden('This operation needs a user session of an owner or admin');
      if (access.orgLevel && principal.projectId) throw forbidden('An API key bound to a project cannot use organization-level resources');
      const wanted = access.scope === undefined ? [] : Array.isArray(access.scope) ? access.scope : [access.scope];
      if (wanted.length > 0 && !principal.scopes.includes('*') && !wanted.some((s) => principal.scopes.includes(s))) {
        throw insufficientScope(wanted.join('" or "'));
      }
      return { orgId, principal, role: null, projectId: principal.projectId, actor: { type: 'apiKey', id: principal.keyId } };
    }
    const role = await this.orgs.roleOf(orgId, principal.userId);
    if (!role) throw notFound('Organization');
    const writes = access.write ?? (Array.isArray(access.scope) ? access.scope : [access.scope ?? '']).some((s) => s.endsWith(':write'));
    if ((access.admin || access.manage) && role !== 'owner' && role !== 'admin') throw forbidden('Only an owner or admin can do this');
    if (writes && role === 'viewer') throw forbidden('Viewers have read-only access');
    return { orgId, principal, role, projectId: null, actor: { type: 'user', id: principal.userId } };
  }
}

/**
 * A key bound to a project that names another one, as `projectId` in the query or the JSON body,
 * gets 403 on every route (CONTRACT §2), before any handler runs; services still confine the key to
 * its project (OrgsService.projectFor and the modules' filters), this only makes the answer the same
 * everywhere instead of an empty list here and a 404 there.
 */
export function assertNamedProject(request: FastifyRequest): void {
  const bound = request.org?.projectId;
  if (!bound) return;
  for (const source of [request.query, request.body]) {
    if (source === null || typeof source !== 'object' || Array.isArray(source)) continue;
    const named = (source as { projectId?: unknown }).projectId;
    if (typeof named === 'string' && named !== '' && named !== bound) throw forbidden('This API key is bound to another project');
  }
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header);
  return match?.[1]?.trim();
}

function queryToken(request: FastifyRequest): string | undefined {
  const token = (request.query as Record<string, unknown> | undefined)?.access_token;
  return typeof token === 'string' && token.length > 0 ? token : undefined;
}

/** The organization context of a request under /orgs/:orgId; set by the org guard hook. */
export function orgOf(request: FastifyRequest): OrgContext {
  if (!request.org) throw new Error('Route is missing the org guard');
  return request.org;
}
