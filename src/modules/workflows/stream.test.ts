import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { SseClient } from '../../../test/sse-client.ts';
import { registerNode } from './nodes/registry.ts';
import { main } from './nodes/types.ts';
import { api, manual, type Node } from '../../../test/workflows.ts';
import { eventually } from '../../../test/helpers.ts';

// Fixture: a node that writes many large log events at once (to overflow a slow client).
const unregisterChatty = registerNode({
  type: 'test.chatty',
  category: 'test',
  description: 'writes many log events',
  params: Type.Object({ count: Type.Integer(), size: Type.Integer() }),
  outputs: ['main'],
  async execute(ctx, exec) {
    const { count, size } = await exec.params();
    const ref = { id: ctx.runId, orgId: ctx.orgId, projectId: ctx.projectId, workflowId: ctx.workflowId };
    const events = Array.from({ length: count }, (_, i) => ({ type: 'log' as const, nodeId: ctx.nodeId, level: 'info', message: `${i} ${'x'.repeat(size)}` }));
    // Past the node's ports, straight to the run writer of the app executing it: one change, many events.
    await chattyApp.app.services.workflowRuns.writer.apply(ref, { events });
    return main(exec.items);
  },
});

let t: TestApp;
/** The app whose driver executes test.chatty. */
let chattyApp: TestApp;
let w: ReturnType<typeof api>;
let base: string;

async function listen(app: TestApp) {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.app.server.address() as { port: number }).port}`;
}

beforeAll(async () => {
  t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '100', SSE_PING_MS: '100' } });
  w = api(t);
  base = await listen(t);
});
afterAll(async () => {
  await t.close();
  unregisterChatty();
});

const streamUrl = (runId: string, query = '', orgId = t.orgA.orgId) => `${base}/api/v1/orgs/${orgId}/runs/${runId}/events${query}`;
const bearer = () => ({ authorization: `Bearer ${t.orgA.token}` });

function seqs(client: SseClient) {
  return client
    .events()
    .filter((m) => m.event !== 'reset')
    .map((m) => Number(m.id));
}

describe('run stream', () => {
  it('replays the history, then goes live with no gap or duplicate, ids = sequence, and closes after run.finished', async () => {
    const wf = await w.create(
      [
        manual,
        { id: 'ask', type: 'flow.approval', params: { title: 'ok?' } },
        { id: 'after', type: 'data.set', params: { fields: { secretItem: 'never-in-stream' } } },
      ],
      [
        { from: 'start', to: 'ask' },
        { from: 'ask', to: 'after', output: 'approved' },
      ],
    );
    const queued = await w.run(wf.id);
    await w.until(queued.id, ['WAITING']);
    const client = await SseClient.open(streamUrl(queued.id), bearer());
    expect(client.status).toBe(200);
    expect(client.contentType).toContain('text/event-stream');
    await client.waitForEvent('node.waiting');
    expect(client.events().map((m) => m.event)).toEqual(['run.started', 'node.started', 'node.finished', 'node.started', 'node.waiting']);
    expect(client.events('node.waiting')[0]!.data).toMatchObject({ type: 'node.waiting', runId: queued.id, nodeId: 'ask' });
    const approval = (await t.call({ method: 'GET', url: `${w.base}/approvals`, query: { runId: queued.id }, auth: w.auth })).json().items[0];
    await t.call({ method: 'POST', url: `${w.base}/approvals/${approval.id}/approve`, auth: w.auth, payload: {} });
    await client.waitForEnd();
    const all = await w.events(queued.id);
    expect(seqs(client)).toEqual(all.map((e) => e.seq));
    expect(client.events().at(-1)).toMatchObject({ event: 'run.finished', data: { status: 'SUCCEEDED', runId: queued.id } });
    expect(client.events().map((m) => m.data)).toEqual(all.map(({ seq: _seq, ...data }) => data));
    expect(JSON.stringify(client.messages)).not.toContain('never-in-stream');
  });

  it('no gap or duplicate while a run is executing during the connection', async () => {
    const nodes: Node[] = [manual];
    for (let i = 0; i < 15; i++) nodes.push({ id: `n${i}`, type: 'data.set', params: { fields: { i } } });
    const edges = nodes.slice(1).map((n, i) => ({ from: nodes[i]!.id, to: n.id }));
    const wf = await w.create(nodes, edges);
    const runs = await Promise.all([0, 1, 2, 3].map(() => w.run(wf.id)));
    const clients = await Promise.all(
      runs.map(async (r, i) => {
        await new Promise((res) => setTimeout(res, i * 15));
        return SseClient.open(streamUrl(r.id), bearer());
      }),
    );
    for (const [i, client] of clients.entries()) {
      await client.waitForEnd();
      const all = await w.events(runs[i]!.id);
      expect(seqs(client)).toEqual(all.map((e) => e.seq));
      expect(all.at(-1)!.type).toBe('run.finished');
    }
  });

  it('an ended run gives its history and closes; since=<id> skips up to that id; since past the end closes at once', async () => {
    const wf = await w.create([manual, { id: 'a', type: 'data.set', params: { fields: {} } }], [{ from: 'start', to: 'a' }]);
    const run = await w.until((await w.run(wf.id)).id);
    const full = await SseClient.open(streamUrl(run.id), bearer());
    await full.waitForEnd();
    expect(seqs(full)).toEqual([1, 2, 3, 4, 5, 6]);
    const later = await SseClient.open(streamUrl(run.id, '?since=3'), bearer());
    await later.waitForEnd();
    expect(seqs(later)).toEqual([4, 5, 6]);
    expect(later.events()[0]!.event).toBe('node.started');
    const none = await SseClient.open(streamUrl(run.id, '?since=6'), bearer());
    await none.waitForEnd();
    expect(none.events()).toHaveLength(0);
  });

  it('sends `: ping` every SSE_PING_MS; accepts ?access_token=', async () => {
    const wf = await w.create([manual, { id: 'wait', type: 'flow.delay', params: { seconds: 3600 } }], [{ from: 'start', to: 'wait' }]);
    const queued = await w.run(wf.id);
    await w.until(queued.id, ['WAITING']);
    const client = await SseClient.open(streamUrl(queued.id, `?access_token=${t.orgA.token}`));
    expect(client.status).toBe(200);
    await client.until(() => client.messages.filter((m) => m.comment === 'ping').length >= 2, 3000, 'two pings');
    expect(client.ended).toBe(false);
    client.close();
    await t.call({ method: 'POST', url: `${w.base}/runs/${queued.id}/cancel`, auth: w.auth });
  });

  it('a live message lost on the way (a gap in the sequence, or silence) is filled from the stored events', async () => {
    const { runEvents, workflowRuns } = await import('./tables.ts');
    const { eq, sql } = await import('drizzle-orm');
    const { runChannel } = await import('./engine/writer.ts');
    const wf = await w.create([manual, { id: 'ask', type: 'flow.approval', params: { title: 'ok?' } }], [{ from: 'start', to: 'ask' }]);
    const queued = await w.run(wf.id);
    await w.until(queued.id, ['WAITING']);
    const client = await SseClient.open(streamUrl(queued.id), bearer());
    await client.waitForEvent('node.waiting');
    const before = seqs(client).at(-1)!;
    // Stored events whose live messages never arrive (as if lost between another instance's commit and its notification).
    const store = async (seq: number, message: string) => {
      const event = { seq, type: 'log', data: { type: 'log', runId: queued.id, nodeId: 'ask', level: 'info', message, at: new Date().toISOString() } };
      await t.database.db.insert(runEvents).values({ runId: queued.id, seq, type: event.type, data: event.data });
      await t.database.db
        .update(workflowRuns)
        .set({ eventSeq: sql`${workflowRuns.eventSeq} + 1` })
        .where(eq(workflowRuns.id, queued.id));
      return event;
    };
    await store(before + 1, 'lost 1');
    await store(before + 2, 'lost 2');
    const third = await store(before + 3, 'arrives');
    t.app.services.bus.emitLocal(runChannel(queued.id), [third]);
    await client.waitForEvent('log');
    await eventually(async () => (seqs(client).at(-1) === before + 3 ? true : null), 3000);
    // Silence: nothing arrives live; the stream's poll finds it.
    await store(before + 4, 'silent');
    await eventually(async () => (seqs(client).at(-1) === before + 4 ? true : null), 3000);
    expect(seqs(client).slice(-4)).toEqual([before + 1, before + 2, before + 3, before + 4]);
    expect(client.events('log').map((m) => (m.data as { message: string }).message)).toEqual(['lost 1', 'lost 2', 'arrives', 'silent']);
    client.close();
  });

  it('401, 403 and 404 come as JSON before the stream opens', async () => {
    const wf = await w.create([manual], []);
    const run = await w.until((await w.run(wf.id)).id);
    const anon = await SseClient.open(streamUrl(run.id));
    expect(anon.status).toBe(401);
    expect(anon.errorBody).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
    const expired = await SseClient.open(streamUrl(run.id, '?access_token=not-a-token'));
    expect(expired.status).toBe(401);
    const unknown = await SseClient.open(streamUrl('run_doesnotexist'), bearer());
    expect(unknown.status).toBe(404);
    expect(unknown.errorBody).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
    const otherOrg = await SseClient.open(streamUrl(run.id, '', t.orgB.orgId), { authorization: `Bearer ${t.orgB.token}` });
    expect(otherOrg.status).toBe(404);
    const key = await t.key(t.orgA.orgId, ['leads:read']);
    const scoped = await SseClient.open(streamUrl(run.id), { 'x-api-key': key });
    expect(scoped.status).toBe(403);
    expect(scoped.errorBody).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    const readKey = await t.key(t.orgA.orgId, ['workflows:read']);
    const ok = await SseClient.open(streamUrl(run.id), { 'x-api-key': readKey });
    await ok.waitForEnd();
    expect(ok.events('run.finished')).toHaveLength(1);
  });
});

describe('slow clients', () => {
  it('a client whose buffer overflows gets `event: reset` and the stream closes', async () => {
    const small = await buildTestApp({ env: { WORKFLOW_POLL_MS: '100', RUN_STREAM_BUFFER_BYTES: '65536' } });
    chattyApp = small;
    try {
      const url = await listen(small);
      const sw = api(small);
      const wf = await sw.create([manual, { id: 'chat', type: 'test.chatty', params: { count: 600, size: 4000 } }], [{ from: 'start', to: 'chat' }]);
      const run = await sw.until((await sw.run(wf.id)).id);
      expect(run.status).toBe('SUCCEEDED');
      const { port } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.pause();
      socket.write(`GET /api/v1/orgs/${small.orgA.orgId}/runs/${run.id}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${small.orgA.token}\r\n\r\n`);
      // Do not read for a while: the server's buffer for this client fills up.
      await new Promise((r) => setTimeout(r, 500));
      const chunks: Buffer[] = [];
      // The response ends with the last chunk of the chunked encoding (the socket itself may stay open).
      await new Promise<void>((resolve) => {
        socket.on('data', (c: Buffer) => {
          chunks.push(c);
          if (Buffer.concat(chunks.slice(-2)).toString('latin1').endsWith('\r\n0\r\n\r\n')) resolve();
        });
        socket.on('end', () => resolve());
        socket.resume();
      });
      const text = Buffer.concat(chunks).toString('utf8');
      expect(text).toContain('event: reset');
      expect(
        text
          .trimEnd()
          .split('\n\n')
          .filter((f) => f.includes('event: '))
          .at(-1),
      ).toContain('event: reset');
      expect(text).not.toContain('event: run.finished');
      socket.destroy();
    } finally {
      await small.close();
    }
  });
});
