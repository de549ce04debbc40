import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { runAgent, type Auth } from '../../../test/agents.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { Receiver } from '../../../test/receiver.ts';
import { budgets } from './tables.ts';

/**
 * CONTRACT §6: `budget.warning` once per month and budget when the month's spending reaches 80 % of
 * the limit, whether a spend or a lower limit (at the PUT) takes it there; `budget.exceeded` likewise
 * at 100 %. A budget is the limit's value: another limit is announced on its own.
 */
const PRICE = 100; // USD per million tokens, input and output, for the offline model
let t: TestApp;
let rx: Receiver;
const owner = (): Auth => ({ token: t.orgA.token });
const base = () => `/api/v1/orgs/${t.orgA.orgId}`;
const setBudget = async (monthlyLimitUsd: number | null) => {
  const res = await t.call({ method: 'PUT', url: `${base()}/budget`, auth: owner(), payload: { monthlyLimitUsd } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const used = async () => (await t.call({ method: 'GET', url: `${base()}/budget`, auth: owner() })).json().usedUsd as number;
const alerts = async () => ({ warning: await eventsOf(t, t.orgA.orgId, 'budget.warning'), exceeded: await eventsOf(t, t.orgA.orgId, 'budget.exceeded') });
const notes = async (kind: string) =>
  (
    (await t.call({ method: 'GET', url: `${base()}/notifications`, auth: owner(), query: { pageSize: '100' } })).json().items as {
      kind: string;
      title: string;
      body: string;
    }[]
  ).filter((n) => n.kind === kind);
/** What the webhook receiver got, by event type (each event once: a delivery is at-least-once). */
const delivered = (type: string) => [
  ...new Map(
    rx.received
      .map((r) => r.json as { id: string; type: string; payload: Record<string, unknown> })
      .filter((e) => e.type === type)
      .map((e) => [e.id, e]),
  ).values(),
];

beforeAll(async () => {
  rx = await new Receiver().start();
  t = await buildTestApp({ env: { MODEL_PRICES: JSON.stringify({ offline: { inputPerMTok: PRICE, outputPerMTok: PRICE } }) } });
  const hook = await t.call({
    method: 'POST',
    url: `${base()}/webhook-endpoints`,
    auth: owner(),
    payload: { url: rx.url(), events: ['budget.warning', 'budget.exceeded'] },
  });
  expect(hook.statusCode, hook.body).toBe(201);
  // This month's spending: one agent run.
  expect((await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Spend' })).status).toBe('succeeded');
});
afterAll(async () => {
  await t.close();
  await rx.stop();
});
beforeEach(async () => {
  // Each test starts without a limit, and with no alert of this month sent.
  await setBudget(null);
  await t.database.db.execute(sql`delete from budget_alerts`);
});

describe('a limit set at or below what the month has spent', () => {
  it('at 90 %: budget.warning at the PUT (event, webhook, notification), once however often it is set', async () => {
    const spent = await used();
    expect(spent).toBeGreaterThan(0);
    const before = await alerts();
    const limit = Math.round((spent / 0.9) * 1e6) / 1e6;
    const answer = await setBudget(limit);
    expect(answer).toMatchObject({ monthlyLimitUsd: limit, usedUsd: spent });
    const after = await alerts();
    expect(after.warning).toHaveLength(before.warning.length + 1);
    expect(after.exceeded).toHaveLength(before.exceeded.length);
    const warning = after.warning.at(-1)!;
    expect(warning.projectId).toBeNull();
    expect(warning.payload).toEqual({ scope: 'organization', limitUsd: limit, usedUsd: spent, pct: answer.pct });
    expect(warning.payload.pct).toBeGreaterThanOrEqual(89.9);
    expect(warning.payload.pct).toBeLessThan(100);
    // The owner's notification, as a spend-triggered warning gives.
    expect((await notes('budget.warning')).find((n) => n.body === `${spent} USD of ${limit} USD used this month.`)).toMatchObject({
      title: expect.stringMatching(/^Monthly budget at (89|90) %$/),
    });
    // The webhook receiver gets it.
    const hook = await eventually(() => delivered('budget.warning').find((e) => e.id === warning.id));
    expect(hook.payload).toEqual(warning.payload);

    // The same limit again (a second save, or another instance): nothing more.
    await setBudget(limit);
    expect((await alerts()).warning).toHaveLength(after.warning.length);
  });

  it('at 100 % or past it: budget.warning and budget.exceeded (no runId) at the PUT; the next run is refused without another', async () => {
    const spent = await used();
    const before = await alerts();
    const limit = Math.round((spent / 2) * 1e6) / 1e6;
    await setBudget(limit);
    const after = await alerts();
    expect(after.warning).toHaveLength(before.warning.length + 1);
    expect(after.exceeded).toHaveLength(before.exceeded.length + 1);
    expect(after.warning.at(-1)!.payload).toMatchObject({ scope: 'organization', limitUsd: limit, usedUsd: spent, pct: 200 });
    const exceeded = after.exceeded.at(-1)!;
    expect(exceeded.projectId).toBeNull();
    expect(exceeded.payload).toEqual({ scope: 'organization', limitUsd: limit, usedUsd: spent });
    expect((await notes('budget.exceeded')).find((n) => n.body === `Monthly budget of ${limit} USD reached (${spent} USD).`)).toMatchObject({
      title: 'Monthly budget exceeded',
    });
    await eventually(() => delivered('budget.exceeded').find((e) => e.id === exceeded.id));

    // The next run is refused on the spent budget: the alerts already went out.
    const refused = await t.call({ method: 'POST', url: `${base()}/agents/run`, auth: owner(), payload: { type: 'REPORT_WRITER', task: 'x' } });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('BUDGET_EXCEEDED');
    const later = await alerts();
    expect(later.warning).toHaveLength(after.warning.length);
    expect(later.exceeded).toHaveLength(after.exceeded.length);
  });

  it('another limit is another budget: announced on its own; going back to one already announced this month, or a limit under 80 %, sends nothing', async () => {
    const spent = await used();
    const count = async (): Promise<[number, number]> => {
      const a = await alerts();
      return [a.warning.length, a.exceeded.length];
    };
    const [w0, e0] = await count();
    const ninety = Math.round((spent / 0.9) * 1e6) / 1e6;
    await setBudget(ninety);
    expect(await count()).toEqual([w0 + 1, e0]);
    // Lowered past the spending: its own warning and exceeded.
    await setBudget(spent);
    expect(await count()).toEqual([w0 + 2, e0 + 1]);
    expect((await alerts()).exceeded.at(-1)!.payload).toEqual({ scope: 'organization', limitUsd: spent, usedUsd: spent });
    // Back to 90 %: already announced this month.
    await setBudget(ninety);
    expect(await count()).toEqual([w0 + 2, e0 + 1]);
    // Raised well above the spending, or removed: nothing.
    await setBudget(spent * 10);
    await setBudget(null);
    expect(await count()).toEqual([w0 + 2, e0 + 1]);
    // The webhooks: each of these alerts, with its payload.
    const sent = await alerts();
    for (const event of [...sent.warning.slice(w0), ...sent.exceeded.slice(e0)]) {
      expect((await eventually(() => delivered(event.type).find((e) => e.id === event.id))).payload).toEqual(event.payload);
    }
  });
});

describe('a limit stored before the PUT announced it (an installation upgraded in mid-month)', () => {
  // The limit is written as an older version stored it: no alert was sent for it.
  const storeLimit = (monthlyLimitUsd: number) =>
    t.database.db.insert(budgets).values({ orgId: t.orgA.orgId, monthlyLimitUsd }).onConflictDoUpdate({ target: budgets.orgId, set: { monthlyLimitUsd } });

  it("the run refused because the budget is spent (429) brings the month's warning and exceeded, once", async () => {
    const spent = await used();
    const limit = Math.round((spent / 2) * 1e6) / 1e6;
    await storeLimit(limit);
    const before = await alerts();
    for (let i = 0; i < 2; i++) {
      const refused = await t.call({ method: 'POST', url: `${base()}/agents/run`, auth: owner(), payload: { type: 'REPORT_WRITER', task: 'x' } });
      expect(refused.statusCode).toBe(429);
    }
    const after = await alerts();
    expect(after.warning).toHaveLength(before.warning.length + 1);
    expect(after.exceeded).toHaveLength(before.exceeded.length + 1);
    expect(after.exceeded.at(-1)!.payload).toEqual({ scope: 'organization', limitUsd: limit, usedUsd: spent });
  });

  it("a run stopped on its estimate just under the limit brings the month's warning with its own budget.exceeded", async () => {
    const spent = await used();
    // 99.99 %: a run may start, and its first model call would pass the limit.
    const limit = Math.round((spent / 0.9999) * 1e6) / 1e6;
    await storeLimit(limit);
    const before = await alerts();
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Stopped on its estimate' });
    expect(run.status).toBe('budget_exceeded');
    expect(await used()).toBe(spent);
    const after = await alerts();
    expect(after.warning).toHaveLength(before.warning.length + 1);
    expect(after.warning.at(-1)!.payload).toMatchObject({ scope: 'organization', limitUsd: limit, usedUsd: spent });
    // The run's own exceeded (with its id); the month has not reached 100 %, so no other.
    expect(after.exceeded.slice(before.exceeded.length).map((e) => e.payload)).toEqual([
      { scope: 'organization', limitUsd: limit, usedUsd: spent, runId: run.id, agentRunId: run.id },
    ]);
  });
});
