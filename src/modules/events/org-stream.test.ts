import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../app.ts';
import { buildTestApp, testConfig, type TestApp } from '../../../test/harness.ts';
import { onPostgres } from '../../../test/database.ts';
import { SseClient } from '../../../test/sse-client.ts';
import { Receiver } from '../../../test/receiver.ts';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await buildTestApp({ env: { SSE_PING_MS: '100' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('organization stream', () => {
  it('streams a lead created while connected as lead.created, and nothing from before', async () => {
    await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/leads`, auth: { token: t.orgA.token }, payload: { name: 'Before' } });
    await new Promise((r) => setTimeout(r, 300));
    const sse = await SseClient.open(`${baseUrl}/events`, bearer(t.orgA.token));
    try {
      expect(sse.status).toBe(200);
      expect(sse.contentType).toMatch(/^text\/event-stream/);
      const lead = (
        await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/leads`, auth: { token: t.orgA.token }, payload: { name: 'During' } })
      ).json();
      await sse.waitForEvent('lead.created');
      const events = sse.events('lead.created');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ type: 'lead.created', organizationId: t.orgA.orgId, payload: { lead: { id: lead.id, name: 'During' } } });
      expect(Number(events[0]!.id)).toBeGreaterThan(0);
    } finally {
      sse.close();
    }
  });

  it('sends : ping comments every SSE_PING_MS', async () => {
    const sse = await SseClient.open(`${baseUrl}/events`, bearer(t.orgA.token));
    try {
      await sse.until(() => sse.messages.filter((m) => m.comment === 'ping').length >= 2, 3000, 'two pings');
    } finally {
      sse.close();
    }
  });

  it('accepts access_token in the query and API keys with workflows:read or conversations:read', async () => {
    for (const [url, headers] of [
      [`${baseUrl}/events?access_token=${t.orgA.token}`, {}],
      [`${baseUrl}/events`, { 'x-api-key': await t.key(t.orgA.orgId, ['workflows:read']) }],
      [`${baseUrl}/events`, { 'x-api-key': await t.key(t.orgA.orgId, ['conversations:read']) }],
    ] as const) {
      const sse = await SseClient.open(url, headers);
      expect(sse.status, url).toBe(200);
      sse.close();
    }
  });

  it('answers 401, 403 and 404 as JSON before the stream opens', async () => {
    const none = await SseClient.open(`${baseUrl}/events`);
    expect(none.status).toBe(401);
    expect(none.errorBody).toMatchObject({ code: 'UNAUTHORIZED' });
    const bad = await SseClient.open(`${baseUrl}/events?access_token=nope`);
    expect(bad.status).toBe(401);
    const scoped = await SseClient.open(`${baseUrl}/events`, { 'x-api-key': await t.key(t.orgA.orgId, ['leads:read']) });
    expect(scoped.status).toBe(403);
    expect(scoped.errorBody).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    const other = await SseClient.open(`${baseUrl}/events`, bearer(t.orgB.token));
    expect(other.status).toBe(404);
    expect(other.errorBody).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('pushes notifications, and a user-addressed one only to that user', async () => {
    const member = await t.member(t.orgA.orgId, 'member');
    const ownerSse = await SseClient.open(`${baseUrl}/events`, bearer(t.orgA.token));
    const memberSse = await SseClient.open(`${baseUrl}/events`, bearer(member.token));
    try {
      await t.app.services.notifications.notify({
        orgId: t.orgA.orgId,
        userId: t.orgA.ownerId,
        kind: 'test.personal',
        title: 'For the owner',
        body: 'only you',
      });
      await t.app.services.notifications.notify({ orgId: t.orgA.orgId, kind: 'test.all', title: 'For everyone', body: 'all of you' });
      await memberSse.until(() => memberSse.events('notification').length >= 1, 5000, 'member notification');
      await ownerSse.until(() => ownerSse.events('notification').length >= 2, 5000, 'owner notifications');
      expect(ownerSse.events('notification').map((m) => (m.data as { title: string }).title)).toEqual(['For the owner', 'For everyone']);
      await new Promise((r) => setTimeout(r, 200));
      expect(memberSse.events('notification').map((m) => (m.data as { title: string }).title)).toEqual(['For everyone']);
    } finally {
      ownerSse.close();
      memberSse.close();
    }
  });

  it.skipIf(!onPostgres)('reaches a client of another app instance sharing the PostgreSQL database', async () => {
    const second = await buildApp({ config: testConfig({ SSE_PING_MS: '1000' }), database: t.database, logger: false, workers: false });
    await second.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(second.server.address() as AddressInfo).port}/api/v1/orgs/${t.orgA.orgId}/events`;
    const sse = await SseClient.open(url, bearer(t.orgA.token));
    try {
      const lead = (
        await t.call({
          method: 'POST',
          url: `/api/v1/orgs/${t.orgA.orgId}/leads`,
          auth: { token: t.orgA.token },
          payload: { name: 'Across instances', custom: { big: 'y'.repeat(20_000) } },
        })
      ).json();
      await sse.waitForEvent('lead.created');
      expect(sse.events('lead.created')[0]!.data).toMatchObject({ payload: { lead: { id: lead.id } } });
      await t.app.services.notifications.notify({ orgId: t.orgA.orgId, kind: 'test.cross', title: 'Across', body: 'x' });
      await sse.waitForEvent('notification');
    } finally {
      sse.close();
      await second.close();
    }
  });
});

describe('notifications API', () => {
  it('lists newest first, filters unread, marks read; other organizations cannot see or mark', async () => {
    const { notifications } = t.app.services;
    const n1 = await notifications.notify({ orgId: t.orgA.orgId, kind: 'k', title: 'First', body: 'b', link: '/x' });
    const n2 = await notifications.notify({ orgId: t.orgA.orgId, kind: 'k', title: 'Second', body: 'b' });
    const url = `/api/v1/orgs/${t.orgA.orgId}/notifications`;
    const list = (await t.call({ method: 'GET', url, auth: { token: t.orgA.token }, query: { kind: 'k' } })).json();
    expect(list.items.map((n: { id: string }) => n.id)).toEqual([n2.id, n1.id]);
    expect(list.items[1]).toMatchObject({ title: 'First', body: 'b', link: '/x', read: false });
    expect(list.items[1].id).toMatch(/^ntf_/);
    expect((await t.call({ method: 'POST', url: `${url}/${n1.id}/read`, auth: { token: t.orgA.token } })).statusCode).toBe(204);
    const unread = (await t.call({ method: 'GET', url, auth: { token: t.orgA.token }, query: { unread: 'true', kind: 'k' } })).json();
    expect(unread.items.map((n: { id: string }) => n.id)).toEqual([n2.id]);
    expect((await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgB.orgId}/notifications/${n2.id}/read`, auth: { token: t.orgB.token } })).statusCode).toBe(
      404,
    );
    expect((await t.call({ method: 'POST', url: `${url}/${n2.id}/read`, auth: { token: t.orgB.token } })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url, auth: { apiKey: await t.key(t.orgA.orgId, ['leads:read']) } })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url })).statusCode).toBe(401);
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    expect((await t.call({ method: 'POST', url: `${url}/${n2.id}/read`, auth: { token: viewer.token } })).statusCode).toBe(204);
  });
});

describe('dispatch across a restart', () => {
  it('delivers every event committed before the process stopped, none lost, none twice', async () => {
    const rx = await new Receiver().start();
    const cold = await buildTestApp({ workers: false });
    try {
      const url = `/api/v1/orgs/${cold.orgA.orgId}`;
      await cold.call({
        method: 'POST',
        url: `${url}/webhook-endpoints`,
        auth: { token: cold.orgA.token },
        payload: { url: rx.url(), events: ['lead.created'] },
      });
      const ids: string[] = [];
      for (let i = 0; i < 25; i++)
        ids.push((await cold.call({ method: 'POST', url: `${url}/leads`, auth: { token: cold.orgA.token }, payload: { name: `queued ${i}` } })).json().id);
      // A transaction that rolls back leaves no event behind.
      await cold.database.db
        .transaction(async (tx) => {
          await cold.app.services.events.record(tx as never, { orgId: cold.orgA.orgId, type: 'lead.created', payload: { lead: { id: 'lead_rolled_back' } } });
          tx.rollback();
        })
        .catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.received).toHaveLength(0);
      const restarted = await cold.restart({ workers: true });
      await rx.waitFor(25);
      await new Promise((r) => setTimeout(r, 500));
      expect(rx.received).toHaveLength(25);
      const got = rx.received.map((r) => (r.json as { payload: { lead: { id: string } } }).payload.lead.id).sort();
      expect(got).toEqual([...ids].sort());
      expect(await restarted.services.dispatcher.pending()).toBe(0);
      await restarted.close();
    } finally {
      await cold.database.close();
      await rx.stop();
    }
  });

  it('continues pending retry attempts after a restart', async () => {
    const rx = await new Receiver().start();
    rx.behaviour = () => ({ status: 503 });
    const app = await buildTestApp({ env: { WEBHOOK_RETRY_DELAYS_S: '1,1,1,1' } });
    try {
      const url = `/api/v1/orgs/${app.orgA.orgId}`;
      const ep = (
        await app.call({
          method: 'POST',
          url: `${url}/webhook-endpoints`,
          auth: { token: app.orgA.token },
          payload: { url: rx.url(), events: ['lead.created'] },
        })
      ).json();
      await app.call({ method: 'POST', url: `${url}/leads`, auth: { token: app.orgA.token }, payload: { name: 'Retried across a restart' } });
      await rx.waitFor(1);
      // The first attempt failed and the second is scheduled; the process stops before it is due.
      const restarted = await app.restart();
      rx.behaviour = () => ({ status: 200 });
      await rx.waitFor(2);
      const list = await restarted.inject({
        method: 'GET',
        url: `${url}/webhook-endpoints/${ep.id}/deliveries`,
        headers: { authorization: `Bearer ${app.orgA.token}` },
      });
      const attempts = (list.json().items as { attempt: number; status: string }[]).map((d) => [d.attempt, d.status]);
      expect(attempts).toContainEqual([1, 'failed']);
      await eventually(async () => {
        const again = await restarted.inject({
          method: 'GET',
          url: `${url}/webhook-endpoints/${ep.id}/deliveries`,
          headers: { authorization: `Bearer ${app.orgA.token}` },
          query: { status: 'succeeded' },
        });
        return again.json().total === 1;
      });
      expect((rx.received[0]!.json as { id: string }).id).toBe((rx.received[1]!.json as { id: string }).id);
      await restarted.close();
    } finally {
      await app.database.close();
      await rx.stop();
    }
  });
});
