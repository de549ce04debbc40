import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { SseClient } from '../../../test/sse-client.ts';
import { events } from '../events/tables.ts';
import { api, manual } from '../../../test/workflows.ts';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let w: ReturnType<typeof api>;
let baseUrl: string;

beforeAll(async () => {
  t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '100' } });
  w = api(t);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address() as { port: number };
  baseUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await t.close();
});

const approvalFlow = (params: Record<string, unknown> = {}) =>
  w.create(
    [
      manual,
      { id: 'ask', type: 'flow.approval', params: { title: 'Publish {{ topic }}?', description: 'Check it', ...params } },
      { id: 'yes', type: 'data.set', params: { fields: { outcome: 'approved' } } },
      { id: 'no', type: 'data.set', params: { fields: { outcome: 'rejected' } } },
    ],
    [
      { from: 'start', to: 'ask' },
      { from: 'ask', to: 'yes', output: 'approved' },
      { from: 'ask', to: 'no', output: 'rejected' },
    ],
  );

async function approvalOf(runId: string) {
  return eventually(async () => {
    const res = await t.call({ method: 'GET', url: `${w.base}/approvals`, query: { runId, status: 'PENDING' }, auth: w.auth });
    return res.json().items[0] as { id: string; [k: string]: unknown } | undefined;
  });
}

async function platformEvents(type: string, approvalId: string) {
  const rows = await t.database.db
    .select()
    .from(events)
    .where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, type)));
  return rows.filter((r) => (r.payload as { approvalId: string }).approvalId === approvalId);
}

describe('approvals', () => {
  it('WAITING with an approval, approval.requested event + org stream + notification; approve resumes on approved with editedPayload', async () => {
    const wf = await approvalFlow({ expiresInSeconds: 3600 });
    const stream = await SseClient.open(`${baseUrl}/api/v1/orgs/${t.orgA.orgId}/events`, { authorization: `Bearer ${t.orgA.token}` });
    const queued = await w.run(wf.id, { input: { topic: 'AI' } });
    const waiting = await w.until(queued.id, ['WAITING']);
    expect(w.step(waiting, 'ask')!.status).toBe('WAITING');
    const approval = await approvalOf(queued.id);
    expect(approval).toMatchObject({
      status: 'PENDING',
      title: 'Publish AI?',
      description: 'Check it',
      runId: queued.id,
      nodeId: 'ask',
      payload: [{ topic: 'AI' }],
    });
    expect(new Date(approval.expiresAt as string).getTime()).toBeGreaterThan(Date.now());
    expect((await w.events(queued.id)).at(-1)).toMatchObject({ type: 'node.waiting', nodeId: 'ask' });
    await stream.until(() => stream.events('approval.requested').length > 0 && stream.events('notification').length > 0, 5000);
    expect(stream.events('approval.requested')[0]!.data).toMatchObject({ approvalId: approval.id, title: 'Publish AI?', runId: queued.id, nodeId: 'ask' });
    expect(stream.events('run.status').map((m) => (m.data as { status: string }).status)).toEqual(expect.arrayContaining(['RUNNING', 'WAITING']));
    stream.close();
    expect(await platformEvents('approval.requested', approval.id)).toHaveLength(1);

    const res = await t.call({
      method: 'POST',
      url: `${w.base}/approvals/${approval.id}/approve`,
      auth: w.auth,
      payload: { comment: 'ship it', editedPayload: { topic: 'AI agents' } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'APPROVED',
      decision: 'approved',
      by: `user:${t.orgA.ownerId}`,
      comment: 'ship it',
      editedPayload: { topic: 'AI agents' },
    });
    const run = await w.until(queued.id);
    expect(run.status).toBe('SUCCEEDED');
    expect(w.step(run, 'yes')!.items).toEqual([{ topic: 'AI agents', outcome: 'approved' }]);
    expect(w.step(run, 'no')!.status).toBe('SKIPPED');
    const [resolved] = await platformEvents('approval.resolved', approval.id);
    expect(resolved!.payload).toMatchObject({ decision: 'approved', by: `user:${t.orgA.ownerId}`, comment: 'ship it', editedPayload: { topic: 'AI agents' } });
    expect((await t.call({ method: 'POST', url: `${w.base}/approvals/${approval.id}/reject`, auth: w.auth, payload: {} })).statusCode).toBe(409);
    const notes = (await t.call({ method: 'GET', url: `${w.base}/notifications`, auth: w.auth })).json().items;
    expect(notes.some((n: { kind: string; title: string }) => n.kind === 'approval.requested' && n.title.includes('Publish AI?'))).toBe(true);
  });

  it('reject resumes on rejected', async () => {
    const wf = await approvalFlow();
    const queued = await w.run(wf.id, { input: { topic: 'X' } });
    const approval = await approvalOf(queued.id);
    const res = await t.call({ method: 'POST', url: `${w.base}/approvals/${approval.id}/reject`, auth: w.auth, payload: { comment: 'no' } });
    expect(res.json()).toMatchObject({ status: 'REJECTED', decision: 'rejected', comment: 'no' });
    const run = await w.until(queued.id);
    expect(w.step(run, 'no')!.items).toEqual([{ topic: 'X', outcome: 'rejected' }]);
    expect(w.step(run, 'yes')!.status).toBe('SKIPPED');
  });

  it('expiry follows rejected, decision rejected by system', async () => {
    const wf = await approvalFlow({ expiresInSeconds: 0.3 });
    const queued = await w.run(wf.id, { input: { topic: 'late' } });
    const approval = await approvalOf(queued.id);
    const run = await w.until(queued.id);
    expect(w.step(run, 'no')!.items).toEqual([{ topic: 'late', outcome: 'rejected' }]);
    const after = (await t.call({ method: 'GET', url: `${w.base}/approvals/${approval.id}`, auth: w.auth })).json();
    expect(after).toMatchObject({ status: 'EXPIRED', decision: 'rejected', by: 'system' });
    const [resolved] = await platformEvents('approval.resolved', approval.id);
    expect(resolved!.payload).toMatchObject({ decision: 'rejected', by: 'system' });
    expect((await t.call({ method: 'POST', url: `${w.base}/approvals/${approval.id}/approve`, auth: w.auth, payload: {} })).statusCode).toBe(409);
  });

  it('an approval decided the instant it appears (from the org stream, before the driver has let go) is not lost', async () => {
    const wf = await approvalFlow();
    const stream = await SseClient.open(`${baseUrl}/api/v1/orgs/${t.orgA.orgId}/events`, { authorization: `Bearer ${t.orgA.token}` });
    const runs = await Promise.all([1, 2, 3, 4, 5].map((i) => w.run(wf.id, { input: { topic: `t${i}` } })));
    const ids = new Set(runs.map((r) => r.id));
    const decided = new Set<string>();
    await stream.until(() => {
      for (const m of stream.events('approval.requested')) {
        const data = m.data as { approvalId: string; runId: string };
        if (ids.has(data.runId) && !decided.has(data.approvalId)) {
          decided.add(data.approvalId);
          void t.call({ method: 'POST', url: `${w.base}/approvals/${data.approvalId}/approve`, auth: w.auth, payload: {} });
        }
      }
      return decided.size === 5;
    }, 10_000);
    stream.close();
    for (const r of runs) {
      const run = await w.until(r.id);
      expect(run.status).toBe('SUCCEEDED');
      expect(w.step(run, 'yes')!.items![0]).toMatchObject({ outcome: 'approved' });
    }
  });

  it("agents' approvals (no node) are listed and decided without touching workflow runs", async () => {
    const { approvals } = t.app.services;
    const created = await t.database.db.transaction(async (tx) =>
      approvals.request(tx as never, {
        orgId: t.orgA.orgId,
        projectId: t.orgA.projectId,
        title: 'Agent wants to send',
        description: 'ok?',
        runId: 'arun_fake',
        nodeId: null,
        expiresAt: null,
        payload: { a: 1 },
      }),
    );
    const list = await t.call({ method: 'GET', url: `${w.base}/approvals`, query: { status: 'PENDING' }, auth: w.auth });
    expect(list.json().items.map((a: { id: string }) => a.id)).toContain(created.id);
    const res = await t.call({ method: 'POST', url: `${w.base}/approvals/${created.id}/approve`, auth: w.auth, payload: {} });
    expect(res.json()).toMatchObject({ status: 'APPROVED', runId: 'arun_fake', nodeId: null });
    const bad = await t.call({ method: 'GET', url: `${w.base}/approvals`, query: { status: 'MAYBE' }, auth: w.auth });
    expect(bad.statusCode).toBe(400);
  });
});
