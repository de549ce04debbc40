import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { SseClient } from '../../../test/sse-client.ts';
import { fetchWebPage } from './tools/web.ts';
import type { ToolContext } from './tools/types.ts';
import { runAgent, storeRunningAgentRun, waitForRun, type Auth } from '../../../test/agents.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';

let t: TestApp;
let base: string;
let baseUrl: string;
let page: Server;
let pageUrl: string;
const owner = (): Auth => ({ token: t.orgA.token });

beforeAll(async () => {
  page = createServer((req, res) => {
    if (req.url === '/pdf') {
      res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<html><head><title>Acme &amp; Co — Automation</title><style>.x{color:red}</style><script>var secret = "do not show";</script></head>' +
        '<body><h1>Marketing automation for growing teams</h1><p>Automation platform: automation of campaigns, automation of lead scoring.</p><p>Pricing from 49&nbsp;USD.</p></body></html>',
    );
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as { port: number }).port}/`;
  t = await buildTestApp({ env: { AGENT_WEB_ALLOW_PRIVATE: 'true' } });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => page.close(() => resolve()));
});

async function lead(payload: Record<string, unknown>, orgId = t.orgA.orgId, auth: Auth = owner()) {
  const res = await t.call({ method: 'POST', url: `/api/v1/orgs/${orgId}/leads`, auth, payload });
  expect(res.statusCode).toBeLessThan(300);
  return res.json();
}

describe('agent types', () => {
  it('lists the types with descriptions, tools and report types', async () => {
    const res = await t.call({ method: 'GET', url: `${base}/agent-types`, auth: owner() });
    expect(res.statusCode).toBe(200);
    const types = res.json() as { type: string; description: string; reportType: string; tools: { name: string }[] }[];
    expect(types.map((x) => x.type)).toEqual(expect.arrayContaining(['MARKET_ANALYST', 'REPORT_WRITER', 'LEAD_QUALIFIER', 'CONTENT_WRITER']));
    const byType = Object.fromEntries(types.map((x) => [x.type, x]));
    expect(byType.LEAD_QUALIFIER!.reportType).toBe('LEAD_QUALIFICATION');
    expect(byType.LEAD_QUALIFIER!.tools.map((x) => x.name)).toEqual(
      expect.arrayContaining(['search_leads', 'get_lead', 'update_lead', 'qualify_lead', 'lead_stats', 'create_report', 'handoff']),
    );
    expect(byType.CONTENT_WRITER!.tools.map((x) => x.name)).toEqual(expect.arrayContaining(['create_draft', 'fetch_web_page', 'request_approval']));
    for (const x of types) expect(x.description.length).toBeGreaterThan(20);
  });
});

describe('offline model on real data', () => {
  it('LEAD_QUALIFIER scores every new lead, qualifies the strong ones (lead.qualified with agentRunId) and writes a report', async () => {
    const strong = await lead({
      name: 'Grace Hopper',
      email: 'grace@navy.example',
      phone: '+14155550100',
      company: 'Navy',
      website: 'navy.example',
      source: 'referral',
    });
    const weak = await lead({ name: 'Anon', email: 'anon@gmail.com' });
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads', input: { threshold: 60 } });
    expect(run).toMatchObject({ status: 'succeeded', type: 'LEAD_QUALIFIER', modelId: 'offline', usage: { modelId: 'offline', costUsd: 0 } });
    expect(run.usage.inputTokens).toBeGreaterThan(0);
    expect(run.summary).toMatch(/qualified/);
    expect(run.reportId).toMatch(/^rep_/);
    expect(run.output).toMatchObject({ reportId: run.reportId, qualifiedLeadIds: expect.arrayContaining([strong.id]) });
    expect(run.steps.map((s: { type: string }) => s.type)).toEqual(expect.arrayContaining(['thinking', 'tool_call', 'tool_result', 'message']));

    const g = (await t.call({ method: 'GET', url: `${base}/leads/${strong.id}`, auth: owner() })).json();
    expect(g.status).toBe('QUALIFIED');
    expect(g.score).toBeGreaterThanOrEqual(60);
    expect(g.scoreReason).toContain('business email');
    const a = (await t.call({ method: 'GET', url: `${base}/leads/${weak.id}`, auth: owner() })).json();
    expect(a.status).toBe('NEW');
    expect(a.score).toBeLessThan(60);

    const qualified = (await eventsOf(t, t.orgA.orgId, 'lead.qualified')).find((e) => e.payload.lead.id === strong.id)!;
    expect(qualified.payload).toMatchObject({ score: g.score, scoreReason: g.scoreReason, agentRunId: run.id });
    const created = (await eventsOf(t, t.orgA.orgId, 'agent.report.created')).find((e) => e.payload.agentRunId === run.id)!;
    expect(created.payload).toMatchObject({
      agentType: 'LEAD_QUALIFIER',
      report: { id: run.reportId, type: 'LEAD_QUALIFICATION', metrics: { qualified: expect.any(Number) } },
    });
    const finished = (await eventsOf(t, t.orgA.orgId, 'agent.run.finished')).find((e) => e.payload.agentRunId === run.id)!;
    expect(finished.projectId).toBeNull();
    expect(finished.payload).toMatchObject({
      type: 'LEAD_QUALIFIER',
      status: 'succeeded',
      summary: run.summary,
      reportId: run.reportId,
      usage: { modelId: 'offline', inputTokens: run.usage.inputTokens },
    });

    const report = (await t.call({ method: 'GET', url: `${base}/reports/${run.reportId}`, auth: owner() })).json();
    expect(report.recommendations[0]).toMatchObject({ index: 0, action: { type: 'tag_leads', params: { leadIds: [strong.id], tags: ['hot'] } } });
    expect(report.body).toContain('Grace Hopper');
    const notes = (await t.call({ method: 'GET', url: `${base}/notifications`, auth: owner() })).json();
    expect(notes.items.some((n: { kind: string; link: string }) => n.kind === 'report.created' && n.link === `/reports/${run.reportId}`)).toBe(true);
  });

  it("LEAD_QUALIFIER on named leads (input.leadIds) through get_lead; another organization's lead is not found", async () => {
    const mine = await lead({ name: 'Mine', email: 'mine@corp.example', company: 'Corp', phone: '+14155550111' });
    const theirs = await lead({ name: 'Theirs', email: 'theirs@corp.example' }, t.orgB.orgId, { token: t.orgB.token });
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'LEAD_QUALIFIER', task: 'Qualify these', input: { leadIds: [mine.id, theirs.id] } });
    expect(run.status).toBe('succeeded');
    const results = run.steps
      .filter((s: { type: string; name?: string }) => s.type === 'tool_result' && s.name === 'get_lead')
      .map((s: { output: string }) => JSON.parse(s.output));
    expect(results).toHaveLength(2);
    expect(results.find((r: { id?: string }) => r.id === mine.id)).toBeTruthy();
    expect(results.find((r: { error?: string }) => r.error)?.error).toContain('not found');
    const b = (await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/leads/${theirs.id}`, auth: { token: t.orgB.token } })).json();
    expect(b.status).toBe('NEW');
    expect(b.score).toBe(0);
  });

  it('MARKET_ANALYST reads the pipeline and a web page (text only), then hands off to REPORT_WRITER in the same run', async () => {
    const run = await runAgent(t, t.orgA.orgId, owner(), {
      type: 'MARKET_ANALYST',
      task: 'Size up the market',
      input: { url: pageUrl, handoffTo: 'REPORT_WRITER' },
    });
    expect(run.status).toBe('succeeded');
    const fetched = run.steps.find((s: { type: string; name?: string }) => s.type === 'tool_result' && s.name === 'fetch_web_page');
    const pageOut = JSON.parse(fetched.output);
    expect(pageOut).toMatchObject({ status: 200, title: 'Acme & Co — Automation' });
    expect(pageOut.text).toContain('Marketing automation for growing teams');
    expect(pageOut.text).toContain('Pricing from 49 USD.');
    expect(pageOut.text).not.toContain('secret');
    expect(pageOut.text).not.toContain('<');
    const handoff = run.steps.find((s: { type: string }) => s.type === 'handoff');
    expect(handoff).toMatchObject({ name: 'REPORT_WRITER', input: { from: 'MARKET_ANALYST', to: 'REPORT_WRITER' } });
    // After the handoff the REPORT_WRITER's tools ran in the same run.
    const after = run.steps.filter((s: { index: number }) => s.index > handoff.index).map((s: { name?: string }) => s.name);
    expect(after).toContain('usage_summary');
    const reports = (await t.call({ method: 'GET', url: `${base}/reports?sort=createdAt`, auth: owner(), query: { pageSize: '100' } }))
      .json()
      .items.filter((r: { agentRunId: string }) => r.agentRunId === run.id);
    expect(reports.map((r: { type: string }) => r.type)).toEqual(['MARKET_RESEARCH', 'WEEKLY_DIGEST']);
    const research = reports[0];
    expect(research.metrics.pagesAnalyzed).toBe(1);
    expect(research.body).toContain('automation');
  });

  it('fetch_web_page refuses private addresses and non-text pages', async () => {
    const ctx = { config: { ...t.config, agentWebAllowPrivate: false }, signal: new AbortController().signal } as unknown as ToolContext;
    const blocked = (await fetchWebPage.execute(ctx, { url: pageUrl })) as { error: string };
    expect(blocked.error).toMatch(/^BLOCKED/);
    const metadata = (await fetchWebPage.execute(ctx, { url: 'http://169.254.169.254/latest/meta-data' })) as { error: string };
    expect(metadata.error).toMatch(/^BLOCKED/);
    const allowed = { ...ctx, config: { ...t.config, agentWebAllowPrivate: true } } as ToolContext;
    const pdf = (await fetchWebPage.execute(allowed, { url: `${pageUrl}pdf` })) as { error: string };
    expect(pdf.error).toContain('Not a text page');
  });

  it('REPORT_WRITER writes a WEEKLY_DIGEST', async () => {
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Weekly digest', input: { days: 7 } });
    expect(run.status).toBe('succeeded');
    const report = (await t.call({ method: 'GET', url: `${base}/reports/${run.reportId}`, auth: owner() })).json();
    expect(report).toMatchObject({
      type: 'WEEKLY_DIGEST',
      agentType: 'REPORT_WRITER',
      metrics: { totalLeads: expect.any(Number), qualifiedLeads: expect.any(Number) },
    });
  });

  it('CONTENT_WRITER saves drafts through the content module and a CONTENT_PLAN', async () => {
    const run = await runAgent(t, t.orgA.orgId, owner(), {
      type: 'CONTENT_WRITER',
      task: 'Posts about marketing automation',
      input: { topic: 'marketing automation', platforms: ['LINKEDIN', 'X'], count: 2 },
    });
    expect(run.status).toBe('succeeded');
    expect(run.output.postIds).toHaveLength(4);
    for (const id of run.output.postIds) {
      const post = (await t.call({ method: 'GET', url: `${base}/content/${id}`, auth: owner() })).json();
      expect(post.status).toBe('DRAFT');
      expect(post.body).toMatch(/marketing automation/i);
      if (post.platform === 'X') expect(post.body.length + post.hashtags.join(' ').length + 1).toBeLessThanOrEqual(280);
    }
    const report = (await t.call({ method: 'GET', url: `${base}/reports/${run.reportId}`, auth: owner() })).json();
    expect(report).toMatchObject({ type: 'CONTENT_PLAN', metrics: { posts: 4, drafts: 4 } });
  });

  it('CONTENT_WRITER asks for an approval through the approvals module when told to', async () => {
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'CONTENT_WRITER', task: 'Posts', input: { topic: 'webinars', requestApproval: true } });
    expect(run.status).toBe('succeeded');
    expect(run.output.approvalIds).toHaveLength(1);
    const approvals = (await t.call({ method: 'GET', url: `${base}/approvals`, auth: owner(), query: { status: 'PENDING' } })).json();
    const approval = approvals.items.find((a: { id: string }) => a.id === run.output.approvalIds[0]);
    expect(approval).toMatchObject({ runId: run.id, nodeId: null, title: expect.stringContaining('webinars'), payload: { postIds: run.output.postIds } });
    const requested = (await eventsOf(t, t.orgA.orgId, 'approval.requested')).find((e) => e.payload.approvalId === approval.id)!;
    expect(requested.payload.runId).toBe(run.id);
  });

  it('services.agents.runInline runs to completion in-process and returns the result', async () => {
    await lead({ name: 'Inline', email: 'inline@firm.example', company: 'Firm', phone: '+14155550123', website: 'firm.example' });
    const result = await t.app.services.agents.runInline({
      orgId: t.orgA.orgId,
      projectId: t.orgA.projectId,
      type: 'LEAD_QUALIFIER',
      task: 'Qualify',
      input: {},
    });
    expect(result).toMatchObject({ status: 'succeeded', usage: { modelId: 'offline', costUsd: 0 }, reportId: expect.stringMatching(/^rep_/) });
    expect(result.agentRunId).toMatch(/^arun_/);
    const run = (await t.call({ method: 'GET', url: `${base}/agent-runs/${result.agentRunId}`, auth: owner() })).json();
    expect(run).toMatchObject({ status: 'succeeded', projectId: t.orgA.projectId, summary: result.summary });
  });

  it("ends max_steps at a saved agent's step limit", async () => {
    const agent = (
      await t.call({ method: 'POST', url: `${base}/agents`, auth: owner(), payload: { name: 'One step', type: 'REPORT_WRITER', maxSteps: 1 } })
    ).json();
    const started = (await t.call({ method: 'POST', url: `${base}/agents/${agent.id}/run`, auth: owner(), payload: { task: 'Digest' } })).json();
    const run = await waitForRun(t, t.orgA.orgId, started.id, owner());
    expect(run.status).toBe('max_steps');
    expect(run.steps.at(-1)).toMatchObject({ type: 'error', text: expect.stringContaining('Step limit') });
  });

  it('a run whose instance died (RUNNING, lease expired) is ended failed, never left RUNNING', async () => {
    const past = new Date(Date.now() - 60_000);
    const id = await storeRunningAgentRun(t, { prefix: 'crashed', task: 'Interrupted', leaseOwner: 'gone', leaseUntil: past, startedAt: past });
    t.app.workers!.loops.agents!.wake();
    const run = await eventually(async () => {
      const r = (await t.call({ method: 'GET', url: `${base}/agent-runs/${id}`, auth: owner() })).json();
      return r.status === 'failed' ? r : null;
    });
    expect(run.error).toContain('interrupted');
    expect(run.steps.at(-1)).toMatchObject({ type: 'error' });
    const finished = (await eventsOf(t, t.orgA.orgId, 'agent.run.finished')).filter((e) => e.payload.agentRunId === id);
    expect(finished).toHaveLength(1);
    expect(finished[0]!.payload.status).toBe('failed');
  });
});

describe('saved agents and runs through the API', () => {
  it('CRUD, run a saved agent, list runs with filters', async () => {
    const created = await t.call({
      method: 'POST',
      url: `${base}/agents`,
      auth: owner(),
      payload: { name: 'Qualifier', type: 'LEAD_QUALIFIER', instructions: 'Be strict.', maxSteps: 8, budgetUsd: 5, projectId: t.orgA.projectId },
    });
    expect(created.statusCode).toBe(201);
    const agent = created.json();
    expect(agent).toMatchObject({
      id: expect.stringMatching(/^agt_/),
      name: 'Qualifier',
      type: 'LEAD_QUALIFIER',
      instructions: 'Be strict.',
      maxSteps: 8,
      budgetUsd: 5,
      modelId: null,
      projectId: t.orgA.projectId,
    });
    expect((await t.call({ method: 'GET', url: `${base}/agents/${agent.id}`, auth: owner() })).json()).toMatchObject({ id: agent.id });
    const list = (await t.call({ method: 'GET', url: `${base}/agents`, auth: owner(), query: { type: 'LEAD_QUALIFIER' } })).json();
    expect(list.items.map((a: { id: string }) => a.id)).toContain(agent.id);
    const patched = await t.call({
      method: 'PATCH',
      url: `${base}/agents/${agent.id}`,
      auth: owner(),
      payload: { name: 'Strict qualifier', modelId: 'offline' },
    });
    expect(patched.json()).toMatchObject({ name: 'Strict qualifier', modelId: 'offline', instructions: 'Be strict.' });

    const started = await t.call({
      method: 'POST',
      url: `${base}/agents/${agent.id}/run`,
      auth: owner(),
      payload: { task: 'Qualify', input: { threshold: 90 } },
    });
    expect(started.statusCode).toBe(202);
    expect(started.json()).toMatchObject({ agentId: agent.id, type: 'LEAD_QUALIFIER', maxSteps: 8, budgetUsd: 5, projectId: t.orgA.projectId });
    expect(['QUEUED', 'RUNNING', 'succeeded']).toContain(started.json().status);
    const run = await waitForRun(t, t.orgA.orgId, started.json().id, owner());
    expect(run.status).toBe('succeeded');

    const byAgent = (await t.call({ method: 'GET', url: `${base}/agent-runs`, auth: owner(), query: { agentId: agent.id } })).json();
    expect(byAgent.total).toBe(1);
    expect(byAgent.items[0].steps).toBeUndefined();
    const succeeded = (
      await t.call({ method: 'GET', url: `${base}/agent-runs`, auth: owner(), query: { status: 'succeeded', type: 'LEAD_QUALIFIER', pageSize: '2' } })
    ).json();
    expect(succeeded.pageSize).toBe(2);
    expect(succeeded.total).toBeGreaterThanOrEqual(2);
    for (const r of succeeded.items) expect(r).toMatchObject({ status: 'succeeded', type: 'LEAD_QUALIFIER' });
    expect((await t.call({ method: 'GET', url: `${base}/agent-runs`, auth: owner(), query: { status: 'done' } })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `${base}/agent-runs`, auth: owner(), query: { sort: 'secret' } })).statusCode).toBe(400);

    expect((await t.call({ method: 'DELETE', url: `${base}/agents/${agent.id}`, auth: owner() })).statusCode).toBe(204);
    expect((await t.call({ method: 'GET', url: `${base}/agents/${agent.id}`, auth: owner() })).statusCode).toBe(404);
    // Its runs stay.
    expect((await t.call({ method: 'GET', url: `${base}/agent-runs/${run.id}`, auth: owner() })).statusCode).toBe(200);
  });

  it('validates requests', async () => {
    const bad = [
      { type: 'UNKNOWN', task: 'x' },
      { type: 'LEAD_QUALIFIER' },
      { type: 'LEAD_QUALIFIER', task: '' },
      { type: 'LEAD_QUALIFIER', task: 'x', extra: 1 },
      { type: 'LEAD_QUALIFIER', task: 'x', input: 'text' },
    ];
    for (const payload of bad)
      expect((await t.call({ method: 'POST', url: `${base}/agents/run`, auth: owner(), payload })).statusCode, JSON.stringify(payload)).toBe(400);
    expect(
      (await t.call({ method: 'POST', url: `${base}/agents/run`, auth: owner(), payload: { type: 'LEAD_QUALIFIER', task: 'x', projectId: t.orgB.projectId } }))
        .statusCode,
    ).toBe(404);
    expect(
      (await t.call({ method: 'POST', url: `${base}/agents`, auth: owner(), payload: { name: 'x', type: 'LEAD_QUALIFIER', maxSteps: 0 } })).statusCode,
    ).toBe(400);
    expect(
      (await t.call({ method: 'POST', url: `${base}/agents`, auth: owner(), payload: { name: 'x', type: 'LEAD_QUALIFIER', budgetUsd: -1 } })).statusCode,
    ).toBe(400);
    expect((await t.call({ method: 'PATCH', url: `${base}/agents/agt_missing`, auth: owner(), payload: { name: 'x' } })).statusCode).toBe(404);
  });

  it("another organization's agents and runs are 404; scopes and roles are enforced", async () => {
    const agent = (await t.call({ method: 'POST', url: `${base}/agents`, auth: owner(), payload: { name: 'A', type: 'REPORT_WRITER' } })).json();
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'x' });
    const asB = { token: t.orgB.token };
    const paths: [string, string][] = [
      ['GET', `${base}/agents/${agent.id}`],
      ['PATCH', `${base}/agents/${agent.id}`],
      ['DELETE', `${base}/agents/${agent.id}`],
      ['POST', `${base}/agents/${agent.id}/run`],
      ['GET', `${base}/agent-runs/${run.id}`],
      ['POST', `${base}/agent-runs/${run.id}/cancel`],
      ['GET', `${base}/agent-runs`],
      ['GET', `${base}/agent-types`],
    ];
    for (const [method, url] of paths) {
      expect(
        (await t.call({ method: method as 'GET', url, auth: asB, payload: method === 'GET' || method === 'DELETE' ? undefined : { task: 'x', name: 'y' } }))
          .statusCode,
        `${method} ${url}`,
      ).toBe(404);
    }
    // The same ids under org B's own path are not found either.
    const bBase = `/api/v1/orgs/${t.orgB.orgId}`;
    expect((await t.call({ method: 'GET', url: `${bBase}/agents/${agent.id}`, auth: asB })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `${bBase}/agent-runs/${run.id}`, auth: asB })).statusCode).toBe(404);
    expect((await t.call({ method: 'POST', url: `${bBase}/agent-runs/${run.id}/cancel`, auth: asB })).statusCode).toBe(404);

    const reader = await t.key(t.orgA.orgId, ['agents:read']);
    expect((await t.call({ method: 'GET', url: `${base}/agent-runs/${run.id}`, auth: { apiKey: reader } })).statusCode).toBe(200);
    const denied = await t.call({ method: 'POST', url: `${base}/agents/run`, auth: { apiKey: reader }, payload: { type: 'REPORT_WRITER', task: 'x' } });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('INSUFFICIENT_SCOPE');
    const leadsOnly = await t.key(t.orgA.orgId, ['leads:read']);
    expect((await t.call({ method: 'GET', url: `${base}/agent-runs`, auth: { apiKey: leadsOnly } })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${base}/agent-types`, auth: { apiKey: leadsOnly } })).statusCode).toBe(403);
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    expect((await t.call({ method: 'GET', url: `${base}/agent-runs/${run.id}`, auth: { token: viewer.token } })).statusCode).toBe(200);
    expect(
      (await t.call({ method: 'POST', url: `${base}/agents/run`, auth: { token: viewer.token }, payload: { type: 'REPORT_WRITER', task: 'x' } })).statusCode,
    ).toBe(403);
    expect(
      (await t.call({ method: 'POST', url: `${base}/agents`, auth: { token: viewer.token }, payload: { name: 'v', type: 'REPORT_WRITER' } })).statusCode,
    ).toBe(403);
    expect((await t.call({ method: 'GET', url: `${base}/agent-runs` })).statusCode).toBe(401);
  });

  it('an API key bound to a project runs agents in that project and sees only its runs', async () => {
    const other = (await t.call({ method: 'POST', url: `${base}/projects`, auth: owner(), payload: { name: 'Second' } })).json();
    const key = await t.key(t.orgA.orgId, ['agents:read', 'agents:write'], other.id);
    const started = (await t.call({ method: 'POST', url: `${base}/agents/run`, auth: { apiKey: key }, payload: { type: 'REPORT_WRITER', task: 'x' } })).json();
    expect(started.projectId).toBe(other.id);
    const run = await waitForRun(t, t.orgA.orgId, started.id, { apiKey: key });
    expect(run.status).toBe('succeeded');
    const listed = (await t.call({ method: 'GET', url: `${base}/agent-runs`, auth: { apiKey: key } })).json();
    expect(listed.items.every((r: { projectId: string }) => r.projectId === other.id)).toBe(true);
    const foreign = (await t.call({ method: 'GET', url: `${base}/agent-runs`, auth: owner(), query: { type: 'LEAD_QUALIFIER', pageSize: '1' } })).json()
      .items[0];
    expect((await t.call({ method: 'GET', url: `${base}/agent-runs/${foreign.id}`, auth: { apiKey: key } })).statusCode).toBe(404);
    expect(
      (
        await t.call({
          method: 'POST',
          url: `${base}/agents/run`,
          auth: { apiKey: key },
          payload: { type: 'REPORT_WRITER', task: 'x', projectId: t.orgA.projectId },
        })
      ).statusCode,
    ).toBe(403);
  });
});

describe('agent run stream', () => {
  const url = (id: string, query = '') => `${baseUrl}${base}/agent-runs/${id}/events${query}`;
  const bearer = () => ({ authorization: `Bearer ${t.orgA.token}` });

  it('live: every step once, in order, long outputs shortened, then one done and the stream closes', async () => {
    for (let i = 0; i < 12; i++)
      await lead({
        name: `Stream lead ${i} with a long enough name to make outputs big`,
        email: `stream${i}@bulk.example`,
        company: 'Bulk Company Incorporated',
        custom: { note: 'x'.repeat(100) },
      });
    const started = (
      await t.call({
        method: 'POST',
        url: `${base}/agents/run`,
        auth: owner(),
        payload: { type: 'LEAD_QUALIFIER', task: 'Qualify', input: { threshold: 101 } },
      })
    ).json();
    const sse = await SseClient.open(url(started.id), bearer());
    expect(sse.status).toBe(200);
    expect(sse.contentType).toContain('text/event-stream');
    await sse.waitForEnd();
    const steps = sse.events('step').map((m) => m.data as { type: string; step: { index: number; output?: string } });
    const run = await waitForRun(t, t.orgA.orgId, started.id, owner());
    expect(steps.map((s) => s.step.index)).toEqual(run.steps.map((s: { index: number }) => s.index));
    expect(sse.events('step').map((m) => Number(m.id))).toEqual(run.steps.map((s: { index: number }) => s.index));
    for (const s of steps) expect(s.type).toBe('step');
    const searchStep = run.steps.find((s: { type: string; name?: string }) => s.type === 'tool_result' && s.name === 'search_leads');
    expect(searchStep.output.length).toBeGreaterThan(2000);
    const streamed = steps.find((s) => s.step.index === searchStep.index)!.step;
    expect(streamed.output!.length).toBeLessThan(searchStep.output.length);
    expect(streamed.output).toContain('more characters');
    const done = sse.events('done');
    expect(done).toHaveLength(1);
    expect(done[0]!.data).toEqual({ type: 'done', run: { id: run.id, status: 'succeeded', summary: run.summary, usage: run.usage } });
    expect(sse.messages.at(-1)!.event).toBe('done');
  });

  it('a finished run replays its history and done, then closes; since=<index> replays only later steps', async () => {
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Digest' });
    const full = await SseClient.open(url(run.id), bearer());
    await full.waitForEnd();
    expect(full.events('step').map((m) => (m.data as { step: { index: number } }).step.index)).toEqual(run.steps.map((s: { index: number }) => s.index));
    expect(full.events('done')).toHaveLength(1);
    const later = await SseClient.open(url(run.id, '?since=3'), bearer());
    await later.waitForEnd();
    expect(later.events('step').map((m) => (m.data as { step: { index: number } }).step.index)).toEqual(
      run.steps.filter((s: { index: number }) => s.index > 3).map((s: { index: number }) => s.index),
    );
    expect(later.events('done')).toHaveLength(1);
    // access_token in the query works on SSE routes.
    const viaQuery = await SseClient.open(url(run.id, `?access_token=${t.orgA.token}`));
    await viaQuery.waitForEnd();
    expect(viaQuery.events('done')).toHaveLength(1);
  });

  it('answers 401 and 404 as JSON before opening', async () => {
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Digest' });
    const anonymous = await SseClient.open(url(run.id));
    expect(anonymous.status).toBe(401);
    expect(anonymous.errorBody).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
    const other = await SseClient.open(url(run.id), { authorization: `Bearer ${t.orgB.token}` });
    expect(other.status).toBe(404);
    const missing = await SseClient.open(url('arun_missing'), bearer());
    expect(missing.status).toBe(404);
    expect(missing.errorBody).toMatchObject({ code: 'NOT_FOUND' });
    const workflowsKey = await t.key(t.orgA.orgId, ['workflows:read']);
    const withKey = await SseClient.open(url(run.id), { 'x-api-key': workflowsKey });
    await withKey.waitForEnd();
    expect(withKey.events('done')).toHaveLength(1);
  });

  it('publishes agent.step summaries on the organization stream', async () => {
    const org = await SseClient.open(`${baseUrl}${base}/events`, bearer());
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Digest' });
    await org.until(
      () => org.events('agent.step').filter((m) => (m.data as { agentRunId: string }).agentRunId === run.id).length === run.steps.length,
      10_000,
      'agent.step summaries',
    );
    const summaries = org
      .events('agent.step')
      .map((m) => m.data as Record<string, unknown>)
      .filter((d) => d.agentRunId === run.id);
    expect(summaries[1]).toEqual({ agentRunId: run.id, type: 'tool_call', index: 1, name: 'lead_stats' });
    org.close();
  });
});
