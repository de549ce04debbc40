import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../src/modules/api-keys/service.ts';
import type { Access } from '../src/platform/context.ts';
import type { RouteRecord } from '../src/platform/http/route-table.ts';
import { buildTestApp, type Credentials, type TestApp } from './harness.ts';

/**
 * The organization boundary and the access rules, checked on every route of the route table rather
 * than by hand per module (CONTRACT §2): a route added tomorrow is covered without a line here.
 * Every refusal is decided before the handler runs, so path parameters other than the organization
 * are placeholders and no request carries a body.
 */

const ORG_PREFIX = '/api/v1/orgs/:orgId';

describe('access on every organization route', () => {
  let t: TestApp;
  let routes: RouteRecord[];
  /** For each scope, a key of organization A that has only that scope. */
  const keyWith = new Map<string, string>();
  let viewer: string;
  let projectKey: string;

  beforeAll(async () => {
    t = await buildTestApp({ workers: false });
    routes = t.app.routeTable.filter((r) => r.url === ORG_PREFIX || r.url.startsWith(`${ORG_PREFIX}/`));
    for (const scope of SCOPES.filter((s) => s !== '*')) keyWith.set(scope, await t.key(t.orgA.orgId, [scope]));
    viewer = (await t.member(t.orgA.orgId, 'viewer')).token;
    projectKey = await t.key(t.orgA.orgId, ['*'], t.orgA.projectId);
  });
  afterAll(() => t.close());

  const urlOf = (route: RouteRecord) =>
    route.url
      .replace(':orgId', t.orgA.orgId)
      .replace(/:(\w+)/g, (_, name: string) => `placeholder-${name}`)
      .replace(/\*$/, 'placeholder');

  /** Each route that does not answer `status` (and `code`, when given), as "METHOD url → status code". */
  async function refusals(
    pick: (route: RouteRecord, access: Access) => Credentials | null,
    status: number,
    code?: (access: Access) => string,
  ): Promise<{ checked: number; wrong: string[] }> {
    let checked = 0;
    const wrong: string[] = [];
    for (const route of routes) {
      const access = route.config.access ?? {};
      const auth = pick(route, access);
      if (!auth) continue;
      checked++;
      const res = await t.call({ method: route.method as 'GET', url: urlOf(route), auth });
      const answered = res.json().code;
      if (res.statusCode !== status || (code && answered !== code(access))) wrong.push(`${route.method} ${route.url} → ${res.statusCode} ${answered ?? ''}`);
    }
    return { checked, wrong };
  }

  const wanted = (access: Access) => (access.scope === undefined ? [] : [access.scope].flat());

  it('the route table holds the organization routes', () => {
    expect(routes.length).toBeGreaterThan(50);
  });

  it('no credentials get 401 on every route', async () => {
    const { checked, wrong } = await refusals(
      () => ({}),
      401,
      () => 'UNAUTHORIZED',
    );
    expect(wrong).toEqual([]);
    expect(checked).toBe(routes.length);
  });

  it("another organization's owner gets 404 on every route", async () => {
    const { checked, wrong } = await refusals(
      () => ({ token: t.orgB.token }),
      404,
      () => 'NOT_FOUND',
    );
    expect(wrong).toEqual([]);
    expect(checked).toBe(routes.length);
  });

  it("another organization's API key, with every scope, gets 404 on every route", async () => {
    const { wrong } = await refusals(
      () => ({ apiKey: t.orgB.apiKey }),
      404,
      () => 'NOT_FOUND',
    );
    expect(wrong).toEqual([]);
  });

  it('a key without the scope a route needs gets 403; session-only routes refuse every key', async () => {
    const { checked, wrong } = await refusals(
      (_route, access) => {
        if (access.admin || access.sessionOnly) return { apiKey: t.orgA.apiKey };
        const needs = wanted(access);
        if (needs.length === 0) return null;
        const other = [...keyWith.keys()].find((scope) => !needs.includes(scope));
        return other ? { apiKey: keyWith.get(other)! } : null;
      },
      403,
      (access) => (access.admin || access.sessionOnly ? 'FORBIDDEN' : 'INSUFFICIENT_SCOPE'),
    );
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(routes.length / 2);
  });

  it('a viewer gets 403 on every route that writes', async () => {
    const { wrong } = await refusals((_route, access) => {
      const writes = access.write ?? wanted(access).some((s) => s.endsWith(':write'));
      return writes || access.admin || access.manage ? { token: viewer } : null;
    }, 403);
    expect(wrong).toEqual([]);
  });

  it('a key bound to a project gets 403 on every organization-level route', async () => {
    const { checked, wrong } = await refusals((_route, access) => (access.orgLevel ? { apiKey: projectKey } : null), 403);
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });
});
