import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, TEST_PASSWORD, type TestApp } from '../../../test/harness.ts';

/** CONTRACT §11: the refresh token in an HttpOnly cookie for the web panel. */

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ workers: false });
});
afterAll(async () => {
  await t.close();
});

const refreshCookieOf = (res: LightMyRequestResponse) => res.cookies.find((c) => c.name === 'refresh_token');
const login = (app: TestApp, body: Record<string, unknown> = {}) =>
  app.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: app.orgA.ownerEmail, password: TEST_PASSWORD, ...body } });
const refresh = (cookie: string | undefined, body: Record<string, unknown> = {}) =>
  t.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: body, cookies: cookie ? { refresh_token: cookie } : {} });

describe('sign-in with "cookie": true', () => {
  it('sets the refresh token as an HttpOnly, SameSite=Strict cookie on /api/v1/auth and leaves it out of the body', async () => {
    const res = await login(t, { cookie: true });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.tokens).toEqual({ accessToken: expect.any(String), expiresIn: 900 });
    const cookie = refreshCookieOf(res)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/v1/auth', maxAge: t.config.refreshTokenTtlS });
    expect(cookie.value).toMatch(/^[\w-]{43}$/);
    // Served over http (PUBLIC_URL is http://localhost…), so not Secure: the browser would drop it.
    expect(cookie.secure).toBeFalsy();
    const header = String(res.headers['set-cookie']);
    expect(header).toContain('HttpOnly');
    expect(header).toContain('SameSite=Strict');
    // The access token works as usual.
    expect((await t.call({ url: '/api/v1/auth/me', auth: { token: body.tokens.accessToken } })).statusCode).toBe(200);
  });

  it('is Secure when PUBLIC_URL is https', async () => {
    const https = await buildTestApp({ env: { PUBLIC_URL: 'https://svc.example.com' }, workers: false });
    try {
      const res = await login(https, { cookie: true });
      expect(refreshCookieOf(res)).toMatchObject({ secure: true, httpOnly: true });
      expect(String(res.headers['set-cookie'])).toContain('Secure');
    } finally {
      await https.close();
    }
  });

  it('without the flag, the body carries the refresh token and no cookie is set', async () => {
    const res = await login(t);
    expect(res.json().tokens.refreshToken).toMatch(/^[\w-]{43}$/);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('register takes the flag too', async () => {
    const res = await t.call({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: 'cookie-register@example.com', password: 'plenty of words 123', cookie: true },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().tokens.refreshToken).toBeUndefined();
    const cookie = refreshCookieOf(res)!;
    expect(cookie.httpOnly).toBe(true);
    expect((await refresh(cookie.value)).statusCode).toBe(200);
  });
});

describe('refresh and logout with the cookie', () => {
  it('refresh takes the cookie in place of the body field and rotates it; the body again has no refresh token', async () => {
    const first = refreshCookieOf(await login(t, { cookie: true }))!.value;
    const res = await refresh(first);
    expect(res.statusCode).toBe(200);
    expect(res.json().tokens).toEqual({ accessToken: expect.any(String), expiresIn: 900 });
    const second = refreshCookieOf(res)!;
    expect(second.value).not.toBe(first);
    expect(second).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/v1/auth' });
    expect((await t.call({ url: '/api/v1/auth/me', auth: { token: res.json().tokens.accessToken } })).statusCode).toBe(200);

    // Reuse of a used cookie revokes the family, as with the body field, and clears the cookie.
    const reuse = await refresh(first);
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED' });
    const cleared = refreshCookieOf(reuse)!;
    expect(cleared.value).toBe('');
    expect(new Date(cleared.expires!).getTime()).toBeLessThan(Date.now());
    expect((await refresh(second.value)).statusCode).toBe(401);
  });

  it('a body token given with "cookie": true moves the session into the cookie', async () => {
    const { refreshToken } = (await login(t)).json().tokens;
    const res = await refresh(undefined, { refreshToken, cookie: true });
    expect(res.statusCode).toBe(200);
    expect(res.json().tokens.refreshToken).toBeUndefined();
    expect((await refresh(refreshCookieOf(res)!.value)).statusCode).toBe(200);
  });

  it('no token in the body and no cookie: 401 in the error body', async () => {
    for (const url of ['/api/v1/auth/refresh', '/api/v1/auth/logout']) {
      const res = await t.call({ method: 'POST', url, payload: {} });
      expect(res.statusCode, url).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message: expect.stringContaining('refresh_token') });
    }
  });

  it('logout takes the cookie, revokes its session and clears the cookie', async () => {
    const cookie = refreshCookieOf(await login(t, { cookie: true }))!.value;
    const res = await t.call({ method: 'POST', url: '/api/v1/auth/logout', payload: {}, cookies: { refresh_token: cookie } });
    expect(res.statusCode).toBe(204);
    const cleared = refreshCookieOf(res)!;
    expect(cleared).toMatchObject({ value: '', path: '/api/v1/auth' });
    expect(new Date(cleared.expires!).getTime()).toBeLessThan(Date.now());
    expect((await refresh(cookie)).statusCode).toBe(401);
  });

  it('the body field still works for clients that are not browsers', async () => {
    const { refreshToken } = (await login(t)).json().tokens;
    const res = await refresh(undefined, { refreshToken });
    expect(res.statusCode).toBe(200);
    expect(res.json().tokens.refreshToken).toMatch(/^[\w-]{43}$/);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('the OpenAPI document describes the flag, the optional fields and the cookie', async () => {
    const doc = (await t.call({ url: '/api/v1/openapi.json' })).json();
    const loginOp = doc.paths['/api/v1/auth/login'].post;
    expect(loginOp.requestBody.content['application/json'].schema.properties.cookie.type).toBe('boolean');
    expect(loginOp.responses['200'].headers['Set-Cookie']).toBeDefined();
    expect(doc.components.schemas.Tokens.required).toEqual(['accessToken', 'expiresIn']);
    const refreshOp = doc.paths['/api/v1/auth/refresh'].post;
    expect(refreshOp.requestBody.content['application/json'].schema.required ?? []).not.toContain('refreshToken');
    expect(refreshOp.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'cookie', name: 'refresh_token' })]));
    expect(doc.paths['/api/v1/auth/logout'].post.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: 'cookie', name: 'refresh_token' })]),
    );
  });
});
