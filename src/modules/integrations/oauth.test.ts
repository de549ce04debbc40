import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildApp } from '../../app.ts';
import { openDatabase, type Database } from '../../platform/db.ts';
import type { App } from '../../platform/http/types.ts';
import { buildTestApp, testConfig, type Credentials, type TestApp } from '../../../test/harness.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { follow, OAuthStandIn, type OAuthProviderName } from '../../../test/oauth-provider.ts';
import { startSocialStandIn, type StandIn } from '../../../test/social-stand-in.ts';
import { notifications } from '../notifications/tables.ts';
import { integrations, oauthStates } from './tables.ts';

const PUBLIC_URL = 'https://app.example.com';
const HOUR = 3_600_000;

/** The app's and the providers' clock: tests move time instead of waiting. */
const clock = { ms: Date.now(), now: () => new Date(clock.ms) };
const advance = (ms: number) => {
  clock.ms += ms;
};

let t: TestApp;
let provider: OAuthStandIn;
let api: StandIn;
let base: string;
/** API keys: a session's access token would expire as the clock moves on by hours. */
const ownerA = (): Credentials => ({ apiKey: t.orgA.apiKey });
const ownerB = (): Credentials => ({ apiKey: t.orgB.apiKey });

beforeAll(async () => {
  provider = await new OAuthStandIn().start();
  provider.now = () => clock.ms;
  api = await startSocialStandIn({ oauth: provider });
  t = await buildTestApp({
    clock,
    env: {
      ...provider.env(),
      PUBLIC_URL,
      LINKEDIN_API_URL: api.url,
      X_API_URL: api.url,
      PUBLISH_RETRY_DELAYS_S: '1,1,1',
      PUBLISHER_POLL_MS: '50',
    },
  });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
  await api.close();
  await provider.stop();
});

interface Connected {
  id: string;
  authorizationUrl: URL;
  callback: URL;
  location: URL;
  cookies: Cookies;
}
type Cookies = Record<string, string>;

async function start(p: OAuthProviderName, body: Record<string, unknown> = {}, auth = ownerA(), orgBase = base) {
  return t.call({ method: 'POST', url: `${orgBase}/integrations/oauth/${p}/start`, auth, payload: body });
}

/** The cookies a response set, as the browser that received it would send them back. */
const cookiesOf = (res: { cookies: { name: string; value: string }[] }): Cookies => Object.fromEntries(res.cookies.map((c) => [c.name, c.value]));

/** The browser arriving at the callback from the provider, with the cookies it holds. */
const callBack = (callback: URL, cookies: Cookies = {}, headers: Record<string, string> = {}) =>
  t.call({ method: 'GET', url: callback.pathname + callback.search, cookies, headers });

/** The browser's round trip: start, the provider's consent (auto), the callback with the start's cookie. */
async function connect(p: OAuthProviderName, body: Record<string, unknown> = {}): Promise<Connected> {
  const started = await start(p, body);
  expect(started.statusCode, started.body).toBe(200);
  const cookies = cookiesOf(started);
  const authorizationUrl = new URL(started.json().authorizationUrl);
  const callback = new URL(await follow(authorizationUrl.toString()));
  const res = await callBack(callback, cookies);
  expect(res.statusCode, res.body).toBe(302);
  const location = new URL(res.headers.location as string);
  const id = location.searchParams.get('connected');
  expect(id, location.toString()).toMatch(/^int_/);
  return { id: id!, authorizationUrl, callback, location, cookies };
}

const rowOf = async (id: string) => (await t.app.services.integrations.row({ orgId: t.orgA.orgId, projectId: null }, id))!;
const get = async (id: string) => (await t.call({ method: 'GET', url: `${base}/integrations/${id}`, auth: ownerA() })).json();
const tokensOf = async (id: string) => t.app.services.integrations.credentialsOf(await rowOf(id));

async function post(payload: Record<string, unknown>) {
  const created = await t.call({ method: 'POST', url: `${base}/content`, auth: ownerA(), payload });
  expect(created.statusCode, created.body).toBe(201);
  const approved = await t.call({ method: 'POST', url: `${base}/content/${created.json().id}/approve`, auth: ownerA(), payload: {} });
  expect(approved.statusCode, approved.body).toBe(200);
  return approved.json() as { id: string; status: string };
}
const settled = (id: string) =>
  eventually(async () => {
    const p = (await t.call({ method: 'GET', url: `${base}/content/${id}`, auth: ownerA() })).json();
    return ['PUBLISHED', 'FAILED'].includes(p.status) ? p : undefined;
  }, 15_000);

describe('connecting through the provider', () => {
  it('X: the authorization URL carries the client, S256 challenge, state and scopes; the callback stores, emits and redirects', async () => {
    const before = (await eventsOf(t, t.orgA.orgId, 'integration.connected')).length;
    const c = await connect('x', { returnTo: `${PUBLIC_URL}/orgs/${t.orgA.orgId}/settings/integrations?tab=social` });
    const q = c.authorizationUrl.searchParams;
    expect(`${c.authorizationUrl.origin}${c.authorizationUrl.pathname}`).toBe(`${provider.url}/x/authorize`);
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(provider.clients.x.clientId);
    expect(q.get('redirect_uri')).toBe(`${PUBLIC_URL}/api/v1/oauth/callback`);
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')!.length).toBeGreaterThanOrEqual(32);
    expect(q.get('scope')).toBe('tweet.read tweet.write users.read offline.access');
    // Back where the user started, with the new integration.
    expect(`${c.location.origin}${c.location.pathname}`).toBe(`${PUBLIC_URL}/orgs/${t.orgA.orgId}/settings/integrations`);
    expect(c.location.searchParams.get('tab')).toBe('social');
    // The code was exchanged with HTTP Basic client authentication and the PKCE verifier.
    const exchange = provider.tokenRequests.filter((r) => r.provider === 'x' && r.grantType === 'authorization_code').at(-1)!;
    expect(exchange).toMatchObject({ status: 200, clientAuth: 'basic' });
    expect(exchange.params.code_verifier).toMatch(/^[A-Za-z0-9_~.-]{43,128}$/);
    expect(exchange.params.client_secret).toBeUndefined();

    const integration = await get(c.id);
    expect(integration).toMatchObject({ id: c.id, provider: 'x', name: '@x_user_1', status: 'connected', authType: 'oauth', config: {}, lastError: null });
    expect(Date.parse(integration.tokenExpiresAt)).toBe(clock.ms + 3600_000);
    const connected = await eventsOf(t, t.orgA.orgId, 'integration.connected');
    expect(connected.length).toBe(before + 1);
    expect(connected.at(-1)!.payload).toEqual({ integrationId: c.id, provider: 'x', name: '@x_user_1' });
  });

  it('LinkedIn: client_secret_post, the member URN from OpenID userinfo, and a post authored by it', async () => {
    const c = await connect('linkedin', { projectId: t.orgA.projectId });
    expect(c.authorizationUrl.searchParams.get('scope')).toBe('openid profile w_member_social');
    expect(provider.tokenRequests.filter((r) => r.provider === 'linkedin').at(-1)).toMatchObject({
      grantType: 'authorization_code',
      clientAuth: 'post',
      status: 200,
    });
    // No returnTo: the panel's integrations page.
    expect(c.location.toString()).toBe(`${PUBLIC_URL}/orgs/${t.orgA.orgId}/settings/integrations?connected=${c.id}`);
    const integration = await get(c.id);
    expect(integration).toMatchObject({ provider: 'linkedin', name: 'Stand-in Member', projectId: t.orgA.projectId, authType: 'oauth' });
    const connected = (await eventsOf(t, t.orgA.orgId, 'integration.connected')).at(-1)!;
    expect(connected.payload).toEqual({ integrationId: c.id, provider: 'linkedin', name: 'Stand-in Member', projectId: t.orgA.projectId });

    const token = provider.lastAccessToken('linkedin')!;
    const p = await post({ platform: 'LINKEDIN', body: 'Connected with OAuth', integrationId: c.id, projectId: t.orgA.projectId });
    expect((await settled(p.id)).status).toBe('PUBLISHED');
    const [call] = api.postCalls(token);
    expect(JSON.parse(call!.body.toString()).author).toBe('urn:li:person:li-member-1');
  });

  it('Google: offline access with consent, analytics scopes; named by the account e-mail', async () => {
    const c = await connect('google', { name: 'Marketing analytics' });
    const q = c.authorizationUrl.searchParams;
    expect(q.get('scope')).toBe('openid email https://www.googleapis.com/auth/analytics.readonly https://www.googleapis.com/auth/webmasters.readonly');
    expect(q.get('access_type')).toBe('offline');
    expect(q.get('prompt')).toBe('consent');
    expect(await get(c.id)).toMatchObject({ provider: 'google', name: 'Marketing analytics', authType: 'oauth', status: 'connected' });
    expect((await tokensOf(c.id)).refreshToken).toMatch(/^google-rt-/);
    const unnamed = await connect('google');
    expect((await get(unnamed.id)).name).toBe('google-user-1@example.com');
  });

  it('tokens are sealed in the database and never in an API answer', async () => {
    const c = await connect('x');
    const creds = await tokensOf(c.id);
    expect(creds.accessToken).toMatch(/^ok-x-at-/);
    expect(creds.refreshToken).toMatch(/^x-rt-/);
    const [raw] = await t.database.db.select().from(integrations).where(eq(integrations.id, c.id));
    const stored = JSON.stringify(raw);
    expect(stored).not.toContain(creds.accessToken);
    expect(stored).not.toContain(creds.refreshToken);
    for (const url of [`${base}/integrations/${c.id}`, `${base}/integrations`, `${base}/integrations?provider=x`]) {
      const body = (await t.call({ method: 'GET', url, auth: ownerA() })).body;
      expect(body).not.toContain(creds.accessToken);
      expect(body).not.toContain(creds.refreshToken);
      expect(body).not.toContain('credentials');
    }
    // An authorization in progress keeps neither its state nor its verifier readable.
    const started = await start('x');
    const state = new URL(started.json().authorizationUrl).searchParams.get('state')!;
    const pending = JSON.stringify(await t.database.db.select().from(oauthStates).where(eq(oauthStates.orgId, t.orgA.orgId)));
    expect(pending).not.toContain(state);
    expect(pending).toContain('"verifierSealed":"v1.');
    // Nor the starting browser's secret: only its hash.
    const [secret] = Object.values(cookiesOf(started));
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pending).not.toContain(secret);
  });

  it('a state is single-use: the same callback a second time is refused and stores nothing', async () => {
    const c = await connect('x');
    const exchanges = provider.tokenRequests.length;
    const count = (await t.call({ method: 'GET', url: `${base}/integrations?pageSize=100`, auth: ownerA() })).json().total;
    const again = await callBack(c.callback, c.cookies);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 'OAUTH_STATE_INVALID' });
    const page = await callBack(c.callback, c.cookies, { accept: 'text/html' });
    expect(page.statusCode).toBe(400);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('The connection was not completed');
    expect(provider.tokenRequests.length).toBe(exchanges);
    expect((await t.call({ method: 'GET', url: `${base}/integrations?pageSize=100`, auth: ownerA() })).json().total).toBe(count);
    // An unknown one, and none at all.
    const forged = await t.call({ method: 'GET', url: `/api/v1/oauth/callback?state=forged-state-value&code=abc` });
    expect(forged.statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: '/api/v1/oauth/callback?code=abc' })).statusCode).toBe(400);
  });

  it('a state older than 10 minutes is refused', async () => {
    const started = await start('linkedin');
    const callback = new URL(await follow(started.json().authorizationUrl));
    advance(10 * 60_000 + 1000);
    const exchanges = provider.tokenRequests.length;
    const res = await callBack(callback, cookiesOf(started));
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('OAUTH_STATE_INVALID');
    expect(provider.tokenRequests.length).toBe(exchanges);
  });

  it("returnTo must be on PUBLIC_URL's origin", async () => {
    for (const returnTo of [
      'https://evil.example.com/orgs',
      '//evil.example.com/x',
      'http://app.example.com/orgs',
      'javascript:alert(1)',
      '/\\evil.example.com',
    ]) {
      const res = await start('x', { returnTo });
      expect(res.statusCode, returnTo).toBe(400);
      expect(res.json().details[0].field).toBe('body.returnTo');
    }
    // A path is taken on our origin.
    const c = await connect('x', { returnTo: '/orgs/somewhere?x=1' });
    expect(c.location.toString()).toBe(`${PUBLIC_URL}/orgs/somewhere?x=1&connected=${c.id}`);
  });

  it('the user declines: back to returnTo with error=access_denied, nothing stored', async () => {
    const count = (await t.call({ method: 'GET', url: `${base}/integrations`, auth: ownerA() })).json().total;
    provider.deny = true;
    try {
      const started = await start('google', { returnTo: `${PUBLIC_URL}/orgs/${t.orgA.orgId}/settings/integrations` });
      const callback = new URL(await follow(started.json().authorizationUrl));
      expect(callback.searchParams.get('error')).toBe('access_denied');
      const res = await callBack(callback, cookiesOf(started));
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe(`${PUBLIC_URL}/orgs/${t.orgA.orgId}/settings/integrations?error=access_denied`);
      // The state is spent too.
      expect((await callBack(callback, cookiesOf(started))).statusCode).toBe(400);
    } finally {
      provider.deny = false;
    }
    expect((await t.call({ method: 'GET', url: `${base}/integrations`, auth: ownerA() })).json().total).toBe(count);
  });

  it('a provider without a client id: 422 INTEGRATION_NOT_CONFIGURED', async () => {
    const bare = await buildTestApp({ workers: false, env: { LINKEDIN_CLIENT_ID: 'only-linkedin', LINKEDIN_CLIENT_SECRET: 's' } });
    try {
      for (const p of ['x', 'google']) {
        const res = await bare.call({
          method: 'POST',
          url: `/api/v1/orgs/${bare.orgA.orgId}/integrations/oauth/${p}/start`,
          auth: { apiKey: bare.orgA.apiKey },
          payload: {},
        });
        expect(res.statusCode).toBe(422);
        expect(res.json().code).toBe('INTEGRATION_NOT_CONFIGURED');
        expect(res.json().message).toContain(`${p.toUpperCase()}_CLIENT_ID`);
      }
      const ok = await bare.call({
        method: 'POST',
        url: `/api/v1/orgs/${bare.orgA.orgId}/integrations/oauth/linkedin/start`,
        auth: { apiKey: bare.orgA.apiKey },
        payload: {},
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().authorizationUrl).toMatch(/^https:\/\/www\.linkedin\.com\/oauth\/v2\/authorization\?/);
    } finally {
      await bare.close();
    }
  });
});

describe('the flow is bound to the browser that started it (RFC 9700 §4.7)', () => {
  const baseB = () => `/api/v1/orgs/${t.orgB.orgId}`;
  const stored = async (orgBase: string, auth: Credentials) =>
    (await t.call({ method: 'GET', url: `${orgBase}/integrations?pageSize=100`, auth })).json().total as number;
  const nameOf = (started: { cookies: { name: string }[] }) => started.cookies.find((c) => c.name.startsWith('oauth_flow_'))!.name;

  it("the start sets an HttpOnly, SameSite=Lax cookie for the callback's path only, Secure over https, for the state's 10 minutes", async () => {
    const started = await start('x');
    const cookies = started.cookies as {
      name: string;
      value: string;
      path?: string;
      httpOnly?: boolean;
      secure?: boolean;
      sameSite?: string;
      maxAge?: number;
    }[];
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ path: '/api/v1/oauth', httpOnly: true, secure: true, sameSite: 'Lax', maxAge: 600 });
    expect(cookies[0]!.name).toMatch(/^oauth_flow_[0-9a-f]{16}$/);
    // Not in the answer's body: page scripts never see it.
    expect(started.body).not.toContain(cookies[0]!.value);
    expect(Object.keys(started.json())).toEqual(['authorizationUrl']);
  });

  it("another organization's state completed by a browser without its cookie is refused, stores nothing, and stays for its own browser", async () => {
    // Organization B starts; its authorization URL (with the state) reaches a victim's browser.
    const started = await start('linkedin', {}, ownerB(), baseB());
    expect(started.statusCode).toBe(200);
    const callback = new URL(await follow(started.json().authorizationUrl));
    const [exchanges, countB, eventsB] = [
      provider.tokenRequests.length,
      await stored(baseB(), ownerB()),
      (await eventsOf(t, t.orgB.orgId, 'integration.connected')).length,
    ];
    for (const headers of [{}, { accept: 'text/html' }] as Record<string, string>[]) {
      const refused = await callBack(callback, {}, headers);
      expect(refused.statusCode).toBe(400);
      if (headers.accept) expect(refused.body).toContain('not started in this browser');
      else expect(refused.json()).toMatchObject({ code: 'OAUTH_STATE_INVALID', message: expect.stringContaining('not started in this browser') });
    }
    // Another flow's cookie, under its own name (as a browser holds it) or under this flow's: refused too.
    const other = await start('linkedin', {}, ownerB(), baseB());
    const otherCookies = cookiesOf(other);
    expect((await callBack(callback, otherCookies)).statusCode).toBe(400);
    const forgedName = { [nameOf(started)]: Object.values(otherCookies)[0]! };
    const wrong = await callBack(callback, forgedName);
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().code).toBe('OAUTH_STATE_INVALID');
    // No code was exchanged, nothing connected.
    expect(provider.tokenRequests.length).toBe(exchanges);
    expect(await stored(baseB(), ownerB())).toBe(countB);
    expect((await eventsOf(t, t.orgB.orgId, 'integration.connected')).length).toBe(eventsB);
    // The browser that started it still completes it: the refusals did not spend the state.
    const own = await callBack(callback, cookiesOf(started));
    expect(own.statusCode, own.body).toBe(302);
    const id = new URL(own.headers.location as string).searchParams.get('connected');
    expect(id).toMatch(/^int_/);
    expect(await stored(baseB(), ownerB())).toBe(countB + 1);
    expect((await t.call({ method: 'GET', url: `${baseB()}/integrations/${id}`, auth: ownerB() })).json()).toMatchObject({
      provider: 'linkedin',
      authType: 'oauth',
    });
  });

  it('two flows of one browser (two tabs) each complete with their own cookie; the callback clears it, refused or not', async () => {
    const first = await start('x');
    const second = await start('x');
    const jar = { ...cookiesOf(first), ...cookiesOf(second) };
    expect(Object.keys(jar)).toHaveLength(2);
    const firstBack = new URL(await follow(first.json().authorizationUrl));
    const secondBack = new URL(await follow(second.json().authorizationUrl));
    for (const [callback, started] of [
      [secondBack, second],
      [firstBack, first],
    ] as const) {
      const res = await callBack(callback, jar);
      expect(res.statusCode, res.body).toBe(302);
      expect(new URL(res.headers.location as string).searchParams.get('connected')).toMatch(/^int_/);
      // Cleared: the same name, path and attributes, expired.
      const cleared = (res.cookies as { name: string; value: string; path?: string; expires?: Date; maxAge?: number }[]).find(
        (c) => c.name === nameOf(started),
      )!;
      expect(cleared).toMatchObject({ value: '', path: '/api/v1/oauth' });
      expect(cleared.expires!.getTime()).toBeLessThanOrEqual(Date.now());
    }
    // A refused callback clears it too.
    const third = await start('x');
    const thirdBack = new URL(await follow(third.json().authorizationUrl));
    const refused = await callBack(thirdBack, cookiesOf(first));
    expect(refused.statusCode).toBe(400);
    expect(refused.cookies.map((c: { name: string }) => c.name)).toEqual([nameOf(third)]);
  });
});

describe('refresh', () => {
  it('an X token that expired two hours after connecting is refreshed before publishing', async () => {
    const c = await connect('x');
    const first = (await tokensOf(c.id)).accessToken!;
    const scheduledAt = new Date(clock.ms + 3 * HOUR).toISOString();
    const p = await post({ platform: 'X', body: 'Three hours later', integrationId: c.id, scheduledAt });
    expect(p.status).toBe('SCHEDULED');
    const refreshes = provider.refreshes('x').length;
    advance(3 * HOUR + 1000);
    expect(provider.isValid(first)).toBe(false);
    const done = await settled(p.id);
    expect(done.status).toBe('PUBLISHED');
    expect(provider.refreshes('x').length).toBe(refreshes + 1);
    const now = await tokensOf(c.id);
    expect(now.accessToken).not.toBe(first);
    expect(api.postCalls(first)).toHaveLength(0);
    expect(api.postCalls(now.accessToken!)).toHaveLength(1);
    expect(Date.parse((await get(c.id)).tokenExpiresAt)).toBeGreaterThan(clock.ms + 59 * 60_000);
  });

  it('a token the platform refuses before its time is refreshed once and the post goes out', async () => {
    const c = await connect('x');
    const first = (await tokensOf(c.id)).accessToken!;
    provider.expire(first); // revoked early: our record still says it is good for an hour
    const p = await post({ platform: 'X', body: 'Refused, refreshed, posted', integrationId: c.id });
    const done = await settled(p.id);
    expect(done.status).toBe('PUBLISHED');
    expect(api.postCalls(first)).toHaveLength(1);
    const now = (await tokensOf(c.id)).accessToken!;
    expect(api.postCalls(now)).toHaveLength(1);
    expect((await get(c.id)).status).toBe('connected');
  });

  it('Google keeps its refresh token: none comes with a refresh, nor with a second consent', async () => {
    const c = await connect('google');
    const { refreshToken } = await tokensOf(c.id);
    advance(HOUR);
    const fresh = await t.app.services.integrations.freshCredentials(await rowOf(c.id));
    const refresh = provider.refreshes('google').at(-1)!;
    expect(refresh).toMatchObject({ status: 200, clientAuth: 'basic' });
    expect(refresh.params.refresh_token).toBe(refreshToken);
    expect(fresh.refreshToken).toBe(refreshToken);
    expect(provider.isValid(fresh.accessToken!)).toBe(true);
    expect((await tokensOf(c.id)).refreshToken).toBe(refreshToken);
    // Reconnecting when Google's answer has no refresh token (consented before): the one we hold stays.
    provider.googleRefreshOnPromptConsent = false;
    const again = await connect('google', { integrationId: c.id }).finally(() => {
      provider.googleRefreshOnPromptConsent = true;
    });
    expect(provider.tokenRequests.at(-1)).toMatchObject({ provider: 'google', grantType: 'authorization_code', status: 200 });
    expect(again.id).toBe(c.id);
    const after = await tokensOf(c.id);
    expect(after.refreshToken).toBe(refreshToken);
    expect(after.accessToken).not.toBe(fresh.accessToken);
  });

  it('freshCredentials hands out a valid token as it is, and a pasted token untouched', async () => {
    const c = await connect('linkedin');
    const before = provider.tokenRequests.length;
    const creds = await t.app.services.integrations.freshCredentials(await rowOf(c.id));
    expect(provider.isValid(creds.accessToken!)).toBe(true);
    expect(creds.author).toBe('urn:li:person:li-member-1');
    const pasted = await t.call({
      method: 'POST',
      url: `${base}/integrations`,
      auth: ownerA(),
      payload: { provider: 'x', name: 'pasted', credentials: { accessToken: 'ok-pasted' } },
    });
    expect(pasted.json()).toMatchObject({ authType: 'token', tokenExpiresAt: null });
    expect(await t.app.services.integrations.freshCredentials(await rowOf(pasted.json().id))).toEqual({ accessToken: 'ok-pasted' });
    expect(provider.tokenRequests.length).toBe(before);
  });

  it('refreshDue refreshes tokens expiring within 10 minutes, once', async () => {
    const c = await connect('linkedin');
    const { accessToken: first, refreshToken } = await tokensOf(c.id);
    // This integration's refreshes (others that are due are refreshed too).
    const mine = () => provider.refreshes('linkedin').filter((r) => r.params.refresh_token === refreshToken).length;
    const refreshes = mine();
    advance(45 * 60_000);
    await t.app.services.integrations.refreshDue();
    expect((await tokensOf(c.id)).accessToken).toBe(first); // 15 minutes left: not yet
    advance(6 * 60_000);
    await t.app.services.integrations.refreshDue();
    const after = await tokensOf(c.id);
    expect(after.accessToken).not.toBe(first);
    expect(mine()).toBe(refreshes + 1);
    expect(after.refreshToken).toBe(refreshToken); // LinkedIn answers with the same one
    expect(Date.parse(after.expiresAt!)).toBe(clock.ms + HOUR);
    await t.app.services.integrations.refreshDue();
    expect(mine()).toBe(refreshes + 1);
  });

  it('the provider down (500): the post is retried, the integration untouched', async () => {
    const c = await connect('x');
    advance(HOUR);
    provider.failRefresh = 500;
    const p = await post({ platform: 'X', body: 'Retry after the outage', integrationId: c.id });
    const waiting = await eventually(async () => {
      const now = (await t.call({ method: 'GET', url: `${base}/content/${p.id}`, auth: ownerA() })).json();
      return now.error?.code === 'OAUTH_UNAVAILABLE' ? now : undefined;
    });
    expect(waiting).toMatchObject({ status: 'PUBLISHING', error: { retryable: true } });
    expect(await get(c.id)).toMatchObject({ status: 'connected', lastError: null });
    provider.failRefresh = null;
    advance(2000);
    expect((await settled(p.id)).status).toBe('PUBLISHED');
  });

  it('invalid_grant: status error, one integration.error REAUTH_REQUIRED and one notification, however many attempts', async () => {
    const c = await connect('x');
    const { refreshToken } = await tokensOf(c.id);
    const mine = () => provider.refreshes('x').filter((r) => r.params.refresh_token === refreshToken).length;
    advance(HOUR);
    provider.failRefresh = 'invalid_grant';
    const attempts = mine();
    try {
      const posts = [await post({ platform: 'X', body: 'one', integrationId: c.id }), await post({ platform: 'X', body: 'two', integrationId: c.id })];
      for (const p of posts) {
        const done = await settled(p.id);
        expect(done.status).toBe('FAILED');
        expect(done.error).toMatchObject({ code: 'REAUTH_REQUIRED', retryable: false });
      }
      const third = await post({ platform: 'X', body: 'three', integrationId: c.id });
      expect((await settled(third.id)).error.code).toBe('REAUTH_REQUIRED');
      await t.app.services.integrations.refreshDue();
      await expect(t.app.services.integrations.freshCredentials(await rowOf(c.id))).rejects.toMatchObject({ code: 'REAUTH_REQUIRED' });
    } finally {
      provider.failRefresh = null;
    }
    // The token endpoint was asked once: a dead grant is not asked again until reconnected.
    expect(mine()).toBe(attempts + 1);
    const integration = await get(c.id);
    expect(integration).toMatchObject({ status: 'error', lastError: { code: 'REAUTH_REQUIRED' } });
    const errors = (await eventsOf(t, t.orgA.orgId, 'integration.error')).filter((e) => e.payload.integrationId === c.id);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.payload).toMatchObject({ integrationId: c.id, provider: 'x', code: 'REAUTH_REQUIRED' });
    const told = await t.database.db
      .select()
      .from(notifications)
      .where(
        and(
          eq(notifications.orgId, t.orgA.orgId),
          eq(notifications.kind, 'integration.error'),
          eq(notifications.link, `/api/v1/orgs/${t.orgA.orgId}/integrations/${c.id}`),
        ),
      );
    expect(told).toHaveLength(1);
    expect(told[0]!.title).toContain('Reconnect');

    // Reconnecting ends it: same id, connected, no error; a post publishes with the new token.
    const again = await connect('x', { integrationId: c.id });
    expect(again.id).toBe(c.id);
    expect(await get(c.id)).toMatchObject({ id: c.id, status: 'connected', lastError: null });
    const p = await post({ platform: 'X', body: 'back again', integrationId: c.id });
    expect((await settled(p.id)).status).toBe('PUBLISHED');
    expect(api.postCalls((await tokensOf(c.id)).accessToken!)).toHaveLength(1);
  });

  it('reconnect keeps the id: a post scheduled before it publishes with the new token', async () => {
    const c = await connect('linkedin');
    const old = (await tokensOf(c.id)).accessToken!;
    const p = await post({
      platform: 'LINKEDIN',
      body: 'Scheduled before the reconnect',
      integrationId: c.id,
      scheduledAt: new Date(clock.ms + 30 * 60_000).toISOString(),
    });
    const connectedEvents = (await eventsOf(t, t.orgA.orgId, 'integration.connected')).length;
    const again = await connect('linkedin', { integrationId: c.id, returnTo: `${PUBLIC_URL}/orgs/${t.orgA.orgId}/settings/integrations` });
    expect(again.id).toBe(c.id);
    // A reconnect is not a new connection.
    expect((await eventsOf(t, t.orgA.orgId, 'integration.connected')).length).toBe(connectedEvents);
    const fresh = (await tokensOf(c.id)).accessToken!;
    expect(fresh).not.toBe(old);
    provider.expire(old);
    advance(31 * 60_000);
    expect((await settled(p.id)).status).toBe('PUBLISHED');
    expect(api.postCalls(fresh)).toHaveLength(1);
    expect(api.postCalls(old)).toHaveLength(0);
  });
});

describe('one refresh at a time across instances', () => {
  let second: App;
  let secondDb: Database | null = null;
  beforeAll(async () => {
    // A second instance on the same store: its own connection pool on PostgreSQL.
    if (t.database.kind === 'postgres') secondDb = openDatabase({ databaseUrl: t.database.url!, dataDir: '/tmp', poolSize: 5 });
    second = await buildApp({
      config: testConfig({ ...provider.env(), PUBLIC_URL, LINKEDIN_API_URL: api.url, X_API_URL: api.url }),
      database: secondDb ?? t.database,
      clock,
      logger: false,
      workers: false,
    });
    await second.ready();
  });
  afterAll(async () => {
    await second.close();
    await secondDb?.close();
  });

  it('two instances refreshing the same X integration at once: the token endpoint sees one refresh', async () => {
    const c = await connect('x');
    const { refreshToken } = await tokensOf(c.id);
    advance(HOUR);
    provider.refreshDelayMs = 300;
    try {
      // Each caller holds the row as it was read before anyone refreshed.
      const stale = await rowOf(c.id);
      const [a, b, a2, b2] = await Promise.all([
        t.app.services.integrations.freshCredentials(stale),
        second.services.integrations.freshCredentials(stale),
        t.app.services.integrations.freshCredentials(stale),
        second.services.integrations.refreshDue().then(() => second.services.integrations.freshCredentials(stale)),
      ]);
      expect(provider.refreshesOf(refreshToken!)).toHaveLength(1);
      // X rotates refresh tokens: a second refresh would have used a dead one.
      for (const creds of [b, a2, b2]) expect(creds.accessToken).toBe(a.accessToken);
      expect(provider.isValid(a.accessToken!)).toBe(true);
    } finally {
      provider.refreshDelayMs = 0;
    }
    expect(await get(c.id)).toMatchObject({ status: 'connected' });
  });
});

describe('settings, isolation and access', () => {
  it('PATCH names a Google integration and sets its GA4 property and Search Console site (checked)', async () => {
    const c = await connect('google');
    const patch = (payload: Record<string, unknown>, id = c.id) => t.call({ method: 'PATCH', url: `${base}/integrations/${id}`, auth: ownerA(), payload });
    const ok = await patch({ name: 'GA4 + GSC', config: { propertyId: '123456789', siteUrl: 'https://www.example.com/' } });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ name: 'GA4 + GSC', config: { propertyId: 'properties/123456789', siteUrl: 'https://www.example.com/' } });
    expect((await patch({ config: { siteUrl: 'sc-domain:example.com' } })).json().config).toEqual({
      propertyId: 'properties/123456789',
      siteUrl: 'sc-domain:example.com',
    });
    expect((await patch({ config: { propertyId: '' } })).json().config).toEqual({ siteUrl: 'sc-domain:example.com' });
    for (const [config, field] of [
      [{ propertyId: 'UA-12345-1' }, 'body.config.propertyId'],
      [{ siteUrl: 'https://www.example.com' }, 'body.config.siteUrl'],
      [{ siteUrl: 'ftp://example.com/' }, 'body.config.siteUrl'],
      [{ viewId: '1' }, 'body.config.viewId'],
    ] as const) {
      const res = await patch({ config });
      expect(res.statusCode, JSON.stringify(config)).toBe(400);
      expect(res.json().details[0].field).toBe(field);
    }
    expect((await patch({ config: { propertyId: 7 } })).statusCode).toBe(400);
    const x = await connect('x');
    expect((await patch({ config: { propertyId: '1' } }, x.id)).statusCode).toBe(400);
    expect(
      (await t.call({ method: 'GET', url: `${base}/integrations?provider=google&pageSize=100`, auth: ownerA() }))
        .json()
        .items.every((i: { provider: string }) => i.provider === 'google'),
    ).toBe(true);
    // Pasting credentials stays for linkedin and x.
    const pasted = await t.call({
      method: 'POST',
      url: `${base}/integrations`,
      auth: ownerA(),
      payload: { provider: 'google', name: 'g', credentials: { accessToken: 'a' } },
    });
    expect(pasted.statusCode).toBe(400);
  });

  it('another organization: 404 on reconnect and PATCH; its own start works', async () => {
    const c = await connect('x');
    const baseB = `/api/v1/orgs/${t.orgB.orgId}`;
    const reconnect = await start('x', { integrationId: c.id }, ownerB(), baseB);
    expect(reconnect.statusCode).toBe(404);
    const patched = await t.call({ method: 'PATCH', url: `${baseB}/integrations/${c.id}`, auth: ownerB(), payload: { name: 'mine now' } });
    expect(patched.statusCode).toBe(404);
    // Another org's key on org A's routes.
    expect((await t.call({ method: 'POST', url: `${base}/integrations/oauth/x/start`, auth: ownerB(), payload: {} })).statusCode).toBe(404);
    expect((await t.call({ method: 'PATCH', url: `${base}/integrations/${c.id}`, auth: ownerB(), payload: { name: 'x' } })).statusCode).toBe(404);
    // A reconnect names an integration of the same provider.
    expect((await start('linkedin', { integrationId: c.id })).statusCode).toBe(404);
    expect((await get(c.id)).name).toBe('@x_user_1');
    expect((await start('x', {}, ownerB(), baseB)).statusCode).toBe(200);
  });

  it('scopes and roles: content:write (managers) to start and PATCH', async () => {
    const c = await connect('x');
    const readOnly = await t.key(t.orgA.orgId, ['content:read']);
    const writer = await t.key(t.orgA.orgId, ['content:write']);
    for (const [method, url, payload] of [
      ['POST', `${base}/integrations/oauth/x/start`, {}],
      ['POST', `${base}/integrations/oauth/google/start`, { integrationId: c.id }],
      ['PATCH', `${base}/integrations/${c.id}`, { name: 'renamed' }],
    ] as const) {
      const refused = await t.call({ method, url, auth: { apiKey: readOnly }, payload });
      expect(refused.statusCode, `${method} ${url}`).toBe(403);
      expect(refused.json().code).toBe('INSUFFICIENT_SCOPE');
      const member = await t.member(t.orgA.orgId, 'member');
      expect((await t.call({ method, url, auth: { token: member.token }, payload })).statusCode, `member ${method} ${url}`).toBe(403);
    }
    expect((await t.call({ method: 'POST', url: `${base}/integrations/oauth/x/start`, auth: { apiKey: writer }, payload: {} })).statusCode).toBe(200);
    expect((await t.call({ method: 'PATCH', url: `${base}/integrations/${c.id}`, auth: { apiKey: writer }, payload: { name: 'renamed' } })).statusCode).toBe(
      200,
    );
    expect((await t.call({ method: 'GET', url: `${base}/integrations/${c.id}`, auth: { apiKey: readOnly } })).json().name).toBe('renamed');
    // A key bound to a project cannot change an organization-wide integration nor start an organization-wide one.
    const projectKey = await t.key(t.orgA.orgId, ['*'], t.orgA.projectId);
    expect((await t.call({ method: 'PATCH', url: `${base}/integrations/${c.id}`, auth: { apiKey: projectKey }, payload: { name: 'p' } })).statusCode).toBe(403);
    expect(
      (await t.call({ method: 'POST', url: `${base}/integrations/oauth/x/start`, auth: { apiKey: projectKey }, payload: { integrationId: c.id } })).statusCode,
    ).toBe(403);
    const own = await t.call({ method: 'POST', url: `${base}/integrations/oauth/x/start`, auth: { apiKey: projectKey }, payload: {} });
    expect(own.statusCode).toBe(200);
    // The callback needs no login: the state and the starting browser's cookie are the credential.
    const callback = new URL(await follow(own.json().authorizationUrl));
    const res = await callBack(callback, cookiesOf(own));
    expect(res.statusCode).toBe(302);
    const id = new URL(res.headers.location as string).searchParams.get('connected')!;
    expect((await get(id)).projectId).toBe(t.orgA.projectId);
  });
});
