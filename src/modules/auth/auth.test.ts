import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, TEST_PASSWORD, type TestApp } from '../../../test/harness.ts';
import { refreshTokens, users } from './tables.ts';
import { apiKeys } from '../api-keys/tables.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('register', () => {
  it('creates the user, an organization with a Default project, and tokens', async () => {
    const res = await t.call({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: 'New@Example.com', password: 'plenty of words 123', name: 'New', organizationName: 'Acme' },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.user).toMatchObject({ email: 'new@example.com', name: 'New' });
    expect(body.user.id).toMatch(/^usr_/);
    expect(body.organization).toMatchObject({ name: 'Acme' });
    expect(body.organization.id).toMatch(/^org_/);
    expect(body.tokens.expiresIn).toBe(900);
    const projects = await t.call({ method: 'GET', url: `/api/v1/orgs/${body.organization.id}/projects`, auth: { token: body.tokens.accessToken } });
    expect(projects.json().map((p: { name: string }) => p.name)).toEqual(['Default']);
  });

  it('stores passwords as argon2id hashes only', async () => {
    const [row] = await t.database.db.select().from(users).where(eq(users.email, 'new@example.com'));
    expect(row!.passwordHash).toMatch(/^\$argon2id\$/);
    expect(row!.passwordHash).not.toContain('plenty of words 123');
  });

  it('gives 409 CONFLICT for a taken email, whatever its case', async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'NEW@example.com', password: 'plenty of words 123' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ statusCode: 409, error: 'Conflict', code: 'CONFLICT' });
  });

  it('validates the body with per-field details', async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'not-an-email', password: 'short' } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details.map((d: { field: string }) => d.field).sort()).toEqual(['body.email', 'body.password']);
  });

  it('is refused with 403 when sign-up is off', async () => {
    const closed = await buildTestApp({ env: { ALLOW_SIGNUP: 'false' } });
    try {
      const res = await closed.call({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'x@example.com', password: 'plenty of words 123' } });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    } finally {
      await closed.close();
    }
  });
});

describe('login, me, refresh, logout', () => {
  it('logs in and reads me with memberships', async () => {
    const login = await t.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: t.orgA.ownerEmail, password: TEST_PASSWORD } });
    expect(login.statusCode).toBe(200);
    const me = await t.call({ method: 'GET', url: '/api/v1/auth/me', auth: { token: login.json().tokens.accessToken } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({
      user: expect.objectContaining({ id: t.orgA.ownerId, email: t.orgA.ownerEmail }),
      memberships: [{ organizationId: t.orgA.orgId, role: 'owner' }],
    });
  });

  it('rejects a wrong password and an unknown email alike with 401', async () => {
    for (const payload of [
      { email: t.orgA.ownerEmail, password: 'wrong password' },
      { email: 'nobody@example.com', password: 'whatever1' },
    ]) {
      const res = await t.call({ method: 'POST', url: '/api/v1/auth/login', payload });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED', message: 'Email or password is incorrect' });
    }
  });

  it('answers 401 to a missing, malformed or forged token', async () => {
    expect((await t.call({ method: 'GET', url: '/api/v1/auth/me' })).statusCode).toBe(401);
    expect((await t.call({ method: 'GET', url: '/api/v1/auth/me', auth: { token: 'garbage' } })).statusCode).toBe(401);
    const [h, p] = t.orgA.token.split('.');
    const forged = `${h}.${p}.AAAA`;
    const res = await t.call({ method: 'GET', url: '/api/v1/auth/me', auth: { token: forged } });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('UNAUTHORIZED');
  });

  it('expires access tokens after ACCESS_TOKEN_TTL_S', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const timed = await buildTestApp({ env: { ACCESS_TOKEN_TTL_S: '60' }, clock: { now: () => now } });
    try {
      const login = await timed.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: timed.orgA.ownerEmail, password: TEST_PASSWORD } });
      const token = login.json().tokens.accessToken;
      expect(login.json().tokens.expiresIn).toBe(60);
      expect((await timed.call({ method: 'GET', url: '/api/v1/auth/me', auth: { token } })).statusCode).toBe(200);
      now = new Date(now.getTime() + 61_000);
      expect((await timed.call({ method: 'GET', url: '/api/v1/auth/me', auth: { token } })).statusCode).toBe(401);
    } finally {
      await timed.close();
    }
  });

  it('rotates refresh tokens and revokes the family when a used one comes back', async () => {
    const login = await t.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: t.orgA.ownerEmail, password: TEST_PASSWORD } });
    const first = login.json().tokens.refreshToken;
    const r1 = await t.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: first } });
    expect(r1.statusCode).toBe(200);
    const second = r1.json().tokens.refreshToken;
    expect(second).not.toBe(first);
    expect((await t.call({ method: 'GET', url: '/api/v1/auth/me', auth: { token: r1.json().tokens.accessToken } })).statusCode).toBe(200);

    const reuse = await t.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: first } });
    expect(reuse.statusCode).toBe(401);
    // The thief's reuse also kills the legitimate successor.
    const after = await t.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: second } });
    expect(after.statusCode).toBe(401);
  });

  it('stores refresh tokens and API keys only as hashes', async () => {
    const rows = await t.database.db.select().from(refreshTokens);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows.some((r) => r.tokenHash === t.orgA.refreshToken)).toBe(false);
    const keys = await t.database.db.select().from(apiKeys);
    for (const key of keys) {
      expect(key.keyHash).toMatch(/^[0-9a-f]{64}$/);
      expect(key.keyHash).not.toBe(t.orgA.apiKey);
    }
  });

  it('logout revokes the refresh token', async () => {
    const login = await t.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: t.orgA.ownerEmail, password: TEST_PASSWORD } });
    const { refreshToken } = login.json().tokens;
    expect((await t.call({ method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken } })).statusCode).toBe(204);
    expect((await t.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken } })).statusCode).toBe(401);
  });

  it('/auth/me refuses API keys', async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/auth/me', auth: { apiKey: t.orgA.apiKey } });
    expect(res.statusCode).toBe(403);
  });
});
