import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, testConfig, TEST_PASSWORD, type TestApp } from '../../../test/harness.ts';
import { childEnv } from '../../../test/processes.ts';
import { deriveKey } from '../../platform/crypto.ts';

/** Issue 10 items 4 and 9, issue 11 (rate limits): client addresses, credentials, password routes, headers, tokens, passwords. */

const login = (t: TestApp, options: { password?: string; forwardedFor?: string; remoteAddress?: string } = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    remoteAddress: options.remoteAddress,
    headers: options.forwardedFor ? { 'x-forwarded-for': options.forwardedFor } : {},
    payload: { email: t.orgA.ownerEmail, password: options.password ?? 'wrong password' },
  });

describe('the client address behind proxies (TRUST_PROXY)', () => {
  it('in production without TRUST_PROXY, rotating X-Forwarded-For does not escape the login limit', async () => {
    const t = await buildTestApp({ env: { NODE_ENV: 'production', AUTH_RATE_LIMIT_MAX: '5' }, workers: false });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await login(t, { forwardedFor: `198.51.100.${i + 1}` })).statusCode);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    } finally {
      await t.close();
    }
  });

  it('with TRUST_PROXY naming the proxy, the forwarded address is the one counted', async () => {
    const t = await buildTestApp({ env: { TRUST_PROXY: '127.0.0.1, 10.0.0.0/8', AUTH_RATE_LIMIT_MAX: '3' }, workers: false });
    try {
      // Each client behind the proxy has its own budget...
      for (let i = 0; i < 6; i++) expect((await login(t, { forwardedFor: `203.0.113.${i + 1}` })).statusCode).toBe(401);
      // ...and one client is limited whatever proxy it comes through.
      const one = [];
      for (const remoteAddress of ['127.0.0.1', '10.1.2.3', '127.0.0.1', '10.4.5.6'])
        one.push((await login(t, { forwardedFor: '192.0.2.7', remoteAddress })).statusCode);
      expect(one).toEqual([401, 401, 401, 429]);
      // A header from an address that is not a configured proxy is ignored: that address counts.
      const direct = [];
      for (let i = 0; i < 4; i++) direct.push((await login(t, { forwardedFor: `192.0.2.${100 + i}`, remoteAddress: '172.16.0.9' })).statusCode);
      expect(direct).toEqual([401, 401, 401, 429]);
    } finally {
      await t.close();
    }
  });

  it('refuses a TRUST_PROXY that is not a list of addresses or CIDRs', () => {
    for (const value of ['true', '*', '10.0.0.0/33', '10.0.0.1/8/8', 'proxy.example']) {
      expect(() => testConfig({ TRUST_PROXY: value }), value).toThrow(/TRUST_PROXY/);
    }
    expect(testConfig({ TRUST_PROXY: ' 10.0.0.1 , fd00::/8,loopback' }).trustProxy).toEqual(['10.0.0.1', 'fd00::/8', 'loopback']);
    expect(testConfig().trustProxy).toBe(false);
  });
});

describe('requests without a valid credential count per client address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MAX: '50' }, workers: false });
  });
  afterAll(async () => {
    await t.close();
  });

  it('70 requests with 70 different invented keys get 429 after the 50th; a valid key from the same address still works', async () => {
    const url = `/api/v1/orgs/${t.orgA.orgId}/leads`;
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++) {
      const res = await t.app.inject({ url, remoteAddress: '192.0.2.50', headers: { 'x-api-key': `svc_invented_key_${i}_${'x'.repeat(30)}` } });
      statuses.push(res.statusCode);
    }
    expect(statuses.slice(0, 50).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(50).every((s) => s === 429)).toBe(true);
    // Forged bearer tokens and no credential at all draw from the same address budget.
    expect((await t.app.inject({ url, remoteAddress: '192.0.2.50', headers: { authorization: 'Bearer forged.token.here' } })).statusCode).toBe(429);
    expect((await t.app.inject({ url, remoteAddress: '192.0.2.50' })).statusCode).toBe(429);
    // A valid credential is counted on its own, wherever it comes from.
    const valid = await t.app.inject({ url, remoteAddress: '192.0.2.50', headers: { 'x-api-key': t.orgA.apiKey } });
    expect(valid.statusCode).toBe(200);
    // Another address is not affected.
    expect((await t.app.inject({ url, remoteAddress: '192.0.2.51', headers: { 'x-api-key': 'svc_another_invented_key' } })).statusCode).toBe(401);
  });

  it('counts a user across their sessions: a fresh login does not buy a fresh budget', async () => {
    const url = `/api/v1/orgs/${t.orgB.orgId}/leads`;
    for (let i = 0; i < 50; i++) expect((await t.call({ url, auth: { token: t.orgB.token } })).statusCode).toBe(200);
    const again = await t.app.services.auth.login(t.orgB.ownerEmail, TEST_PASSWORD);
    expect((await t.call({ url, auth: { token: again.tokens.accessToken } })).statusCode).toBe(429);
  });
});

describe('the password-route limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { AUTH_RATE_LIMIT_MAX: '3', RATE_LIMIT_MAX: '1000' }, workers: false });
  });
  afterAll(async () => {
    await t.close();
  });

  it('does not apply to refresh, logout or me', async () => {
    for (let i = 0; i < 8; i++) {
      expect((await t.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: `not-a-token-${i}` } })).statusCode).toBe(401);
      expect((await t.call({ method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken: `not-a-token-${i}` } })).statusCode).toBeLessThan(429);
      const me = await t.call({ url: '/api/v1/auth/me', auth: { token: t.orgA.token } });
      expect(me.statusCode).toBe(200);
      expect(me.headers['ratelimit-limit']).toBe('1000');
    }
  });

  it('applies to login and register together, per client address', async () => {
    const register = (remoteAddress: string, i: number) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/auth/register',
        remoteAddress,
        payload: { email: `limited-${i}@example.com`, password: 'a long enough passphrase' },
      });
    expect((await login(t, { remoteAddress: '192.0.2.80' })).statusCode).toBe(401);
    expect((await login(t, { remoteAddress: '192.0.2.80', password: TEST_PASSWORD })).statusCode).toBe(200);
    expect((await register('192.0.2.80', 1)).statusCode).toBe(201);
    const limited = await register('192.0.2.80', 2);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMIT' });
    expect((await login(t, { remoteAddress: '192.0.2.80', password: TEST_PASSWORD })).statusCode).toBe(429);
    expect((await login(t, { remoteAddress: '192.0.2.81', password: TEST_PASSWORD })).statusCode).toBe(200);
  });
});

describe('rate-limit headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MAX: '3' }, workers: false });
  });
  afterAll(async () => {
    await t.close();
  });

  it('RateLimit-Limit, -Remaining and -Reset on every limited response, Retry-After on 429', async () => {
    const url = `/api/v1/orgs/${t.orgA.orgId}/leads`;
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.call({ url, auth: { apiKey: t.orgA.apiKey } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      const reset = Number(res.headers['ratelimit-reset']);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      expect(res.headers['retry-after']).toBeUndefined();
      remaining.push(String(res.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await t.call({ url, auth: { apiKey: t.orgA.apiKey } });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['ratelimit-limit']).toBe('3');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Errors are limited responses too.
    const unauthorized = await t.call({ url, remoteAddress: '192.0.2.90' } as never);
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.headers['ratelimit-remaining']).toBe('2');
  });

  it('is the CONTRACT default, 6000 a minute, when RATE_LIMIT_MAX is not set', async () => {
    const defaults = await buildTestApp({ env: { RATE_LIMIT_MAX: '' }, workers: false });
    try {
      const res = await defaults.call({ url: `/api/v1/orgs/${defaults.orgA.orgId}/leads`, auth: { apiKey: defaults.orgA.apiKey } });
      expect(res.headers['ratelimit-limit']).toBe('6000');
      expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    } finally {
      await defaults.close();
    }
  });
});

describe('access tokens and passwords', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ workers: false });
  });
  afterAll(async () => {
    await t.close();
  });

  const signed = async (claims: { exp?: number }) => {
    const now = Math.floor(Date.now() / 1000);
    let jwt = new SignJWT({ typ: 'access' }).setProtectedHeader({ alg: 'HS256' }).setSubject(t.orgA.ownerId).setIssuedAt(now);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    return jwt.sign(new Uint8Array(deriveKey(t.config.appSecret, 'access-token')));
  };

  it('rejects a correctly signed access token without exp with 401', async () => {
    const forever = await signed({});
    const me = await t.call({ url: '/api/v1/auth/me', auth: { token: forever } });
    expect(me.statusCode).toBe(401);
    expect(me.json().code).toBe('UNAUTHORIZED');
    expect((await t.call({ url: `/api/v1/orgs/${t.orgA.orgId}/leads`, auth: { token: forever } })).statusCode).toBe(401);
    // The same token with an expiry is accepted: only the missing claim is refused.
    const bounded = await signed({ exp: Math.floor(Date.now() / 1000) + 60 });
    expect((await t.call({ url: '/api/v1/auth/me', auth: { token: bounded } })).statusCode).toBe(200);
  });

  it('refuses blank and common passwords with 400 VALIDATION_ERROR naming the field', async () => {
    for (const password of ['        ', ' \t \t \t \t ', 'Password123', 'qwerty123', '12345678']) {
      const res = await t.call({ method: 'POST', url: '/api/v1/auth/register', payload: { email: `weak-${Math.random()}@example.com`, password } });
      expect(res.statusCode, JSON.stringify(password)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.password' }] });
    }
    const ok = await t.call({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'strong@example.com', password: '   spaced but long   ' } });
    expect(ok.statusCode).toBe(201);
  });

  it('the CLI refuses a blank password for create-owner', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cli-password-'));
    try {
      const child = spawn(process.execPath, ['src/cli/main.ts', 'create-owner', '--email', 'blank@example.com', '--password', '        '], {
        cwd: new URL('../../..', import.meta.url).pathname,
        env: childEnv({ DATA_DIR: dir }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(code).not.toBe(0);
      expect(stderr).toContain('--password must not be all blank');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
