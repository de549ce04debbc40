import * as oauth from 'oauth4webapi';
import type { Clock } from '../../platform/clock.ts';
import type { Config, OAuthProvider } from '../../config.ts';

/**
 * OAuth 2.0 authorization code with PKCE (S256) against LinkedIn, X and Google, through
 * oauth4webapi (panva): the library sends the token requests, authenticates the client, checks the
 * authorization response's `state` and the token responses (and the OpenID id_token's issuer,
 * audience and times, when one comes). This file only knows each provider's endpoints, scopes and
 * quirks; the connection flow and the storage are in service.ts.
 */
export const OAUTH_PROVIDERS = ['linkedin', 'x', 'google'] as const satisfies readonly OAuthProvider[];
export type { OAuthProvider };

interface ProviderSpec {
  label: string;
  /** The issuer identifier id_tokens carry (LinkedIn's and Google's OpenID Connect). */
  issuer: string;
  scopes: string[];
  /** How the token endpoint authenticates the client. */
  clientAuth: 'basic' | 'post';
  /** More authorization request parameters. */
  extra?: Record<string, string>;
}

export const PROVIDER_SPECS: Record<OAuthProvider, ProviderSpec> = {
  // "Sign In with LinkedIn using OpenID Connect" + "Share on LinkedIn"; client_secret_post.
  linkedin: { label: 'LinkedIn', issuer: 'https://www.linkedin.com/oauth', scopes: ['openid', 'profile', 'w_member_social'], clientAuth: 'post' },
  // X OAuth 2.0: confidential clients authenticate with HTTP Basic; offline.access gives a refresh token.
  x: { label: 'X', issuer: 'https://x.com', scopes: ['tweet.read', 'tweet.write', 'users.read', 'offline.access'], clientAuth: 'basic' },
  // Google: a refresh token only with access_type=offline; prompt=consent asks again on a reconnect.
  google: {
    label: 'Google',
    issuer: 'https://accounts.google.com',
    clientAuth: 'basic',
    scopes: ['openid', 'email', 'https://www.googleapis.com/auth/analytics.readonly', 'https://www.googleapis.com/auth/webmasters.readonly'],
    extra: { access_type: 'offline', prompt: 'consent' },
  },
};

export function isOAuthProvider(value: string): value is OAuthProvider {
  return (OAUTH_PROVIDERS as readonly string[]).includes(value);
}

/** What a token endpoint gave: the access token, and what else came with it. */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** When the access token expires (from expires_in), if the provider said. */
  expiresAt?: Date;
  scope?: string;
  /** The validated id_token claims (LinkedIn, Google), if one came. */
  idToken?: { sub: string; email?: string; name?: string };
}

/**
 * Why a token request failed. `reauth`: the grant is dead (invalid_grant, or the endpoint refused us
 * with 401): only the user can fix it by connecting again. `retryable`: the provider was unreachable,
 * slow or failed (5xx, 429): try again later. Otherwise (a 4xx about the request): neither.
 */
export class TokenError extends Error {
  readonly kind: 'reauth' | 'retryable' | 'rejected';
  readonly oauthError: string | undefined;
  readonly status: number | undefined;

  constructor(kind: TokenError['kind'], message: string, oauthError?: string, status?: number) {
    super(message);
    this.kind = kind;
    this.oauthError = oauthError;
    this.status = status;
  }
}

const TOKEN_TIMEOUT_MS = 10_000;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export class OAuthClients {
  private readonly config: Config;
  private readonly clock: Clock;

  constructor(config: Config, clock: Clock) {
    this.config = config;
    this.clock = clock;
  }

  /** The provider has a client id (otherwise 422 INTEGRATION_NOT_CONFIGURED). */
  configured(provider: OAuthProvider): boolean {
    return Boolean(this.config.oauth[provider].clientId);
  }

  /** `PUBLIC_URL/api/v1/oauth/callback`: what to register with each provider. */
  get redirectUri(): string {
    return `${this.config.publicUrl}/api/v1/oauth/callback`;
  }

  private server(provider: OAuthProvider): oauth.AuthorizationServer {
    const c = this.config.oauth[provider];
    return { issuer: PROVIDER_SPECS[provider].issuer, authorization_endpoint: c.authUrl, token_endpoint: c.tokenUrl };
  }

  private client(provider: OAuthProvider): oauth.Client {
    // id_token times are judged by our clock (an injected one in tests), not the process's.
    const skew = Math.round((this.clock.now().getTime() - Date.now()) / 1000);
    return { client_id: this.config.oauth[provider].clientId!, [oauth.clockSkew]: skew };
  }

  private clientAuth(provider: OAuthProvider): oauth.ClientAuth {
    const secret = this.config.oauth[provider].clientSecret;
    if (!secret) return oauth.None();
    return PROVIDER_SPECS[provider].clientAuth === 'basic' ? oauth.ClientSecretBasic(secret) : oauth.ClientSecretPost(secret);
  }

  /**
   * Plain http token endpoints only on loopback or under NODE_ENV=test (the stand-ins); an https
   * provider never needs it, and a production deployment never talks OAuth over http elsewhere.
   */
  private requestOptions(provider: OAuthProvider): oauth.TokenEndpointRequestOptions {
    const url = new URL(this.config.oauth[provider].tokenUrl);
    const insecure = url.protocol === 'http:' && (LOOPBACK.has(url.hostname) || this.config.nodeEnv === 'test');
    return { signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS), ...(insecure ? { [oauth.allowInsecureRequests]: true } : {}) };
  }

  /** A fresh state and PKCE verifier, and the challenge derived from it. */
  async newAuthorization(): Promise<{ state: string; verifier: string; challenge: string }> {
    const verifier = oauth.generateRandomCodeVerifier();
    return { state: oauth.generateRandomState(), verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
  }

  /** Where the browser goes to consent. */
  authorizationUrl(provider: OAuthProvider, input: { state: string; challenge: string }): string {
    const spec = PROVIDER_SPECS[provider];
    const url = new URL(this.config.oauth[provider].authUrl);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: this.config.oauth[provider].clientId!,
      redirect_uri: this.redirectUri,
      scope: spec.scopes.join(' '),
      state: input.state,
      code_challenge: input.challenge,
      code_challenge_method: 'S256',
      ...spec.extra,
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.toString();
  }

  /**
   * The authorization response's parameters, checked against the state we sent: the code, or the
   * provider's error (`access_denied` when the user said no) as an AuthorizationResponseError.
   */
  checkCallback(provider: OAuthProvider, params: URLSearchParams, state: string): URLSearchParams {
    return oauth.validateAuthResponse(this.server(provider), this.client(provider), params, state);
  }

  /** Exchanges the authorization code (with the PKCE verifier) for tokens. */
  async exchange(provider: OAuthProvider, checked: URLSearchParams, verifier: string): Promise<TokenSet> {
    const as = this.server(provider);
    const client = this.client(provider);
    return this.tokenCall(provider, async () => {
      const res = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        this.clientAuth(provider),
        checked,
        this.redirectUri,
        verifier,
        this.requestOptions(provider),
      );
      return oauth.processAuthorizationCodeResponse(as, client, res);
    });
  }

  /** A refresh-token grant. */
  async refresh(provider: OAuthProvider, refreshToken: string): Promise<TokenSet> {
    const as = this.server(provider);
    const client = this.client(provider);
    return this.tokenCall(provider, async () => {
      const res = await oauth.refreshTokenGrantRequest(as, client, this.clientAuth(provider), refreshToken, this.requestOptions(provider));
      if (res.status >= 500 || res.status === 429) {
        throw new TokenError('retryable', `${PROVIDER_SPECS[provider].label}'s token endpoint failed (HTTP ${res.status})`, undefined, res.status);
      }
      return oauth.processRefreshTokenResponse(as, client, res);
    });
  }

  private async tokenCall(provider: OAuthProvider, call: () => Promise<oauth.TokenEndpointResponse>): Promise<TokenSet> {
    const label = PROVIDER_SPECS[provider].label;
    let response: oauth.TokenEndpointResponse;
    try {
      response = await call();
    } catch (error) {
      throw classify(label, error);
    }
    const claims = oauth.getValidatedIdTokenClaims(response);
    const out: TokenSet = { accessToken: response.access_token };
    if (response.refresh_token) out.refreshToken = response.refresh_token;
    if (typeof response.expires_in === 'number' && response.expires_in > 0) out.expiresAt = new Date(this.clock.now().getTime() + response.expires_in * 1000);
    if (response.scope) out.scope = response.scope;
    if (claims) {
      out.idToken = { sub: claims.sub };
      if (typeof claims.email === 'string') out.idToken.email = claims.email;
      if (typeof claims.name === 'string') out.idToken.name = claims.name;
    }
    return out;
  }
}

function classify(label: string, error: unknown): TokenError {
  if (error instanceof TokenError) return error;
  if (error instanceof oauth.ResponseBodyError) {
    const detail = error.error_description ? `: ${error.error_description}` : '';
    if (error.error === 'invalid_grant' || error.status === 401) {
      return new TokenError('reauth', `${label} refused the authorization (${error.error}${detail}); connect the account again`, error.error, error.status);
    }
    if (error.status >= 500 || error.status === 429)
      return new TokenError('retryable', `${label}'s token endpoint failed (HTTP ${error.status}, ${error.error})`, error.error, error.status);
    return new TokenError(
      'rejected',
      `${label}'s token endpoint refused the request (HTTP ${error.status}, ${error.error}${detail})`,
      error.error,
      error.status,
    );
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    if (error.status === 401) return new TokenError('reauth', `${label} refused the client or grant (HTTP 401); connect the account again`, undefined, 401);
    return new TokenError(error.status >= 500 ? 'retryable' : 'rejected', `${label}'s token endpoint answered HTTP ${error.status}`, undefined, error.status);
  }
  if (error instanceof oauth.OperationProcessingError) {
    // A non-JSON or non-conforming answer: an error page from a proxy, an outage.
    const status = (error.cause as { status?: unknown } | undefined)?.status;
    const n = typeof status === 'number' ? status : undefined;
    if (n === 401) return new TokenError('reauth', `${label} refused the client or grant (HTTP 401); connect the account again`, undefined, 401);
    return new TokenError(
      n !== undefined && n < 500 && n !== 429 ? 'rejected' : 'retryable',
      `${label}'s token endpoint gave an unusable answer: ${error.message}`,
      undefined,
      n,
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  // fetch failed, timed out or was aborted: the provider is unreachable for now.
  return new TokenError('retryable', `${label}'s token endpoint is unreachable: ${message}`);
}
