import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.ts';
import { FEATURES } from '../src/shared/plans.ts';
import { ALWAYS_AREAS, FEATURE_AREAS, featuresOfRoute } from '../src/modules/plans/features.ts';
import { buildTestApp, testConfig, TEST_PASSWORD, type TestApp } from './harness.ts';
import { childEnv, freePort, ownerClient, startServer } from './processes.ts';
import { SmtpStandIn } from './smtp.ts';
import { embeddedDataDir } from './embedded-template.ts';

/** Plans and quotas (CONTRACT §12). */

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const PLANS = {
  starter: {
    features: ['workflows', 'webhooks', 'conversations', 'agents', 'campaigns'],
    limits: { leads: 3, members: 2, webhookEndpoints: 1, inboxes: 1, runsPerMonth: 2, agentRunsPerMonth: 1 },
  },
  bare: { features: [] },
  pro: { features: [...FEATURES], limits: {} },
  mail: { features: ['campaigns', 'conversations'], limits: { campaignMessagesPerMonth: 2 } },
};
// The runs these tests start stay queued (no run loop) while the clock moves on by hours: the
// queue-age backpressure (RUN_QUEUE_MAX_AGE_MS) is not what they are about.
const planEnv = { PLANS: JSON.stringify(PLANS), DEFAULT_PLAN: 'starter', RUN_QUEUE_MAX_AGE_MS: '0' };

/** One hour before the month ends (UTC): Retry-After of a monthly limit is 3600 s. */
let now = Date.parse('2026-11-30T23:00:00.000Z');
const clock = { now: () => new Date(now) };

describe('PLANS and DEFAULT_PLAN are checked at start', () => {
  const refused = (env: Record<string, string>) => {
    try {
      testConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('accepted');
  };

  it('names the bad part', () => {
    expect(refused({ PLANS: '{nope', DEFAULT_PLAN: 'a' })).toMatch(/^PLANS must be JSON/);
    expect(refused({ PLANS: '[]', DEFAULT_PLAN: 'a' })).toMatch(/PLANS must be a JSON object/);
    expect(refused({ PLANS: '{"a":{"features":["workflows","teleport"]}}', DEFAULT_PLAN: 'a' })).toBe(
      'PLANS["a"].features: unknown feature(s) "teleport"; allowed: workflows, agents, content, conversations, campaigns, analytics, webhooks',
    );
    expect(refused({ PLANS: '{"a":{"limits":{"seats":3}}}', DEFAULT_PLAN: 'a' })).toMatch(/^PLANS\["a"\]\.limits: unknown limit "seats"/);
    expect(refused({ PLANS: '{"a":{"limits":{"leads":-1}}}', DEFAULT_PLAN: 'a' })).toMatch(/^PLANS\["a"\]\.limits\.leads must be a whole number/);
    expect(refused({ PLANS: '{"a":{"feature":[]}}', DEFAULT_PLAN: 'a' })).toMatch(/^PLANS\["a"\] has unknown key\(s\) "feature"/);
    expect(refused({ PLANS: '{"a":{}}' })).toBe('DEFAULT_PLAN is required when PLANS is set: name the plan new organizations get (a)');
    expect(refused({ PLANS: '{"a":{},"b":{}}', DEFAULT_PLAN: 'c' })).toBe('DEFAULT_PLAN "c" is not a plan in PLANS (a, b)');
    expect(refused({ DEFAULT_PLAN: 'a' })).toMatch(/^DEFAULT_PLAN is "a" but PLANS is not set/);
    expect(testConfig(planEnv).plans!.bare).toEqual({ features: [], limits: {} });
  });

  it("every organization route is in a feature's area or in every plan: a new area must be decided", async () => {
    const t = await buildTestApp({ workers: false });
    try {
      const undecided = t.app.routeTable
        .filter((r) => r.url.startsWith('/api/v1/orgs/:orgId'))
        .map((r) => r.url.replace(/^\/api\/v1\/orgs\/:orgId\/?/, '').split('/')[0]!)
        .filter((area) => !(area in FEATURE_AREAS) && !ALWAYS_AREAS.includes(area));
      expect([...new Set(undecided)]).toEqual([]);
      expect(featuresOfRoute('/api/v1/orgs/:orgId/leads/:id/consents')).toEqual(['campaigns']);
      expect(featuresOfRoute('/api/v1/orgs/:orgId/leads/:id')).toEqual([]);
      expect(featuresOfRoute('/api/v1/orgs/:orgId/agent-runs/:id/events')).toEqual(['agents']);
    } finally {
      await t.close();
    }
  });
});

describe('without PLANS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ workers: false });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every organization is unlimited, with every feature, and GET …/plan still shows what is used', async () => {
    const base = `/api/v1/orgs/${t.orgA.orgId}`;
    for (const name of ['One', 'Two'])
      expect((await t.call({ method: 'POST', url: `${base}/leads`, auth: { token: t.orgA.token }, payload: { name } })).statusCode).toBe(201);
    const key = await t.key(t.orgA.orgId, ['leads:read']);
    const res = await t.call({ method: 'GET', url: `${base}/plan`, auth: { apiKey: key } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      plan: 'unlimited',
      features: [...FEATURES],
      limits: {},
      used: { leads: 2, members: 1, webhookEndpoints: 0, inboxes: 0, runsPerMonth: 0, agentRunsPerMonth: 0, campaignMessagesPerMonth: 0 },
    });
    // set-plan needs PLANS
    await expect(t.app.services.plans.setPlan(t.orgA.orgId, 'pro')).rejects.toMatchObject({ code: 'PLANS_NOT_CONFIGURED' });
  });
});

describe('with PLANS', () => {
  let t: TestApp;
  const A = () => `/api/v1/orgs/${t.orgA.orgId}`;
  const B = () => `/api/v1/orgs/${t.orgB.orgId}`;
  const ownerA = () => ({ token: t.orgA.token });
  const ownerB = () => ({ token: t.orgB.token });

  beforeAll(async () => {
    t = await buildTestApp({ env: planEnv, clock, workers: false });
    await t.app.services.plans.setPlan(t.orgB.orgId, 'bare');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('new organizations get DEFAULT_PLAN; GET …/plan shows it, its limits and what is used', async () => {
    const res = await t.call({ method: 'GET', url: `${A()}/plan`, auth: ownerA() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      plan: 'starter',
      features: ['workflows', 'agents', 'conversations', 'campaigns', 'webhooks'],
      limits: PLANS.starter.limits,
      used: { leads: 0, members: 1, webhookEndpoints: 0, inboxes: 0, runsPerMonth: 0, agentRunsPerMonth: 0, campaignMessagesPerMonth: 0 },
    });
    // any member or key of the organization; not another organization's
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    expect((await t.call({ method: 'GET', url: `${A()}/plan`, auth: { token: viewer.token } })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: `${A()}/plan`, auth: ownerB() })).statusCode).toBe(404);
    await t.call({ method: 'DELETE', url: `${A()}/members/${viewer.userId}`, auth: ownerA() });
  });

  it('a route of a feature the plan lacks is 403 PLAN_FEATURE; leads, members, keys, usage and the plan are always there', async () => {
    const lacking = [
      ['GET', '/workflows'],
      ['GET', '/runs'],
      ['GET', '/agents'],
      ['POST', '/agents/run'],
      ['GET', '/reports'],
      ['GET', '/content'],
      ['GET', '/integrations'],
      ['GET', '/inboxes'],
      ['GET', '/conversations'],
      ['GET', '/campaigns'],
      ['GET', '/suppressions'],
      ['GET', '/analytics/rules'],
      ['GET', '/webhook-endpoints'],
      ['GET', `/leads/${'lead_x'}/consents`],
    ] as const;
    for (const [method, path] of lacking) {
      const res = await t.call({
        method,
        url: `${B()}${path}`,
        auth: ownerB(),
        ...(method === 'POST' ? { payload: { type: 'LEAD_QUALIFIER', task: 'x' } } : {}),
      });
      expect(res.statusCode, `${method} ${path}`).toBe(403);
      expect(res.json()).toMatchObject({ code: 'PLAN_FEATURE', message: expect.stringContaining('plan "bare" does not include') });
    }
    for (const path of ['/leads', '/members', '/api-keys', '/usage', '/plan', '/invitations', '/notifications']) {
      expect((await t.call({ method: 'GET', url: `${B()}${path}`, auth: ownerB() })).statusCode, path).toBe(200);
    }
    // the same routes on a plan that has them
    await t.app.services.plans.setPlan(t.orgB.orgId, 'pro');
    for (const [method, path] of lacking.filter(([m, p]) => m === 'GET' && !p.endsWith('/consents'))) {
      expect((await t.call({ method, url: `${B()}${path}`, auth: ownerB() })).statusCode, `${method} ${path}`).toBe(200);
    }
    expect((await t.call({ method: 'GET', url: `${B()}/plan`, auth: ownerB() })).json()).toMatchObject({ plan: 'pro', features: [...FEATURES], limits: {} });
    await t.app.services.plans.setPlan(t.orgB.orgId, 'bare');
    expect((await t.call({ method: 'GET', url: `${B()}/content`, auth: ownerB() })).json().code).toBe('PLAN_FEATURE');
  });

  it('leads: creates up to the limit, one of two concurrent creates takes the last slot, merges and imports past it', async () => {
    const create = (payload: Record<string, unknown>) => t.call({ method: 'POST', url: `${A()}/leads`, auth: ownerA(), payload });
    expect((await create({ name: 'L1', email: 'l1@example.com' })).statusCode).toBe(201);
    expect((await create({ name: 'L2', email: 'l2@example.com' })).statusCode).toBe(201);
    const both = await Promise.all([create({ email: 'race1@example.com' }), create({ email: 'race2@example.com' })]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([201, 429]);
    const refused = both.find((r) => r.statusCode === 429)!;
    expect(refused.json()).toMatchObject({ code: 'PLAN_LIMIT', details: { limit: 'leads', value: 3, used: 3 } });
    expect(refused.headers['retry-after']).toBeUndefined();
    // a create matching an existing person merges: no new lead, allowed when full
    const merged = await create({ email: 'l1@example.com', company: 'Acme' });
    expect(merged.statusCode).toBe(200);
    // an import rejects the rows that would be new leads, merges the others
    const imported = await t.call({
      method: 'POST',
      url: `${A()}/leads/import`,
      auth: ownerA(),
      payload: { rows: [{ email: 'l2@example.com', tags: ['x'] }, { email: 'new@example.com' }] },
    });
    expect(imported.statusCode).toBe(200);
    expect(imported.json()).toMatchObject({ created: 0, merged: 1, rejected: [{ row: 2, error: expect.stringContaining('leads limit (3)') }] });
    expect((await t.call({ method: 'GET', url: `${A()}/leads`, auth: ownerA() })).json().total).toBe(3);
  });

  it('webhook endpoints and inboxes: two concurrent creates for the last slot, one wins; nothing half-made', async () => {
    const endpoint = (n: number) =>
      t.call({ method: 'POST', url: `${A()}/webhook-endpoints`, auth: ownerA(), payload: { url: `http://127.0.0.1:9/hook${n}`, events: ['lead.created'] } });
    const endpoints = await Promise.all([endpoint(1), endpoint(2)]);
    expect(endpoints.map((r) => r.statusCode).sort()).toEqual([201, 429]);
    expect(endpoints.find((r) => r.statusCode === 429)!.json()).toMatchObject({
      code: 'PLAN_LIMIT',
      details: { limit: 'webhookEndpoints', value: 1, used: 1 },
    });
    expect((await t.call({ method: 'GET', url: `${A()}/webhook-endpoints`, auth: ownerA() })).json().total).toBe(1);

    const inbox = (n: number) =>
      t.call({
        method: 'POST',
        url: `${A()}/inboxes`,
        auth: ownerA(),
        payload: { name: `site ${n}`, channel: 'web', config: { allowedOrigins: ['https://example.com'] } },
      });
    const inboxes = await Promise.all([inbox(1), inbox(2)]);
    expect(inboxes.map((r) => r.statusCode).sort()).toEqual([201, 429]);
    expect(inboxes.find((r) => r.statusCode === 429)!.json()).toMatchObject({ code: 'PLAN_LIMIT', details: { limit: 'inboxes', value: 1, used: 1 } });
    expect((await t.call({ method: 'GET', url: `${A()}/inboxes`, auth: ownerA() })).json().total).toBe(1);
  });

  it('members: invitations while there is room; of two invitees accepting for the last seat, one gets it', async () => {
    const invite = (email: string) => t.call({ method: 'POST', url: `${A()}/invitations`, auth: ownerA(), payload: { email, role: 'member' } });
    const first = await invite('seat1@example.com');
    const second = await invite('seat2@example.com');
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    const token = (res: typeof first) => new URL(res.json().url as string).searchParams.get('token')!;
    const accepts = await Promise.all(
      [first, second].map((res) => t.call({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token: token(res), password: TEST_PASSWORD } })),
    );
    expect(accepts.map((r) => r.statusCode).sort()).toEqual([200, 429]);
    const refused = accepts.find((r) => r.statusCode === 429)!;
    expect(refused.json()).toMatchObject({ code: 'PLAN_LIMIT', details: { limit: 'members', value: 2, used: 2 } });
    // the refused invitee's account was not created, their invitation is still open
    const loser = accepts[0]!.statusCode === 429 ? 'seat1@example.com' : 'seat2@example.com';
    expect((await t.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: loser, password: TEST_PASSWORD } })).statusCode).toBe(401);
    // full: no more invitations
    const third = await invite('seat3@example.com');
    expect(third.statusCode).toBe(429);
    expect(third.json()).toMatchObject({ code: 'PLAN_LIMIT', details: { limit: 'members', value: 2, used: 2 } });
    expect((await t.call({ method: 'GET', url: `${A()}/plan`, auth: ownerA() })).json().used.members).toBe(2);
  });

  it('runs per month: 429 with Retry-After until the month ends; the webhook trigger answers 429; a schedule records a FAILED run', async () => {
    const create = async (nodes: unknown[]) => {
      const res = await t.call({ method: 'POST', url: `${A()}/workflows`, auth: ownerA(), payload: { name: 'wf', nodes, edges: [] } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: string; webhookUrl?: string };
    };
    const manual = await create([{ id: 'start', type: 'trigger.manual' }]);
    const run = () => t.call({ method: 'POST', url: `${A()}/workflows/${manual.id}/run`, auth: ownerA(), payload: {} });
    const started = await Promise.all([run(), run(), run()]);
    expect(started.map((r) => r.statusCode).sort()).toEqual([201, 201, 429]);
    const refused = started.find((r) => r.statusCode === 429)!;
    expect(refused.json()).toMatchObject({ code: 'PLAN_LIMIT', details: { limit: 'runsPerMonth', value: 2, used: 2 } });
    expect(refused.headers['retry-after']).toBe('3600');

    const hooked = await create([{ id: 'hook', type: 'trigger.webhook' }]);
    const hook = await t.call({ method: 'POST', url: new URL(hooked.webhookUrl!).pathname, payload: { a: 1 } });
    expect(hook.statusCode).toBe(429);
    expect(hook.json()).toMatchObject({ code: 'PLAN_LIMIT', details: { limit: 'runsPerMonth' } });
    expect(hook.headers['retry-after']).toBe('3600');

    const scheduled = await create([{ id: 'tick', type: 'trigger.schedule', params: { cron: '* * * * *' } }]);
    now += 90_000;
    await t.app.services.scheduler.round();
    const runs = (await t.call({ method: 'GET', url: `${A()}/runs?workflowId=${scheduled.id}`, auth: ownerA() })).json();
    expect(runs.items).toHaveLength(1);
    expect(runs.items[0]).toMatchObject({ status: 'FAILED', error: { code: 'PLAN_LIMIT', details: { limit: 'runsPerMonth', value: 2, used: 2 } } });
    expect((await t.call({ method: 'GET', url: `${A()}/plan`, auth: ownerA() })).json().used.runsPerMonth).toBe(2);

    // a new month (UTC): room again
    now = Date.parse('2026-12-01T00:00:05.000Z');
    const token = (await t.app.services.auth.login(t.orgA.ownerEmail, TEST_PASSWORD)).tokens.accessToken;
    const again = await t.call({ method: 'POST', url: `${A()}/workflows/${manual.id}/run`, auth: { token }, payload: {} });
    expect(again.statusCode).toBe(201);
    expect((await t.call({ method: 'GET', url: `${A()}/plan`, auth: { token } })).json().used.runsPerMonth).toBe(1);
    t.orgA.token = token;
  });

  it('agent runs per month: the second of the month is 429 with Retry-After', async () => {
    const start = () => t.call({ method: 'POST', url: `${A()}/agents/run`, auth: ownerA(), payload: { type: 'LEAD_QUALIFIER', task: 'qualify' } });
    expect((await start()).statusCode).toBe(202);
    const refused = await start();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'PLAN_LIMIT', details: { limit: 'agentRunsPerMonth', value: 1, used: 1 } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(30 * 24 * 3600 - 60);
  });
});

describe('campaign messages per month', () => {
  let t: TestApp;
  let smtp: SmtpStandIn;
  beforeAll(async () => {
    smtp = await new SmtpStandIn().start();
    now = Date.parse('2026-11-30T23:00:00.000Z');
    t = await buildTestApp({ env: { ...planEnv, SMTP_URL: smtp.url }, clock, workers: false });
    await t.app.services.plans.setPlan(t.orgA.orgId, 'mail');
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it("a campaign sends up to the month's messages, then pauses with the reason, and the owners are told", async () => {
    const base = `/api/v1/orgs/${t.orgA.orgId}`;
    const auth = { apiKey: t.orgA.apiKey };
    const ok = async (method: 'GET' | 'POST', url: string, payload?: object, status = 200) => {
      const res = await t.call({ method, url: `${base}${url}`, auth, ...(payload ? { payload } : {}) });
      expect(res.statusCode, res.body).toBe(status);
      return res.json();
    };
    const inbox = await ok('POST', '/inboxes', { name: 'Outreach', channel: 'email', config: { address: 'sales@shop.example.com' } }, 201);
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await ok('POST', '/leads', { name: `R${n}`, email: `r${n}@example.com` }, 201)).id);
    const campaign = await ok(
      'POST',
      '/campaigns',
      { name: 'Quota', inboxId: inbox.id, audience: { leadIds: ids }, steps: [{ delaySeconds: 0, subject: 'Hi', text: 'Hi' }] },
      201,
    );
    await ok('POST', `/campaigns/${campaign.id}/start`, {});
    const { campaigns } = t.app.services;
    while (await campaigns.round()) {
      /* until nothing is left to do now */
    }
    await campaigns.round();
    const paused = await ok('GET', `/campaigns/${campaign.id}`);
    expect(paused.status).toBe('PAUSED');
    // two sent (queued to the relay), the third waits
    expect((await ok('GET', `/campaigns/${campaign.id}/recipients?status=PENDING`)).total).toBe(1);
    expect(paused.pausedReason).toContain('campaignMessagesPerMonth limit is reached; resume it after 2026-12-01 (UTC)');
    expect((await ok('GET', '/plan')).used.campaignMessagesPerMonth).toBe(2);
    const notifications = await t.call({ method: 'GET', url: `${base}/notifications`, auth: { token: t.orgA.token } });
    expect(JSON.stringify(notifications.json())).toContain('Campaign \\"Quota\\" was paused');
  });
});

describe('npm run cli -- set-plan beside a running server', { timeout: 120_000 }, () => {
  const dir = embeddedDataDir('plans-cli-');
  const children = new Set<ChildProcess>();
  const env = { DATA_DIR: dir, APP_SECRET: 'plans-test-secret-long-enough', ...planEnv };
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = async (args: string[]) => {
    const child = spawn('npm', ['run', 'cli', '--', ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    children.delete(child);
    return { code, stdout, stderr };
  };

  it('assigns the plan through the server that holds the embedded database; an unknown plan lists the plans', async () => {
    const port = await freePort();
    const server = await startServer(
      port,
      { ...env, BOOTSTRAP_EMAIL: 'plans@example.com', BOOTSTRAP_PASSWORD: 'plans password 1', BOOTSTRAP_ORG: 'Planned Co' },
      children,
    );
    const owner = await ownerClient(port, 'plans@example.com', 'plans password 1');
    expect((await owner.call('GET', '/plan')).plan).toBe('starter');

    const set = await cli(['set-plan', '--org', 'Planned Co', '--plan', 'bare']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain(`process ${server.pid}, holds the embedded database: done through it`);
    expect(set.stdout).toMatch(/Organization "Planned Co" \(org_\w+\) is now on plan "bare"\./);
    expect((await owner.call('GET', '/plan')).plan).toBe('bare');
    const refused = await fetch(`${owner.org}/workflows`, {
      headers: {
        authorization: `Bearer ${(await (await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'plans@example.com', password: 'plans password 1' }) })).json()).tokens.accessToken}`,
      },
    });
    expect(refused.status).toBe(403);

    const unknown = await cli(['set-plan', '--org', 'Planned Co', '--plan', 'gold']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Error: No plan "gold"; the plans are: starter, bare, pro, mail');
    server.kill('SIGTERM');
  });
});
