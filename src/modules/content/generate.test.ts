import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { events } from '../events/tables.ts';
import { usageRecords } from '../usage/tables.ts';

let t: TestApp;
let base: string;
const owner = () => ({ token: t.orgA.token });

beforeAll(async () => {
  t = await buildTestApp();
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
});

const generate = (payload: Record<string, unknown>, auth: { token?: string; apiKey?: string } = owner(), orgBase = base) =>
  t.call({ method: 'POST', url: `${orgBase}/content/generate`, auth, payload });

describe('content generation', () => {
  it('writes `count` drafts per platform through the CONTENT_WRITER agent (offline model), with usage recorded', async () => {
    const res = await generate({ projectId: t.orgA.projectId, platforms: ['X', 'LINKEDIN'], topic: 'email marketing for bakeries', count: 2, language: 'en' });
    expect(res.statusCode).toBe(201);
    const out = res.json();
    expect(out.status).toBe('succeeded');
    expect(out.agentRunId).toMatch(/^arun_/);
    expect(out.items).toHaveLength(4);
    for (const platform of ['X', 'LINKEDIN']) expect(out.items.filter((p: { platform: string }) => p.platform === platform)).toHaveLength(2);
    for (const post of out.items) {
      expect(post).toMatchObject({
        status: 'DRAFT',
        projectId: t.orgA.projectId,
        agentRunId: out.agentRunId,
        createdBy: { type: 'agent', id: out.agentRunId },
      });
      expect(post.body.toLowerCase()).toContain('email marketing');
      expect(post.hashtags.every((h: string) => h.startsWith('#'))).toBe(true);
    }
    expect(out.usage).toMatchObject({ modelId: 'offline' });
    const created = await t.database.db
      .select()
      .from(events)
      .where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, 'post.created')));
    expect(created.filter((e) => (e.payload as { post: { agentRunId: string } }).post.agentRunId === out.agentRunId)).toHaveLength(4);
    const usage = await t.database.db.select().from(usageRecords).where(eq(usageRecords.agentRunId, out.agentRunId));
    expect(usage.length).toBeGreaterThan(0);
    const run = await t.call({ method: 'GET', url: `${base}/agent-runs/${out.agentRunId}`, auth: owner() });
    expect(run.json()).toMatchObject({ type: 'CONTENT_WRITER', status: 'succeeded' });
    // The drafts are ordinary posts: listed, approvable.
    const list = (await t.call({ method: 'GET', url: `${base}/content`, auth: owner(), query: { status: 'DRAFT', pageSize: '100' } })).json();
    expect(list.items.filter((p: { agentRunId: string }) => p.agentRunId === out.agentRunId)).toHaveLength(4);
  });

  it("defaults to the first project; refuses bad input, unknown models, another organization's project and missing scopes", async () => {
    const one = await generate({ platforms: ['LINKEDIN'], topic: 'hiring', count: 1, language: 'fr' });
    expect(one.statusCode).toBe(201);
    expect(one.json().items).toHaveLength(1);
    expect((await generate({ platforms: [], topic: 'x', count: 1, language: 'en' })).statusCode).toBe(400);
    expect((await generate({ platforms: ['X'], topic: 'x', count: 6, language: 'en' })).statusCode).toBe(400);
    expect((await generate({ platforms: ['FAX'], topic: 'x', count: 1, language: 'en' })).statusCode).toBe(400);
    const model = await generate({ platforms: ['X'], topic: 'x', count: 1, language: 'en', modelId: 'nowhere:model' });
    expect(model.statusCode).toBe(422);
    expect(model.json().code).toBe('MODEL_NOT_ALLOWED');
    expect((await generate({ projectId: t.orgB.projectId, platforms: ['X'], topic: 'x', count: 1, language: 'en' })).statusCode).toBe(404);
    const reader = await t.key(t.orgA.orgId, ['content:read']);
    expect((await generate({ platforms: ['X'], topic: 'x', count: 1, language: 'en' }, { apiKey: reader })).statusCode).toBe(403);
    expect((await generate({ platforms: ['X'], topic: 'x', count: 1, language: 'en' }, { token: t.orgB.token })).statusCode).toBe(404);
  });
});
