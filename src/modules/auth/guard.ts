import type { FastifyRequest } from 'fastify';
import { forbidden, insufficientScope, notFound, unauthorized } from '../../platform/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Deps } from '../../platform/deps.ts';
import type { Access, OrgContext, Principal } from '../../platform/context.ts';
import type { ApiKeysPort, AuthOrgsPort, GuardPorts } from './ports.ts';

/** Fills the request context of platform/context.ts: the principal of a credential, then its organization scope. */
export class Guard {
  private readonly auth: GuardPorts['auth'];
  private readonly apiKeys: ApiKeysPort;
  private readonly orgs: AuthOrgsPort;
  private readonly clock: Clock;

  constructor(deps: Deps, ports: GuardPorts) {
    this.auth = ports.auth;
    this.apiKeys = ports.apiKeys;
    this.orgs = ports.orgs;
    this.clock = deps.clock;
  }

  /** Reads the credential of a request: `X-Api-Key`, `Authorization: Bearer`, or `access_token` on SSE routes. */
  async authenticate(request: FastifyRequest): Promise<Principal> {
    const principal = await this.identify(request);
    if (!principal) throw unauthorized();
    return principal;
  }

  /** As authenticate, but null for a request without a valid credential (the rate limiter's key: no error built per public request). */
  async identify(request: FastifyRequest): Promise<Principal | null> {
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
    if (principal) request.principal = principal;
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
