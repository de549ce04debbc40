import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { LoopbackServer } from './loopback-server.ts';

/**
 * The authorization servers of LinkedIn, X and Google on loopback (RFC 6749 authorization code with
 * RFC 7636 PKCE S256), each under its path prefix: `/linkedin`, `/x`, `/google`.
 *
 *   GET  /<p>/authorize  checks response_type=code, client_id, redirect_uri, state, code_challenge
 *                        (S256) and consents at once: 302 to `redirect_uri?code=…&state=…`
 *                        (`deny = true`: `?error=access_denied&state=…`).
 *   POST /<p>/token      application/x-www-form-urlencoded, `authorization_code` (single-use code,
 *                        same redirect_uri, PKCE verifier) or `refresh_token`. Client authentication
 *                        as each provider does it: X HTTP Basic only, LinkedIn client_secret_post
 *                        only, Google either. Answers the providers' JSON token response, or
 *                        `{ error, error_description }` with 400 (401 for invalid_client).
 *
 * Provider quirks played here: X rotates refresh tokens (the old one dies when used); LinkedIn answers
 * a refresh with the same refresh token and `refresh_token_expires_in`; Google sends a refresh token
 * only on a user's first consent or when `prompt=consent` was asked (never on refresh), and an
 * `id_token` when `openid` was asked for, as LinkedIn does (on the code exchange). Access tokens start with `ok-` so test/social-stand-in.ts accepts them; it answers 401
 * once `isValid(token)` is false (expired by this stand-in's clock `now`, or by `expire(token)`).
 */
export const OAUTH_PROVIDERS = ['linkedin', 'x', 'google'] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

/** The issuers our service expects in id_tokens (the real providers' issuer identifiers). */
export const ISSUERS: Record<OAuthProviderName, string> = {
  linkedin: 'https://www.linkedin.com/oauth',
  x: 'https://x.com',
  google: 'https://accounts.google.com',
};

export interface TokenRequest {
  provider: OAuthProviderName;
  grantType: string;
  /** The form fields as received (client_secret included when sent in the body). */
  params: Record<string, string>;
  clientAuth: 'basic' | 'post' | 'none';
  /** The HTTP status answered. */
  status: number;
  /** The answer's `error`, when it failed. */
  error?: string;
  /** What a successful answer issued. */
  issued?: { accessToken: string; refreshToken?: string };
  at: number;
}

export interface IssuedToken {
  provider: OAuthProviderName;
  /** The account the token acts for (stand-in user id; LinkedIn's OpenID `sub`). */
  subject: string;
  scope: string;
  /** Milliseconds on the stand-in's clock. */
  expiresAt: number;
  grantType: 'authorization_code' | 'refresh_token';
}

interface PendingCode {
  provider: OAuthProviderName;
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string;
  subject: string;
  expiresAt: number;
  /** The authorization request asked for `prompt=consent`. */
  promptConsent: boolean;
}

interface RefreshGrant {
  provider: OAuthProviderName;
  clientId: string;
  subject: string;
  scope: string;
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

function b64url(buffer: Buffer): string {
  return buffer.toString('base64url');
}

function token(prefix: string): string {
  return `${prefix}-${randomBytes(18).toString('base64url')}`;
}

export class OAuthStandIn extends LoopbackServer {
  /** The user says no: /authorize redirects with `error=access_denied`. */
  deny = false;
  /** Lifetime of issued access tokens, seconds. */
  expiresIn = 3600;
  /** How refresh grants fail: `invalid_grant` (400), 500, or not at all. */
  failRefresh: 'invalid_grant' | 500 | null = null;
  /** Delay before a refresh is answered (to widen race windows). */
  refreshDelayMs = 0;
  /** The stand-in's clock (ms): token expiry is judged by it. Point it at the app's clock in tests that move time. */
  now: () => number = () => Date.now();
  /**
   * Google gives a refresh token on a user's first consent, and again when the authorization request
   * asked for `prompt=consent` (as Google does). false: only the first time, whatever the prompt.
   */
  googleRefreshOnPromptConsent = true;
  /** The user who consents, per provider (LinkedIn's OpenID `sub`, …). */
  subjects: Record<OAuthProviderName, string> = { linkedin: 'li-member-1', x: 'x-user-1', google: 'google-user-1' };
  /** Client ids and secrets registered with each provider (what env() hands to the service). */
  readonly clients: Record<OAuthProviderName, { clientId: string; clientSecret: string }> = {
    linkedin: { clientId: 'li-client-id', clientSecret: 'li-client-secret' },
    x: { clientId: 'x-client-id', clientSecret: 'x-client-secret' },
    google: { clientId: 'google-client-id.apps.googleusercontent.com', clientSecret: 'google-client-secret' },
  };
  /** Every token endpoint request, in order. */
  readonly tokenRequests: TokenRequest[] = [];
  /** Every authorize request's query, in order. */
  readonly authorizeRequests: { provider: OAuthProviderName; query: Record<string, string> }[] = [];

  private readonly codes = new Map<string, PendingCode>();
  private readonly accessTokens = new Map<string, IssuedToken>();
  private readonly refreshTokens = new Map<string, RefreshGrant>();
  /** Google: users who consented already get no refresh token again. */
  private readonly consented = new Set<string>();
  private readonly signingKey: KeyObject = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

  /** LINKEDIN_/X_/GOOGLE_ CLIENT_ID, CLIENT_SECRET, AUTH_URL, TOKEN_URL pointing here. */
  env(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const p of OAUTH_PROVIDERS) {
      const prefix = p.toUpperCase();
      out[`${prefix}_CLIENT_ID`] = this.clients[p].clientId;
      out[`${prefix}_CLIENT_SECRET`] = this.clients[p].clientSecret;
      out[`${prefix}_AUTH_URL`] = `${this.url}/${p}/authorize`;
      out[`${prefix}_TOKEN_URL`] = `${this.url}/${p}/token`;
    }
    return out;
  }

  /** Issued by this stand-in, not expired (by `now`) and not expired by hand. */
  isValid(accessToken: string): boolean {
    const issued = this.accessTokens.get(accessToken);
    return issued !== undefined && issued.expiresAt > this.now();
  }

  /** Issued by this stand-in (valid or not). */
  isIssued(accessToken: string): boolean {
    return this.accessTokens.has(accessToken);
  }

  /** What an access token stands for, or undefined when this stand-in did not issue it. */
  tokenInfo(accessToken: string): IssuedToken | undefined {
    const issued = this.accessTokens.get(accessToken);
    return issued ? { ...issued } : undefined;
  }

  /** The account an access token acts for (the social stand-in's /v2/userinfo reads it). */
  subjectOf(accessToken: string): string | undefined {
    return this.accessTokens.get(accessToken)?.subject;
  }

  /** Expires an access token now (the provider's API answers 401 to it from here on). */
  expire(accessToken: string): void {
    const issued = this.accessTokens.get(accessToken);
    if (issued) issued.expiresAt = this.now() - 1;
  }

  /** Revokes a refresh token: the next refresh with it gets invalid_grant. */
  revokeRefresh(refreshToken: string): void {
    this.refreshTokens.delete(refreshToken);
  }

  /** Google: forget that users consented, so the next consent gives a refresh token again. */
  forgetConsent(): void {
    this.consented.clear();
  }

  /**
   * The refresh-token grants made with `refreshToken` or with any refresh token issued from it later
   * (X rotates them): one connection's refreshes, whatever else is refreshed meanwhile.
   */
  refreshesOf(refreshToken: string): TokenRequest[] {
    const chain = new Set([refreshToken]);
    const out: TokenRequest[] = [];
    for (const r of this.tokenRequests) {
      if (r.grantType !== 'refresh_token' || !chain.has(r.params.refresh_token ?? '')) continue;
      out.push(r);
      if (r.issued?.refreshToken) chain.add(r.issued.refreshToken);
    }
    return out;
  }

  /** Successful and failed refresh-token grants, for one provider or all. */
  refreshes(provider?: OAuthProviderName): TokenRequest[] {
    return this.tokenRequests.filter((r) => r.grantType === 'refresh_token' && (!provider || r.provider === provider));
  }

  /** The newest access token issued for a provider. */
  lastAccessToken(provider: OAuthProviderName): string | undefined {
    let last: string | undefined;
    for (const [value, issued] of this.accessTokens) if (issued.provider === provider) last = value;
    return last;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const [, provider, action] = url.pathname.split('/') as [string, OAuthProviderName, string];
    if (!(OAUTH_PROVIDERS as readonly string[]).includes(provider)) return this.json(res, 404, { error: 'not_found' });
    if (req.method === 'GET' && action === 'authorize') return this.authorize(res, provider, url.searchParams);
    if (req.method === 'POST' && action === 'token') return this.token(req, res, provider, body);
    this.json(res, 404, { error: 'not_found' });
  }

  private authorize(res: ServerResponse, provider: OAuthProviderName, q: URLSearchParams): void {
    this.authorizeRequests.push({ provider, query: Object.fromEntries(q) });
    const client = this.clients[provider];
    const redirectUri = q.get('redirect_uri');
    // Without a known client and a redirect URI the provider cannot redirect: it shows an error page.
    if (q.get('client_id') !== client.clientId) return this.page(res, 400, 'invalid client_id');
    let target: URL;
    try {
      target = new URL(redirectUri ?? '');
    } catch {
      return this.page(res, 400, 'invalid redirect_uri');
    }
    const state = q.get('state');
    const back = (params: Record<string, string>) => {
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
      if (state) target.searchParams.set('state', state);
      res.writeHead(302, { location: target.toString() });
      res.end();
    };
    if (q.get('response_type') !== 'code') return back({ error: 'unsupported_response_type' });
    if (!state) return back({ error: 'invalid_request', error_description: 'state is required' });
    const challenge = q.get('code_challenge');
    if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) return back({ error: 'invalid_request', error_description: 'code_challenge is required (S256)' });
    if (q.get('code_challenge_method') !== 'S256') return back({ error: 'invalid_request', error_description: 'code_challenge_method must be S256' });
    if (this.deny) return back({ error: 'access_denied', error_description: 'The user denied the request' });
    const code = token('code');
    this.codes.set(code, {
      provider,
      clientId: client.clientId,
      redirectUri: redirectUri!,
      challenge,
      scope: q.get('scope') ?? '',
      subject: this.subjects[provider],
      expiresAt: this.now() + 10 * 60_000,
      promptConsent: (q.get('prompt') ?? '').split(' ').includes('consent'),
    });
    back({ code });
  }

  private async token(req: IncomingMessage, res: ServerResponse, provider: OAuthProviderName, body: string): Promise<void> {
    const params = Object.fromEntries(new URLSearchParams(body));
    const grantType = params.grant_type ?? '';
    const entry: TokenRequest = { provider, grantType, params, clientAuth: 'none', status: 200, at: Date.now() };
    this.tokenRequests.push(entry);
    const answer = (status: number, json: Record<string, unknown>) => {
      entry.status = status;
      if (typeof json.error === 'string') entry.error = json.error;
      if (typeof json.access_token === 'string')
        entry.issued = { accessToken: json.access_token, ...(typeof json.refresh_token === 'string' ? { refreshToken: json.refresh_token } : {}) };
      this.json(res, status, json);
    };
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return answer(400, { error: 'invalid_request', error_description: 'the body must be application/x-www-form-urlencoded' });
    }

    // Client authentication, as each provider does it.
    const client = this.clients[provider];
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    let id: string | undefined;
    let secret: string | undefined;
    if (basic) {
      const decoded = Buffer.from(basic, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
      id = unform(decoded.slice(0, colon));
      secret = unform(decoded.slice(colon + 1));
      entry.clientAuth = 'basic';
    } else if (params.client_secret !== undefined) {
      id = params.client_id;
      secret = params.client_secret;
      entry.clientAuth = 'post';
    }
    const allowed = provider === 'x' ? ['basic'] : provider === 'linkedin' ? ['post'] : ['basic', 'post'];
    if (!allowed.includes(entry.clientAuth) || id !== client.clientId || secret !== client.clientSecret) {
      return answer(401, { error: 'invalid_client', error_description: `client authentication failed (${provider} expects ${allowed.join(' or ')})` });
    }

    if (grantType === 'authorization_code') {
      const code = params.code ? this.codes.get(params.code) : undefined;
      if (params.code) this.codes.delete(params.code); // single-use, whatever happens next
      if (!code || code.provider !== provider || code.expiresAt <= this.now())
        return answer(400, { error: 'invalid_grant', error_description: 'authorization code is invalid, expired or already used' });
      if (params.redirect_uri !== code.redirectUri)
        return answer(400, { error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request' });
      const verifier = params.code_verifier ?? '';
      if (!VERIFIER.test(verifier) || b64url(createHash('sha256').update(verifier).digest()) !== code.challenge) {
        return answer(400, { error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge' });
      }
      const user = `${provider}:${code.subject}`;
      const giveRefresh = provider !== 'google' || !this.consented.has(user) || (code.promptConsent && this.googleRefreshOnPromptConsent);
      if (provider === 'google') this.consented.add(user);
      return answer(
        200,
        this.issue(
          provider,
          { provider, clientId: client.clientId, subject: code.subject, scope: code.scope },
          'authorization_code',
          giveRefresh ? undefined : null,
        ),
      );
    }

    if (grantType === 'refresh_token') {
      if (this.refreshDelayMs) await new Promise((r) => setTimeout(r, this.refreshDelayMs));
      if (this.failRefresh === 500) return answer(500, { error: 'server_error', error_description: 'temporarily unavailable' });
      const grant = params.refresh_token ? this.refreshTokens.get(params.refresh_token) : undefined;
      if (this.failRefresh === 'invalid_grant' || !grant || grant.provider !== provider) {
        return answer(400, {
          error: 'invalid_grant',
          error_description: provider === 'google' ? 'Token has been expired or revoked.' : 'The refresh token is invalid or revoked',
        });
      }
      let keep: string | null | undefined;
      if (provider === 'x')
        this.refreshTokens.delete(params.refresh_token!); // X rotates: a new one, the old one dies
      else if (provider === 'linkedin')
        keep = params.refresh_token; // LinkedIn: the same one back
      else keep = null; // Google: none
      return answer(200, this.issue(provider, grant, 'refresh_token', keep));
    }

    answer(400, { error: 'unsupported_grant_type', error_description: `grant_type ${grantType || '(missing)'} is not supported` });
  }

  /** refresh: undefined → a new refresh token, a string → that one again, null → none. */
  private issue(
    provider: OAuthProviderName,
    grant: RefreshGrant,
    grantType: IssuedToken['grantType'],
    refresh: string | null | undefined,
  ): Record<string, unknown> {
    const accessToken = token(`ok-${provider}-at`);
    this.accessTokens.set(accessToken, { provider, subject: grant.subject, scope: grant.scope, expiresAt: this.now() + this.expiresIn * 1000, grantType });
    const out: Record<string, unknown> = { access_token: accessToken, token_type: 'Bearer', expires_in: this.expiresIn };
    if (refresh !== null) {
      const refreshToken = refresh ?? token(`${provider}-rt`);
      this.refreshTokens.set(refreshToken, grant);
      out.refresh_token = refreshToken;
      if (provider === 'linkedin') out.refresh_token_expires_in = 31_536_000;
    }
    // LinkedIn answers scopes comma-separated; X and Google space-separated.
    out.scope = provider === 'linkedin' ? grant.scope.split(' ').filter(Boolean).join(',') : grant.scope;
    if ((provider === 'google' || (provider === 'linkedin' && grantType === 'authorization_code')) && grant.scope.split(' ').includes('openid')) {
      out.id_token = this.idToken(provider, grant);
    }
    return out;
  }

  /** An OpenID Connect id_token (RS256) with the claims a relying party checks. */
  private idToken(provider: OAuthProviderName, grant: RefreshGrant): string {
    const iat = Math.floor(this.now() / 1000);
    const header = { alg: 'RS256', typ: 'JWT', kid: 'stand-in' };
    const claims: Record<string, unknown> = { iss: ISSUERS[provider], aud: grant.clientId, sub: grant.subject, iat, exp: iat + 3600 };
    if (provider === 'google') Object.assign(claims, { email: `${grant.subject}@example.com`, email_verified: true, azp: grant.clientId });
    const input = `${b64url(Buffer.from(JSON.stringify(header)))}.${b64url(Buffer.from(JSON.stringify(claims)))}`;
    const signature = createSign('RSA-SHA256').update(input).sign(this.signingKey);
    return `${input}.${b64url(signature)}`;
  }

  private json(res: ServerResponse, status: number, json: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' });
    res.end(JSON.stringify(json));
  }

  private page(res: ServerResponse, status: number, message: string): void {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>Error</title><p>${message}</p>`);
  }
}

/**
 * The browser's part of the flow: GET the authorization URL without following redirects and return
 * the Location it answers (the callback URL with `code` and `state`, or `error`). Throws when the
 * provider answers anything but a redirect.
 */
export function follow(authorizationUrl: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(authorizationUrl, { method: 'GET' }, (res) => {
      res.resume();
      const location = res.headers.location;
      if (res.statusCode !== 302 || !location) {
        reject(new Error(`authorization endpoint answered HTTP ${res.statusCode} without a redirect`));
        return;
      }
      resolve(location);
    });
    req.on('error', reject);
    req.end();
  });
}
