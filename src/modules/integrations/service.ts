import { and, asc, count, desc, eq, lte, ne, or, sql } from 'drizzle-orm';
import * as oauth4 from 'oauth4webapi';
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import { SecretBox, sha256Hex } from '../../platform/crypto.ts';
import { AppError, badRequest, notFound, rateLimited, unprocessable } from '../../platform/errors.ts';
import { outboundRequest } from '../../platform/http-client.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { Scope } from '../../platform/context.ts';
import type { EventsPort, IntegrationsPorts, NotifyPort, OrgsPort } from './ports.ts';
import { assertCanChange, assertMayMakeOrgWide, inScope, inScopeOrgWide, type Tenant } from '../../platform/tenant.ts';
import { connectorFor, type Provider } from './connectors/index.ts';
import { OAuthClients, PROVIDER_SPECS, TokenError, isOAuthProvider, type OAuthProvider, type TokenSet } from './oauth.ts';
import { integrations, oauthStates } from './tables.ts';
import { newFlowSecret } from './flow-cookie.ts';

type Row = typeof integrations.$inferSelect;

export function publicIntegration(row: Row) {
  return {
    id: row.id,
    provider: row.provider,
    name: row.name,
    projectId: row.projectId,
    status: row.status,
    lastError: row.lastError ?? null,
    config: row.config ?? {},
    authType: row.authType,
    tokenExpiresAt: row.tokenExpiresAt ?? null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
export type Integration = ReturnType<typeof publicIntegration>;

/** An authorization in progress lives this long (CONTRACT §10). */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;
/** At most this many authorizations in progress per organization. */
const MAX_PENDING_STATES = 50;
/** freshCredentials hands out an access token valid for at least this long. */
export const MIN_TOKEN_VALIDITY_MS = 60_000;
/** refreshDue refreshes tokens that expire within this window. */
export const PROACTIVE_REFRESH_MS = 10 * 60_000;
const REFRESH_BATCH = 50;
const PROFILE_TIMEOUT_MS = 10_000;
export const REAUTH_REQUIRED = 'REAUTH_REQUIRED';

/** The code a caller maps: a failed post with REAUTH_REQUIRED, not retried. */
export function reauthRequired(row: Pick<Row, 'id' | 'name'>, message: string): AppError {
  return new AppError(422, REAUTH_REQUIRED, `Integration ${row.id} (${row.name}) must be connected again: ${message}`, { integrationId: row.id });
}

/** The provider's token endpoint failed for now (unreachable, 5xx): try again later; the integration is untouched. */
export function oauthUnavailable(message: string): AppError {
  return new AppError(503, 'OAUTH_UNAVAILABLE', message, { retryable: true });
}

/** Config keys a user may set per provider (PATCH …/integrations/:id), each with its check. */
const CONFIG_KEYS: Record<string, Record<string, { check: (v: string) => string | null; normalize?: (v: string) => string }>> = {
  google: {
    propertyId: {
      check: (v) => (/^(properties\/)?\d{1,20}$/.test(v) ? null : 'must be a GA4 property: properties/123456789 or its digits'),
      normalize: (v) => (v.startsWith('properties/') ? v : `properties/${v}`),
    },
    siteUrl: {
      check: (v) => {
        if (/^sc-domain:[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/i.test(v)) return null;
        try {
          const url = new URL(v);
          if ((url.protocol === 'https:' || url.protocol === 'http:') && v.endsWith('/') && !url.search && !url.hash && !url.username && !url.password)
            return null;
        } catch {
          // not a URL
        }
        return 'must be a Search Console property: https://www.example.com/ (with the trailing slash) or sc-domain:example.com';
      },
    },
  },
  linkedin: {},
  x: {},
};

export class IntegrationsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly log: FastifyBaseLogger;
  private readonly box: SecretBox;
  private readonly events: EventsPort;
  private readonly orgs: OrgsPort;
  private readonly notifications: NotifyPort;
  readonly oauth: OAuthClients;

  constructor(deps: Deps, ports: IntegrationsPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
    this.log = deps.log;
    this.box = new SecretBox(deps.config.appSecret);
    this.events = ports.events;
    this.orgs = ports.orgs;
    this.notifications = ports.notifications;
    this.oauth = new OAuthClients(deps.config, deps.clock);
  }

  async connect(
    scope: Scope,
    input: { provider: Provider; name: string; projectId?: string | null; credentials: Record<string, unknown> },
  ): Promise<Integration> {
    const connector = connectorFor(input.provider);
    if (!connector) throw badRequest(`Unknown provider ${input.provider}`, [{ field: 'body.provider', message: 'must be linkedin or x' }]);
    const problem = connector.checkCredentials(input.credentials);
    if (problem) throw badRequest(problem, [{ field: 'body.credentials', message: problem }]);
    assertMayMakeOrgWide(scope, input.projectId, 'integration');
    const projectId = await this.orgs.projectFor(scope, input.projectId);
    const credentials: Record<string, string> = {};
    for (const [k, v] of Object.entries(input.credentials)) if (typeof v === 'string') credentials[k] = v;
    const now = this.clock.now();
    return transaction(this.db, async (tx) => {
      const [row] = await tx
        .insert(integrations)
        .values({
          id: newId('integration', now.getTime()),
          orgId: scope.orgId,
          projectId,
          provider: input.provider,
          name: input.name,
          credentialsSealed: this.box.seal(JSON.stringify(credentials)),
          status: 'connected',
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      await this.recordConnected(tx, row!);
      return publicIntegration(row!);
    });
  }

  /** integration.connected (SPEC: integrationId, provider, name, projectId?); integration.* events carry no envelope projectId. */
  private async recordConnected(tx: Db, row: Row): Promise<void> {
    const payload: Record<string, unknown> = { integrationId: row.id, provider: row.provider, name: row.name };
    if (row.projectId) payload.projectId = row.projectId;
    await this.events.record(tx, { orgId: row.orgId, type: 'integration.connected', payload });
  }

  async list(scope: Scope, query: ListQuery & { provider?: string; status?: string }) {
    const page = pageOf(query);
    const where = inScopeOrgWide(
      scope,
      integrations,
      query.provider ? eq(integrations.provider, query.provider) : undefined,
      query.status ? eq(integrations.status, query.status) : undefined,
    );
    const [items, counted] = await Promise.all([
      this.db.select().from(integrations).where(where).orderBy(desc(integrations.id)).limit(page.limit).offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(integrations)
        .where(where),
    ]);
    return envelope(items.map(publicIntegration), counted[0]?.n ?? 0, page);
  }

  /** An integration the scope can see: its project's or an organization-wide one (content checks a post's project this way). */
  async row(scope: Tenant, id: string, db: Db = this.db): Promise<Row | undefined> {
    const [row] = await db
      .select()
      .from(integrations)
      .where(inScopeOrgWide(scope, integrations, eq(integrations.id, id)));
    return row;
  }

  async get(scope: Scope, id: string): Promise<Integration> {
    const row = await this.row(scope, id);
    if (!row) throw notFound('Integration');
    return publicIntegration(row);
  }

  /**
   * Renames an integration or sets what it reads (google: `propertyId` for GA4, `siteUrl` for Search
   * Console). Config keys are merged; an empty string removes one.
   */
  async update(scope: Scope, id: string, patch: { name?: string; config?: Record<string, string> }): Promise<Integration> {
    const row = await this.row(scope, id);
    if (!row) throw notFound('Integration');
    assertCanChange(scope, row.projectId, 'This integration');
    const config = { ...row.config };
    if (patch.config) {
      const known = CONFIG_KEYS[row.provider] ?? {};
      for (const [key, raw] of Object.entries(patch.config)) {
        const rule = Object.hasOwn(known, key) ? known[key] : undefined;
        const field = `body.config.${key}`;
        if (!rule) {
          const names = Object.keys(known);
          const message = names.length ? `is not a ${row.provider} setting (known: ${names.join(', ')})` : `${row.provider} integrations have no settings`;
          throw badRequest(`config.${key} ${message}`, [{ field, message }]);
        }
        const value = raw.trim();
        if (value === '') {
          delete config[key];
          continue;
        }
        const problem = rule.check(value);
        if (problem) throw badRequest(`config.${key} ${problem}`, [{ field, message: problem }]);
        config[key] = rule.normalize ? rule.normalize(value) : value;
      }
    }
    const [after] = await this.db
      .update(integrations)
      .set({ ...(patch.name !== undefined ? { name: patch.name } : {}), config, updatedAt: this.clock.now() })
      .where(inScope(scope, integrations, eq(integrations.id, id)))
      .returning();
    if (!after) throw notFound('Integration');
    return publicIntegration(after);
  }

  /** Organization-wide integrations are read-only for a key bound to a project (403). */
  async delete(scope: Scope, id: string): Promise<void> {
    const row = await this.row(scope, id);
    if (!row) throw notFound('Integration');
    assertCanChange(scope, row.projectId, 'This integration');
    const deleted = await this.db
      .delete(integrations)
      .where(inScope(scope, integrations, eq(integrations.id, id)))
      .returning({ id: integrations.id });
    if (deleted.length === 0) throw notFound('Integration');
  }

  /** The decrypted credentials: only connectors see them. For an OAuth connection use freshCredentials. */
  credentialsOf(row: Row): Record<string, string> {
    return JSON.parse(this.box.open(row.credentialsSealed)) as Record<string, string>;
  }

  /** Marks the integration in error (re-authorization needed) and emits integration.error, in the caller's transaction. */
  async markError(tx: Db, row: Row, error: { code: string; message: string }): Promise<void> {
    const now = this.clock.now();
    await tx
      .update(integrations)
      .set({ status: 'error', lastError: { ...error, at: now.toISOString() }, errorAt: now, updatedAt: now })
      .where(inScope({ orgId: row.orgId, projectId: null }, integrations, eq(integrations.id, row.id)));
    await this.events.record(tx, {
      orgId: row.orgId,
      type: 'integration.error',
      payload: { integrationId: row.id, provider: row.provider, code: error.code, message: error.message },
    });
  }

  /** A success proves the credentials work again (not after REAUTH_REQUIRED: only a reconnect ends that). */
  async markHealthy(tx: Db, row: Row): Promise<void> {
    if (row.status === 'connected') return;
    await tx
      .update(integrations)
      .set({ status: 'connected', lastError: null, errorAt: null, updatedAt: this.clock.now() })
      .where(
        and(
          inScope({ orgId: row.orgId, projectId: null }, integrations, eq(integrations.id, row.id)),
          sql`coalesce(${integrations.lastError}->>'code', '') <> ${REAUTH_REQUIRED}`,
        ),
      );
  }

  // ── OAuth 2.0 connections (CONTRACT §10) ────────────────────────────────────────────────────────

  /**
   * Starts an authorization: a single-use `state` (stored as its hash), a PKCE verifier (sealed) and
   * the starting browser's secret (stored as its hash; the route sets it as the flow cookie), valid
   * 10 minutes; answers the provider's authorization URL. With `integrationId` it reconnects that
   * integration (same organization and provider), keeping its id.
   */
  async startOAuth(
    scope: Scope,
    provider: OAuthProvider,
    input: { name?: string; projectId?: string | null; returnTo?: string; integrationId?: string },
  ): Promise<{ authorizationUrl: string; flow: { state: string; secret: string } }> {
    if (!isOAuthProvider(provider)) throw notFound('Provider');
    if (!this.oauth.configured(provider)) {
      const env = provider.toUpperCase();
      throw unprocessable(
        'INTEGRATION_NOT_CONFIGURED',
        `${PROVIDER_SPECS[provider].label} is not configured on this server: set ${env}_CLIENT_ID and ${env}_CLIENT_SECRET`,
      );
    }
    const returnTo = this.checkReturnTo(input.returnTo);
    let projectId: string | null;
    let integrationId: string | null = null;
    if (input.integrationId !== undefined) {
      const row = await this.row(scope, input.integrationId);
      if (!row || row.provider !== provider) throw notFound('Integration');
      assertCanChange(scope, row.projectId, 'This integration');
      projectId = row.projectId;
      integrationId = row.id;
    } else {
      assertMayMakeOrgWide(scope, input.projectId, 'integration');
      projectId = await this.orgs.projectFor(scope, input.projectId);
    }
    const now = this.clock.now();
    await this.db.delete(oauthStates).where(lte(oauthStates.expiresAt, now));
    const [pending] = await this.db.select({ n: count() }).from(oauthStates).where(eq(oauthStates.orgId, scope.orgId));
    if ((pending?.n ?? 0) >= MAX_PENDING_STATES)
      throw rateLimited(OAUTH_STATE_TTL_MS / 1000, 'RATE_LIMIT', 'Too many connections in progress; finish or wait for them to expire');
    const { state, verifier, challenge } = await this.oauth.newAuthorization();
    const browser = newFlowSecret();
    await this.db.insert(oauthStates).values({
      stateHash: sha256Hex(state),
      orgId: scope.orgId,
      projectId,
      actor: `${scope.actor.type === 'apiKey' ? 'apikey' : scope.actor.type}:${scope.actor.id}`,
      provider,
      name: input.name ?? null,
      returnTo,
      integrationId,
      verifierSealed: this.box.seal(verifier),
      browserHash: browser.hash,
      expiresAt: new Date(now.getTime() + OAUTH_STATE_TTL_MS),
      createdAt: now,
    });
    return { authorizationUrl: this.oauth.authorizationUrl(provider, { state, challenge }), flow: { state, secret: browser.secret } };
  }

  /** An absolute URL on PUBLIC_URL's origin (a path is taken relative to it), or null. */
  private checkReturnTo(value: string | undefined): string | null {
    if (value === undefined || value === '') return null;
    const origin = new URL(this.config.publicUrl).origin;
    let url: URL | null = null;
    try {
      url = new URL(value, origin + '/');
    } catch {
      url = null;
    }
    if (!url || url.origin !== origin) {
      const message = `must be on this service's origin (${origin})`;
      throw badRequest(`returnTo ${message}`, [{ field: 'body.returnTo', message }]);
    }
    return url.toString();
  }

  /**
   * The provider's redirect back (`GET /api/v1/oauth/callback`), with the flow cookie's secret the
   * browser brought (`browserSecret`). The state is consumed in one statement (single-use), and only
   * together with the secret of the browser that started it: a state without it, or with another
   * flow's, is a 400 like an unknown, used or expired one, stores nothing and stays for its own
   * browser. Answers where to send the browser: `returnTo` (or the panel's integrations page) with
   * `connected=<id>`, or with `error=<code>` when the user said no or the provider failed.
   */
  async completeOAuth(query: Record<string, string | undefined>, browserSecret: string | undefined): Promise<{ location: string; integrationId?: string }> {
    const state = query.state;
    if (!state) throw badRequest("The provider's answer has no state", [{ field: 'querystring.state', message: 'is required' }]);
    if (!browserSecret) {
      // Told apart from an unknown state by the request alone: it says nothing about stored states.
      throw new AppError(
        400,
        'OAUTH_STATE_INVALID',
        'This connection was not started in this browser (or the browser did not keep its cookie); start connecting again from the same browser',
      );
    }
    const now = this.clock.now();
    const [pending] = await this.db
      .delete(oauthStates)
      .where(and(eq(oauthStates.stateHash, sha256Hex(state)), eq(oauthStates.browserHash, sha256Hex(browserSecret))))
      .returning();
    if (!pending || pending.expiresAt.getTime() <= now.getTime() || !isOAuthProvider(pending.provider)) {
      throw new AppError(400, 'OAUTH_STATE_INVALID', 'This connection attempt is unknown, expired or was already used; start connecting again');
    }
    const provider = pending.provider;
    const back = (params: Record<string, string>) => {
      const target = new URL(pending.returnTo ?? `${this.config.publicUrl}/orgs/${encodeURIComponent(pending.orgId)}/settings/integrations`);
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
      return target.toString();
    };
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (typeof v === 'string') params.set(k, v);
    let checked: URLSearchParams;
    try {
      checked = this.oauth.checkCallback(provider, params, state);
    } catch (error) {
      const code = error instanceof oauth4.AuthorizationResponseError ? error.error : 'invalid_response';
      return { location: back({ error: /^[a-z_]{1,64}$/.test(code) ? code : 'invalid_response' }) };
    }
    let tokens: TokenSet;
    try {
      tokens = await this.oauth.exchange(provider, checked, this.box.open(pending.verifierSealed));
    } catch (error) {
      this.log.warn({ provider, orgId: pending.orgId, err: { message: (error as Error).message } }, 'oauth code exchange failed');
      const code = error instanceof TokenError && error.oauthError && /^[a-z_]{1,64}$/.test(error.oauthError) ? error.oauthError : 'token_exchange_failed';
      return { location: back({ error: code }) };
    }
    const credentials: Record<string, string> = { accessToken: tokens.accessToken };
    if (tokens.refreshToken) credentials.refreshToken = tokens.refreshToken;
    if (tokens.expiresAt) credentials.expiresAt = tokens.expiresAt.toISOString();
    if (tokens.scope) credentials.scope = tokens.scope;
    let accountName: string | undefined;
    try {
      const profile = await this.profile(provider, tokens);
      if (profile.author) credentials.author = profile.author;
      accountName = profile.name;
    } catch (error) {
      this.log.warn({ provider, orgId: pending.orgId, err: { message: (error as Error).message } }, 'oauth profile lookup failed');
      return { location: back({ error: 'profile_unavailable' }) };
    }

    const stored = await transaction(this.db, async (tx) => {
      if (pending.integrationId) {
        const [before] = await tx
          .select()
          .from(integrations)
          .where(and(eq(integrations.id, pending.integrationId), eq(integrations.orgId, pending.orgId), eq(integrations.provider, provider)))
          .for('update');
        if (!before) return null;
        const old = this.credentialsOf(before);
        // Google gives a refresh token only on the first consent: keep the one we have.
        if (!credentials.refreshToken && old.refreshToken && before.authType === 'oauth') credentials.refreshToken = old.refreshToken;
        const [after] = await tx
          .update(integrations)
          .set({
            credentialsSealed: this.box.seal(JSON.stringify(credentials)),
            authType: 'oauth',
            tokenExpiresAt: tokens.expiresAt ?? null,
            status: 'connected',
            lastError: null,
            errorAt: null,
            ...(pending.name ? { name: pending.name } : {}),
            updatedAt: now,
          })
          .where(eq(integrations.id, before.id))
          .returning();
        return after!;
      }
      const [row] = await tx
        .insert(integrations)
        .values({
          id: newId('integration', now.getTime()),
          orgId: pending.orgId,
          projectId: pending.projectId,
          provider,
          name: (pending.name ?? accountName ?? `${PROVIDER_SPECS[provider].label} account`).slice(0, 200),
          credentialsSealed: this.box.seal(JSON.stringify(credentials)),
          status: 'connected',
          authType: 'oauth',
          tokenExpiresAt: tokens.expiresAt ?? null,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      await this.recordConnected(tx, row!);
      return row!;
    });
    if (!stored) return { location: back({ error: 'integration_missing' }) };
    return { location: back({ connected: stored.id }), integrationId: stored.id };
  }

  /**
   * Who the connection acts for: LinkedIn's member URN (the posts' author) from OpenID userinfo; a
   * display name (LinkedIn's name, X's @username, Google's e-mail) for a new integration.
   */
  private async profile(provider: OAuthProvider, tokens: TokenSet): Promise<{ author?: string; name?: string }> {
    if (provider === 'google') return { name: tokens.idToken?.email };
    const get = async (url: string) => {
      const res = await outboundRequest({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${tokens.accessToken}`, accept: 'application/json' },
        allowPrivate: this.config.webhookAllowPrivate,
        timeoutMs: PROFILE_TIMEOUT_MS,
        readBytes: 64 * 1024,
      });
      if (res.status !== 200) throw new Error(`${url} answered HTTP ${res.status}`);
      return JSON.parse(res.body) as Record<string, unknown>;
    };
    if (provider === 'linkedin') {
      const info = await get(`${this.config.linkedinApiUrl}/v2/userinfo`);
      const sub = info.sub;
      if (typeof sub !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(sub)) throw new Error('LinkedIn userinfo has no usable sub');
      return { author: `urn:li:person:${sub}`, name: typeof info.name === 'string' && info.name ? info.name : undefined };
    }
    // X: the name is a nicety; a failure does not stop the connection.
    try {
      const me = (await get(`${this.config.xApiUrl}/2/users/me`)).data as { username?: unknown } | undefined;
      return { name: typeof me?.username === 'string' ? `@${me.username}` : undefined };
    } catch {
      return {};
    }
  }

  // ── Refresh ─────────────────────────────────────────────────────────────────────────────────────

  private isReauthError(row: Row): boolean {
    return row.status === 'error' && row.lastError?.code === REAUTH_REQUIRED;
  }

  private validFor(credentials: Record<string, string>, ms: number): boolean {
    if (!credentials.expiresAt) return true; // the provider did not say: it lasts until refused
    return Date.parse(credentials.expiresAt) - this.clock.now().getTime() > ms;
  }

  /**
   * The credentials with an access token valid at least 60 more seconds. A pasted token is returned
   * as it is. An OAuth token that expires sooner (or `rejected`: the token the provider just refused)
   * is refreshed, one refresh at a time per integration across instances.
   * Throws AppError `REAUTH_REQUIRED` (422: the user must connect again; the integration is in
   * error, notified once) or `OAUTH_UNAVAILABLE` (503: the provider failed for now, retry later).
   */
  async freshCredentials(row: Row, options: { rejected?: string } = {}): Promise<Record<string, string>> {
    const credentials = this.credentialsOf(row);
    if (row.authType !== 'oauth') return credentials;
    if (this.isReauthError(row)) throw reauthRequired(row, row.lastError!.message);
    if (options.rejected === undefined && this.validFor(credentials, MIN_TOKEN_VALIDITY_MS)) return credentials;
    return this.refreshLocked(row, MIN_TOKEN_VALIDITY_MS, options.rejected);
  }

  /**
   * Refreshes the OAuth integrations whose access token expires within 10 minutes (a worker loop
   * calls it). Returns true when a full batch was refreshed (there may be more right away).
   */
  async refreshDue(): Promise<boolean> {
    const horizon = new Date(this.clock.now().getTime() + PROACTIVE_REFRESH_MS);
    const due = await this.db
      .select()
      .from(integrations)
      .where(
        and(
          eq(integrations.authType, 'oauth'),
          lte(integrations.tokenExpiresAt, horizon),
          or(ne(integrations.status, 'error'), sql`coalesce(${integrations.lastError}->>'code', '') <> ${REAUTH_REQUIRED}`),
        ),
      )
      .orderBy(asc(integrations.tokenExpiresAt))
      .limit(REFRESH_BATCH);
    let refreshed = 0;
    for (const row of due) {
      try {
        await this.refreshLocked(row, PROACTIVE_REFRESH_MS, undefined, { keepWithoutRefreshToken: true });
        refreshed++;
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        this.log.warn({ integrationId: row.id, code: error.code, err: { message: error.message } }, 'oauth refresh failed');
      }
    }
    return due.length === REFRESH_BATCH && refreshed === due.length;
  }

  /**
   * The refresh itself, under the integration's row lock: the row is read again once locked, so a
   * caller that waited for another's refresh uses its token instead of refreshing again.
   */
  private async refreshLocked(
    row: Row,
    minValidityMs: number,
    rejected: string | undefined,
    options: { keepWithoutRefreshToken?: boolean } = {},
  ): Promise<Record<string, string>> {
    type Outcome = { kind: 'ok'; credentials: Record<string, string> } | { kind: 'reauth' | 'retryable' | 'failed' | 'missing'; message: string; row?: Row };
    const outcome: Outcome = await transaction(this.db, async (tx) => {
      const [current] = await tx
        .select()
        .from(integrations)
        .where(and(eq(integrations.id, row.id), eq(integrations.orgId, row.orgId)))
        .for('update');
      if (!current) return { kind: 'missing', message: `Integration ${row.id} no longer exists` };
      if (this.isReauthError(current)) return { kind: 'reauth', message: current.lastError!.message, row: current };
      const credentials = this.credentialsOf(current);
      const stillRejected = rejected !== undefined && credentials.accessToken === rejected;
      if (current.authType !== 'oauth' || (!stillRejected && this.validFor(credentials, minValidityMs))) return { kind: 'ok', credentials };
      const label = PROVIDER_SPECS[current.provider as OAuthProvider]?.label ?? current.provider;
      if (!credentials.refreshToken || !isOAuthProvider(current.provider)) {
        // Nothing to refresh with: usable until it expires, then only a reconnect helps.
        if (options.keepWithoutRefreshToken && !stillRejected && this.validFor(credentials, 0)) return { kind: 'ok', credentials };
        const message = `${label} gave no refresh token and the access token ${stillRejected ? 'was refused' : 'expired'}; connect the account again`;
        await this.requireReauth(tx, current, message);
        return { kind: 'reauth', message, row: current };
      }
      let tokens: TokenSet;
      try {
        tokens = await this.oauth.refresh(current.provider, credentials.refreshToken);
      } catch (error) {
        if (!(error instanceof TokenError)) throw error;
        if (error.kind === 'reauth') {
          await this.requireReauth(tx, current, error.message);
          return { kind: 'reauth', message: error.message, row: current };
        }
        return { kind: error.kind === 'retryable' ? 'retryable' : 'failed', message: error.message };
      }
      const next: Record<string, string> = { ...credentials, accessToken: tokens.accessToken };
      // Google (and LinkedIn) may not send a new refresh token: the old one stays good.
      if (tokens.refreshToken) next.refreshToken = tokens.refreshToken;
      if (tokens.expiresAt) next.expiresAt = tokens.expiresAt.toISOString();
      else delete next.expiresAt;
      if (tokens.scope) next.scope = tokens.scope;
      await tx
        .update(integrations)
        .set({
          credentialsSealed: this.box.seal(JSON.stringify(next)),
          tokenExpiresAt: tokens.expiresAt ?? null,
          updatedAt: this.clock.now(),
        })
        .where(eq(integrations.id, current.id));
      return { kind: 'ok', credentials: next };
    });
    switch (outcome.kind) {
      case 'ok':
        return outcome.credentials;
      case 'reauth':
        throw reauthRequired(outcome.row ?? row, outcome.message);
      case 'retryable':
        throw oauthUnavailable(outcome.message);
      case 'missing':
        throw unprocessable('INTEGRATION_MISSING', outcome.message);
      default:
        throw new AppError(502, 'OAUTH_REFRESH_FAILED', outcome.message);
    }
  }

  /**
   * The integration needs the user to connect again: status `error`, `integration.error` with
   * REAUTH_REQUIRED and a notification with a reconnect link, once (nothing again while it stays so;
   * the conditional update decides, so two instances cannot both do it). In the caller's transaction.
   * True when this call made the change.
   */
  async requireReauth(tx: Db, row: Row, message: string): Promise<boolean> {
    const now = this.clock.now();
    const changed = await tx
      .update(integrations)
      .set({ status: 'error', lastError: { code: REAUTH_REQUIRED, message, at: now.toISOString() }, errorAt: now, updatedAt: now })
      .where(
        and(
          eq(integrations.id, row.id),
          eq(integrations.orgId, row.orgId),
          or(ne(integrations.status, 'error'), sql`coalesce(${integrations.lastError}->>'code', '') <> ${REAUTH_REQUIRED}`),
        ),
      )
      .returning({ id: integrations.id });
    if (changed.length === 0) return false;
    await this.events.record(tx, {
      orgId: row.orgId,
      type: 'integration.error',
      payload: { integrationId: row.id, provider: row.provider, code: REAUTH_REQUIRED, message },
    });
    const label = PROVIDER_SPECS[row.provider as OAuthProvider]?.label ?? row.provider;
    await this.notifications.notify(
      {
        orgId: row.orgId,
        projectId: row.projectId,
        kind: 'integration.error',
        link: `/api/v1/orgs/${row.orgId}/integrations/${row.id}`,
        title: `Reconnect ${row.name}: ${label} needs you to sign in again`,
        body: `${message}. Open the integrations page and choose Reconnect on ${row.name}; its scheduled posts keep their place and publish once it is connected.`,
      },
      tx,
    );
    return true;
  }

  /** Unused authorizations past their 10 minutes (they are refused anyway); start() also clears them. */
  async purgeStates(): Promise<number> {
    const gone = await this.db.delete(oauthStates).where(lte(oauthStates.expiresAt, this.clock.now())).returning({ h: oauthStates.stateHash });
    return gone.length;
  }
}
