import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('organizations', () => {
  it("lists only the caller's organizations", async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/orgs', auth: { token: t.orgA.token } });
    expect(res.statusCode).toBe(200);
    expect(res.json().map((o: { id: string }) => o.id)).toEqual([t.orgA.orgId]);
    const byKey = await t.call({ method: 'GET', url: '/api/v1/orgs', auth: { apiKey: t.orgB.apiKey } });
    expect(byKey.json().map((o: { id: string }) => o.id)).toEqual([t.orgB.orgId]);
  });

  it('creates an organization owned by the caller with a Default project', async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/orgs', auth: { token: t.orgA.token }, payload: { name: 'Second' } });
    expect(res.statusCode).toBe(201);
    const org = res.json();
    expect(org.id).toMatch(/^org_/);
    const projects = await t.call({ method: 'GET', url: `/api/v1/orgs/${org.id}/projects`, auth: { token: t.orgA.token } });
    expect(projects.json()).toEqual([expect.objectContaining({ name: 'Default' })]);
    const list = await t.call({ method: 'GET', url: '/api/v1/orgs', auth: { token: t.orgA.token } });
    expect(list.json()).toHaveLength(2);
    expect((await t.call({ method: 'POST', url: '/api/v1/orgs', auth: { apiKey: t.orgA.apiKey }, payload: { name: 'x' } })).statusCode).toBe(403);
  });

  it('gets an organization; another organization is 404 for sessions and keys', async () => {
    const own = await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgA.orgId}`, auth: { token: t.orgA.token } });
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ id: t.orgA.orgId, name: 'Org A' });
    for (const auth of [{ token: t.orgA.token }, { apiKey: t.orgA.apiKey }]) {
      const res = await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}`, auth });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, error: 'Not Found', code: 'NOT_FOUND' });
    }
    expect((await t.call({ method: 'GET', url: `/api/v1/orgs/org_nope/leads`, auth: { token: t.orgA.token } })).statusCode).toBe(404);
  });
});

describe('projects', () => {
  it('owner creates, viewer and member may not, API keys may not', async () => {
    const res = await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/projects`, auth: { token: t.orgA.token }, payload: { name: 'Launch' } });
    expect(res.statusCode).toBe(201);
    expect(res.json().id).toMatch(/^prj_/);
    for (const role of ['viewer', 'member'] as const) {
      const m = await t.member(t.orgA.orgId, role);
      const denied = await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/projects`, auth: { token: m.token }, payload: { name: 'No' } });
      expect(denied.statusCode).toBe(403);
      expect(denied.json().code).toBe('FORBIDDEN');
      const list = await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgA.orgId}/projects`, auth: { token: m.token } });
      expect(list.statusCode).toBe(200);
    }
    expect(
      (await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/projects`, auth: { apiKey: t.orgA.apiKey }, payload: { name: 'No' } })).statusCode,
    ).toBe(403);
    expect(
      (await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgB.orgId}/projects`, auth: { token: t.orgA.token }, payload: { name: 'No' } })).statusCode,
    ).toBe(404);
  });
});

describe('members', () => {
  it('adds an existing user with a role, who then sees the organization', async () => {
    const other = await t.member(t.orgB.orgId, 'member');
    const me = await t.app.services.auth.getUser(other.userId);
    const res = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgA.orgId}/members`,
      auth: { token: t.orgA.token },
      payload: { email: me!.email, role: 'admin' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ userId: other.userId, role: 'admin' });
    const orgs = await t.call({ method: 'GET', url: '/api/v1/orgs', auth: { token: other.token } });
    expect(orgs.json().map((o: { id: string }) => o.id)).toContain(t.orgA.orgId);
    const again = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgA.orgId}/members`,
      auth: { token: t.orgA.token },
      payload: { email: me!.email, role: 'admin' },
    });
    expect(again.statusCode).toBe(409);
    const list = await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgA.orgId}/members`, auth: { token: t.orgA.token } });
    expect(list.json().map((m: { role: string }) => m.role)).toContain('admin');
  });

  it('404 for an unknown email; 403 for members, viewers and keys; 404 across organizations', async () => {
    const unknown = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgA.orgId}/members`,
      auth: { token: t.orgA.token },
      payload: { email: 'ghost@example.com', role: 'member' },
    });
    expect(unknown.statusCode).toBe(404);
    const m = await t.member(t.orgA.orgId, 'member');
    expect(
      (
        await t.call({
          method: 'POST',
          url: `/api/v1/orgs/${t.orgA.orgId}/members`,
          auth: { token: m.token },
          payload: { email: 'x@example.com', role: 'member' },
        })
      ).statusCode,
    ).toBe(403);
    expect((await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgA.orgId}/members`, auth: { apiKey: t.orgA.apiKey } })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/members`, auth: { token: t.orgA.token } })).statusCode).toBe(404);
  });

  it('an admin cannot add an owner', async () => {
    const admin = await t.member(t.orgA.orgId, 'admin');
    const res = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgA.orgId}/members`,
      auth: { token: admin.token },
      payload: { email: t.orgB.ownerEmail, role: 'owner' },
    });
    expect(res.statusCode).toBe(403);
  });
});

describe('changing and removing members', () => {
  const memberUrl = (orgId: string, userId: string) => `/api/v1/orgs/${orgId}/members/${userId}`;

  it('an owner changes a role and removes a member, who then no longer reaches the organization', async () => {
    const m = await t.member(t.orgA.orgId, 'member');
    const res = await t.call({ method: 'PATCH', url: memberUrl(t.orgA.orgId, m.userId), auth: { token: t.orgA.token }, payload: { role: 'viewer' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ userId: m.userId, role: 'viewer' });
    // A viewer now: writes are refused.
    expect((await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/leads`, auth: { token: m.token }, payload: { name: 'X' } })).statusCode).toBe(
      403,
    );
    const removed = await t.call({ method: 'DELETE', url: memberUrl(t.orgA.orgId, m.userId), auth: { token: t.orgA.token } });
    expect(removed.statusCode).toBe(204);
    expect((await t.call({ url: `/api/v1/orgs/${t.orgA.orgId}/leads`, auth: { token: m.token } })).statusCode).toBe(404);
    expect((await t.call({ method: 'DELETE', url: memberUrl(t.orgA.orgId, m.userId), auth: { token: t.orgA.token } })).statusCode).toBe(404);
  });

  it('the last owner cannot be demoted or removed (409); with a second owner they can', async () => {
    const org = (await t.call({ method: 'POST', url: '/api/v1/orgs', auth: { token: t.orgA.token }, payload: { name: 'Owners' } })).json();
    for (const [method, payload] of [
      ['PATCH', { role: 'admin' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await t.call({ method, url: memberUrl(org.id, t.orgA.ownerId), auth: { token: t.orgA.token }, payload });
      expect(res.statusCode, method).toBe(409);
      expect(res.json()).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('last owner') });
    }
    const second = await t.member(org.id, 'owner');
    const demoted = await t.call({ method: 'PATCH', url: memberUrl(org.id, t.orgA.ownerId), auth: { token: second.token }, payload: { role: 'admin' } });
    expect(demoted.statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: memberUrl(org.id, second.userId), auth: { token: second.token } })).statusCode).toBe(409);
  });

  it('an admin manages members and admins but not owners; members, viewers and keys are refused', async () => {
    const admin = await t.member(t.orgA.orgId, 'admin');
    const m = await t.member(t.orgA.orgId, 'member');
    expect(
      (await t.call({ method: 'PATCH', url: memberUrl(t.orgA.orgId, m.userId), auth: { token: admin.token }, payload: { role: 'admin' } })).statusCode,
    ).toBe(200);
    const promote = await t.call({ method: 'PATCH', url: memberUrl(t.orgA.orgId, m.userId), auth: { token: admin.token }, payload: { role: 'owner' } });
    expect(promote.statusCode).toBe(403);
    expect(
      (await t.call({ method: 'PATCH', url: memberUrl(t.orgA.orgId, t.orgA.ownerId), auth: { token: admin.token }, payload: { role: 'member' } })).statusCode,
    ).toBe(403);
    expect((await t.call({ method: 'DELETE', url: memberUrl(t.orgA.orgId, t.orgA.ownerId), auth: { token: admin.token } })).statusCode).toBe(403);
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    expect((await t.call({ method: 'DELETE', url: memberUrl(t.orgA.orgId, m.userId), auth: { token: viewer.token } })).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: memberUrl(t.orgA.orgId, m.userId), auth: { apiKey: t.orgA.apiKey } })).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: memberUrl(t.orgA.orgId, m.userId), auth: { token: admin.token } })).statusCode).toBe(204);
    // Another organization's member id is not found here.
    expect((await t.call({ method: 'DELETE', url: memberUrl(t.orgA.orgId, t.orgB.ownerId), auth: { token: t.orgA.token } })).statusCode).toBe(404);
  });
});
