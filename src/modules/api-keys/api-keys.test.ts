import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

const base = () => `/api/v1/orgs/${t.orgA.orgId}`;

describe('API keys', () => {
  it('shows the key once at creation, never in the list, and it works at once', async () => {
    const res = await t.call({ method: 'POST', url: `${base()}/api-keys`, auth: { token: t.orgA.token }, payload: { name: 'crm', scopes: ['leads:read'] } });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({ name: 'crm', scopes: ['leads:read'] });
    expect(created.id).toMatch(/^key_/);
    expect(created.key.startsWith(created.prefix)).toBe(true);
    const list = await t.call({ method: 'GET', url: `${base()}/api-keys`, auth: { token: t.orgA.token } });
    expect(list.statusCode).toBe(200);
    expect(JSON.stringify(list.json())).not.toContain(created.key);
    expect(list.json().find((k: { id: string }) => k.id === created.id)).toMatchObject({ prefix: created.prefix });
    expect((await t.call({ method: 'GET', url: `${base()}/leads`, auth: { apiKey: created.key } })).statusCode).toBe(200);
  });

  it('a missing scope gives 403 INSUFFICIENT_SCOPE', async () => {
    const key = await t.key(t.orgA.orgId, ['leads:read']);
    const res = await t.call({ method: 'POST', url: `${base()}/leads`, auth: { apiKey: key }, payload: { name: 'x' } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ statusCode: 403, code: 'INSUFFICIENT_SCOPE' });
  });

  it('a key used under another organization gives 404', async () => {
    const res = await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/leads`, auth: { apiKey: t.orgA.apiKey } });
    expect(res.statusCode).toBe(404);
  });

  it("deleting a key stops it at once; deleting again or another org's key is 404", async () => {
    const created = (
      await t.call({ method: 'POST', url: `${base()}/api-keys`, auth: { token: t.orgA.token }, payload: { name: 'tmp', scopes: ['*'] } })
    ).json();
    expect((await t.call({ method: 'DELETE', url: `${base()}/api-keys/${created.id}`, auth: { token: t.orgA.token } })).statusCode).toBe(204);
    const after = await t.call({ method: 'GET', url: `${base()}/leads`, auth: { apiKey: created.key } });
    expect(after.statusCode).toBe(401);
    expect(after.json().code).toBe('UNAUTHORIZED');
    expect((await t.call({ method: 'DELETE', url: `${base()}/api-keys/${created.id}`, auth: { token: t.orgA.token } })).statusCode).toBe(404);
    const bKey = (
      await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgB.orgId}/api-keys`, auth: { token: t.orgB.token }, payload: { name: 'b', scopes: ['*'] } })
    ).json();
    expect((await t.call({ method: 'DELETE', url: `${base()}/api-keys/${bKey.id}`, auth: { token: t.orgA.token } })).statusCode).toBe(404);
  });

  it('only owners and admins manage keys; unknown scopes are 400', async () => {
    const member = await t.member(t.orgA.orgId, 'member');
    expect((await t.call({ method: 'GET', url: `${base()}/api-keys`, auth: { token: member.token } })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `${base()}/api-keys`, auth: { token: member.token }, payload: { name: 'x', scopes: ['*'] } })).statusCode).toBe(
      403,
    );
    expect(
      (await t.call({ method: 'POST', url: `${base()}/api-keys`, auth: { apiKey: t.orgA.apiKey }, payload: { name: 'x', scopes: ['*'] } })).statusCode,
    ).toBe(403);
    const admin = await t.member(t.orgA.orgId, 'admin');
    expect((await t.call({ method: 'GET', url: `${base()}/api-keys`, auth: { token: admin.token } })).statusCode).toBe(200);
    const bad = await t.call({ method: 'POST', url: `${base()}/api-keys`, auth: { token: t.orgA.token }, payload: { name: 'x', scopes: ['root'] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('VALIDATION_ERROR');
    const otherProject = await t.call({
      method: 'POST',
      url: `${base()}/api-keys`,
      auth: { token: t.orgA.token },
      payload: { name: 'x', scopes: ['*'], projectId: t.orgB.projectId },
    });
    expect(otherProject.statusCode).toBe(404);
  });

  it('a key bound to a project only sees that project', async () => {
    const project = (await t.call({ method: 'POST', url: `${base()}/projects`, auth: { token: t.orgA.token }, payload: { name: 'Bound' } })).json();
    const key = await t.key(t.orgA.orgId, ['*'], project.id);
    const inDefault = (await t.call({ method: 'POST', url: `${base()}/leads`, auth: { token: t.orgA.token }, payload: { name: 'Default person' } })).json();
    const created = await t.call({ method: 'POST', url: `${base()}/leads`, auth: { apiKey: key }, payload: { name: 'Bound person' } });
    expect(created.json().projectId).toBe(project.id);
    expect((await t.call({ method: 'GET', url: `${base()}/leads/${inDefault.id}`, auth: { apiKey: key } })).statusCode).toBe(404);
    const list = await t.call({ method: 'GET', url: `${base()}/leads`, auth: { apiKey: key } });
    expect(list.json().items.map((l: { name: string }) => l.name)).toEqual(['Bound person']);
    const projects = await t.call({ method: 'GET', url: `${base()}/projects`, auth: { apiKey: key } });
    expect(projects.json().map((p: { id: string }) => p.id)).toEqual([project.id]);
  });
});
