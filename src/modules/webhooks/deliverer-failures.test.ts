import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { Receiver } from '../../../test/receiver.ts';
import { rows } from '../../platform/db.ts';
import { webhookEndpoints } from './tables.ts';

/**
 * One delivery round in which an endpoint fails many attempts at once, and passes its 100th
 * consecutive failure (found by the chaos run, issue 31). Each failed attempt was recorded in a
 * transaction of its own, all of the round's at once: each locked its delivery row, then waited for
 * the endpoint's row to count the failure; the one that reached 100 deactivated the endpoint and
 * cancelled its pending deliveries — rows the waiting ones held. On PostgreSQL that is a deadlock per
 * waiting transaction (a second each, deadlock_timeout), the pool's connections all held meanwhile:
 * the instance answered nothing for minutes, the round failed, and the successes of the same round
 * were never recorded (sent again after their lease).
 */
describe('a delivery round with many failures of one endpoint', () => {
  let t: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    t = await buildTestApp({ workers: false, env: { WEBHOOK_RETRY_DELAYS_S: '0,0,0,0', WEBHOOK_TIMEOUT_MS: '5000' } });
    rx = await new Receiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await rx?.stop();
  });

  it('records every attempt, deactivates the endpoint once, and keeps the round’s successes', async () => {
    const base = `/api/v1/orgs/${t.orgA.orgId}`;
    rx.behaviour = (req) => (req.url.startsWith('/failing') ? { status: 503 } : { status: 200 });
    const create = async (path: string) => {
      const res = await t.call({
        method: 'POST',
        url: `${base}/webhook-endpoints`,
        auth: { token: t.orgA.token },
        payload: { url: rx.url(path), events: ['lead.created'] },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    const failing = await create('/failing');
    const answering = await create('/answering');
    // Ten failures from being deactivated.
    await t.database.db.update(webhookEndpoints).set({ consecutiveFailures: 90 }).where(eq(webhookEndpoints.id, failing));

    const imported = await t.call({
      method: 'POST',
      url: `${base}/leads/import`,
      auth: { token: t.orgA.token },
      payload: { rows: Array.from({ length: 90 }, (_, i) => ({ email: `round-${i}@failures.example` })) },
    });
    expect(imported.json()).toMatchObject({ created: 90 });
    const { dispatcher, deliverer } = t.app.services;
    while (await dispatcher.round());

    // One round: the 180 attempts (90 failing, 90 answered) fit in one claim.
    await deliverer.round();

    const byStatus = await rows<{ endpoint_id: string; status: string; n: number }>(
      t.database.db,
      sql`select endpoint_id, status, count(*)::int as n from webhook_deliveries group by endpoint_id, status`,
    );
    const count = (endpoint: string, status: string) => byStatus.find((r) => r.endpoint_id === endpoint && r.status === status)?.n ?? 0;
    // Every answered attempt recorded as such, none left claimed for its lease to end.
    expect(count(answering, 'succeeded')).toBe(90);
    expect(count(answering, 'pending')).toBe(0);
    // The failing endpoint: deactivated at its 100th failure, nothing left pending for it.
    const [ep] = await t.database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, failing));
    expect(ep).toMatchObject({ active: false, disabledReason: '100 consecutive failed deliveries' });
    expect(count(failing, 'pending')).toBe(0);
    expect(count(failing, 'failed')).toBeGreaterThanOrEqual(90);
  }, 60_000);
});

/**
 * Found by the chaos run (issue 31): a receiver that answered every request was deactivated after a
 * hundred "no answer within 5000 ms". A round sent all its attempts to one endpoint at once; those
 * beyond the HTTP client's 64 connections per origin waited for one with their time limit running.
 * Here the receiver takes 400 ms per answer and the limit is 1 s: at 64 at a time, the third wave
 * starts its wait at 0 and ends past the limit.
 */
describe('a slow but healthy receiver and a full round', () => {
  let t: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    t = await buildTestApp({ workers: false, env: { WEBHOOK_RETRY_DELAYS_S: '60', WEBHOOK_TIMEOUT_MS: '1000' } });
    rx = await new Receiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await rx?.stop();
  });

  it('charges no attempt with the time it waited for a connection', async () => {
    const base = `/api/v1/orgs/${t.orgA.orgId}`;
    rx.behaviour = () => ({ status: 200, delayMs: 400 });
    const endpoint = await t.call({
      method: 'POST',
      url: `${base}/webhook-endpoints`,
      auth: { token: t.orgA.token },
      payload: { url: rx.url('/slow'), events: ['lead.created'] },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    await t.call({
      method: 'POST',
      url: `${base}/leads/import`,
      auth: { token: t.orgA.token },
      payload: { rows: Array.from({ length: 200 }, (_, i) => ({ email: `slow-${i}@receiver.example` })) },
    });
    const { dispatcher, deliverer } = t.app.services;
    while (await dispatcher.round());
    await deliverer.round();

    const byStatus = await rows<{ status: string; n: number }>(t.database.db, sql`select status, count(*)::int as n from webhook_deliveries group by status`);
    expect(byStatus).toEqual([{ status: 'succeeded', n: 200 }]);
    expect(rx.received.length).toBe(200);
  }, 60_000);
});
