import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_EVENT_NAMES } from '../src/shared/event-names.ts';
import { LEAD_STATUSES } from '../src/shared/leads.ts';
import { runAgent } from './agents.ts';
import { GoogleStandIn } from './google-stand-in.ts';
import { buildTestApp, type TestApp } from './harness.ts';
import { eventually } from './helpers.ts';
import { follow, OAuthStandIn } from './oauth-provider.ts';
import { Receiver, type Received } from './receiver.ts';
import { SmtpStandIn } from './smtp.ts';
import { startSocialStandIn, type StandIn } from './social-stand-in.ts';
import { SseClient } from './sse-client.ts';
import { api, manual } from './workflows.ts';

/**
 * SPEC "Outbound webhooks: platform events", end to end: one endpoint subscribed to `*` on a real
 * receiver, each of the 28 events caused through the HTTP API as a user would (outside parties are
 * the loopback stand-ins the other tests use), and every SPEC payload field read from the signed
 * body that arrived — plus the organization stream's `conversation.message` on a real SSE client.
 * docs/webhooks.md's examples are held to what was delivered: a documented field is a sent field.
 */

// ---- The catalog: SPEC's table, one entry per event; a key ending in `?` is SPEC's optional field.

interface Type {
  name: string;
  check(value: unknown, path: string, problems: string[]): void;
}
type Fields = Record<string, Type>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const is = (name: string, test: (v: unknown) => boolean): Type => ({
  name,
  check: (v, path, problems) => {
    if (!test(v)) problems.push(`${path} is ${JSON.stringify(v)}, not ${name}`);
  },
});
const str = is('a string', (v) => typeof v === 'string');
const text = is('a non-empty string', (v) => typeof v === 'string' && v.length > 0);
const num = is('a number', (v) => typeof v === 'number' && Number.isFinite(v));
const bool = is('a boolean', (v) => typeof v === 'boolean');
const date = is('an ISO 8601 time', (v) => typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) && !Number.isNaN(Date.parse(v)));
const day = is('a YYYY-MM-DD day', (v) => typeof v === 'string' && /^\d{4}-\d\d-\d\d$/.test(v));
const anyValue = is('a value', (v) => v !== undefined);
const id = (prefix: string) => is(`a ${prefix}_ id`, (v) => typeof v === 'string' && new RegExp(`^${prefix}_[0-9a-z]{26}$`).test(v));
const oneOf = (...values: string[]) => is(`one of ${values.join(', ')}`, (v) => typeof v === 'string' && values.includes(v));
const orNull = (t: Type): Type => ({
  name: `${t.name} or null`,
  check: (v, path, problems) => {
    if (v !== null) t.check(v, path, problems);
  },
});
const list = (t: Type): Type => ({
  name: 'an array',
  check: (v, path, problems) => {
    if (!Array.isArray(v)) problems.push(`${path} is ${JSON.stringify(v)}, not an array`);
    else v.forEach((item, i) => t.check(item, `${path}[${i}]`, problems));
  },
});
/** A JSON object with these fields (more are allowed: SPEC names the main ones). */
const obj = (fields: Fields): Type & { fields: Fields } => ({
  name: 'an object',
  fields,
  check: (v, path, problems) => {
    if (!isObject(v)) problems.push(`${path} is ${JSON.stringify(v)}, not an object`);
    else checkFields(fields, v, path, problems);
  },
});
/** An object whose every value is `t` (`changes { field: { from, to } }`). */
const recordOf = (t: Type): Type => ({
  name: 'an object',
  check: (v, path, problems) => {
    if (!isObject(v) || Object.keys(v).length === 0) problems.push(`${path} is ${JSON.stringify(v)}, not a non-empty object`);
    else for (const [k, item] of Object.entries(v)) t.check(item, `${path}.${k}`, problems);
  },
});

function checkFields(fields: Fields, value: Record<string, unknown>, path: string, problems: string[]): void {
  for (const [key, type] of Object.entries(fields)) {
    const name = key.replace(/\?$/, '');
    if (!(name in value)) {
      if (!key.endsWith('?')) problems.push(`${path}.${name} is missing`);
      continue;
    }
    type.check(value[name], `${path}.${name}`, problems);
  }
}

const LEAD = obj({
  id: id('lead'),
  name: orNull(str),
  email: orNull(str),
  phone: orNull(str),
  company: orNull(str),
  website: orNull(str),
  status: oneOf(...LEAD_STATUSES),
  score: num,
  tags: list(str),
  source: orNull(str),
});
const POST = obj({ id: id('post'), platform: oneOf('LINKEDIN', 'X'), body: text, status: str, scheduledAt: orNull(date), integrationId: orNull(id('int')) });
const CAMPAIGN = obj({ id: id('cmp'), name: text, channel: text, total: num });
const ACTOR = obj({ type: text, id: text });
const CHANNEL = text;

const CATALOG: Record<string, Fields> = {
  'lead.created': { lead: LEAD },
  'lead.updated': { lead: LEAD, changes: recordOf(obj({ from: anyValue, to: anyValue })), actor: ACTOR },
  'lead.qualified': { lead: LEAD, score: num, scoreReason: orNull(str), 'agentRunId?': id('arun') },
  'lead.replied': { lead: LEAD, conversationId: id('conv'), channel: CHANNEL, text: str },
  'message.received': {
    conversationId: id('conv'),
    channel: CHANNEL,
    contactId: id('ctc'),
    contactName: orNull(str),
    text: str,
    'mediaUrl?': text,
    'leadId?': id('lead'),
  },
  'message.sent': { conversationId: id('conv'), channel: CHANNEL, to: text, text: str, sender: oneOf('bot', 'human', 'campaign'), messageId: id('msg') },
  'conversation.opened': { conversationId: id('conv'), channel: CHANNEL, contactId: id('ctc'), 'leadId?': id('lead') },
  'conversation.handoff': { conversationId: id('conv'), reason: orNull(str), 'assignedToId?': id('usr'), by: oneOf('bot', 'human') },
  'conversation.closed': { conversationId: id('conv'), resolvedBy: oneOf('bot', 'human'), durationSec: num },
  'post.created': { post: POST },
  'post.approved': { post: POST, approvedBy: ACTOR, 'editedBody?': text },
  'post.published': { post: POST, externalId: text, url: text, publishedAt: date },
  'post.failed': { post: POST, error: obj({ code: text, message: text, retryable: bool }) },
  'campaign.started': { campaign: CAMPAIGN },
  'campaign.finished': { campaign: CAMPAIGN, stats: obj({ sent: num, delivered: num, read: num, replied: num, failed: num, skipped: num }) },
  'workflow.run.started': { runId: id('run'), workflowId: id('wf'), workflowName: text, triggerType: text },
  'workflow.run.finished': { runId: id('run'), workflowId: id('wf'), status: oneOf('SUCCEEDED'), costUsd: num, durationMs: num, itemCount: num },
  'workflow.run.failed': { runId: id('run'), workflowId: id('wf'), error: text, failedNodeId: text, failedNodeName: text },
  'agent.run.finished': {
    agentRunId: id('arun'),
    type: text,
    status: oneOf('succeeded', 'failed', 'budget_exceeded', 'max_steps'),
    summary: str,
    usage: obj({ inputTokens: num, outputTokens: num, costUsd: num, modelId: text }),
    'reportId?': id('rep'),
  },
  'agent.report.created': { report: obj({ id: id('rep'), type: text, title: text, summary: str, metrics: obj({}) }), agentType: text, agentRunId: id('arun') },
  'analytics.synced': { integrationId: id('int'), source: oneOf('ga4', 'gsc'), date: day, metrics: obj({}) },
  'analytics.threshold': { ruleId: id('arl'), metric: text, value: num, threshold: num, compare: text, direction: text },
  'integration.connected': { integrationId: id('int'), provider: text, name: text, 'projectId?': id('prj') },
  'integration.error': { integrationId: id('int'), provider: text, code: text, message: text },
  'approval.requested': { approvalId: id('apr'), title: text, description: orNull(str), runId: id('run'), nodeId: text, expiresAt: orNull(date) },
  'approval.resolved': { approvalId: id('apr'), decision: oneOf('approved', 'rejected'), by: text, 'comment?': str, 'editedPayload?': anyValue },
  'budget.warning': { scope: oneOf('organization', 'workflow'), limitUsd: num, usedUsd: num, pct: num },
  'budget.exceeded': { scope: oneOf('organization', 'workflow'), limitUsd: num, usedUsd: num, 'runId?': id('run') },
};

/** The organization stream's `conversation.message`: SPEC's conversation message. */
const STREAM_MESSAGE: Fields = {
  conversationId: id('conv'),
  channel: CHANNEL,
  message: obj({ id: id('msg'), direction: oneOf('in', 'out'), sender: oneOf('contact', 'bot', 'human', 'campaign'), text: str, at: date }),
};

/** What a payload lacks or has wrong against its catalog entry. */
function problemsOf(fields: Fields, payload: unknown, path = 'payload'): string[] {
  const problems: string[] = [];
  if (!isObject(payload)) return [`${path} is not an object`];
  checkFields(fields, payload, path, problems);
  return problems;
}

// ---- The world: the app, the receiver and the outside parties.

let t: TestApp;
let hooks: Receiver;
let smtp: SmtpStandIn;
let social: StandIn;
let oauth: OAuthStandIn;
let google: GoogleStandIn;
let stream: SseClient;
let secret: string;
let base: string;
const owner = () => ({ token: t.orgA.token });
let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}`;

interface Envelope {
  id: string;
  type: string;
  organizationId: string;
  at: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  payload: Record<string, any>;
}

beforeAll(async () => {
  hooks = await new Receiver().start();
  smtp = await new SmtpStandIn().start();
  social = await startSocialStandIn();
  oauth = await new OAuthStandIn().start();
  google = await new GoogleStandIn().start();
  google.isValid = (token) => oauth.isValid(token);
  t = await buildTestApp({
    env: {
      ...oauth.env(),
      ...google.env(),
      SMTP_URL: smtp.url,
      LINKEDIN_API_URL: social.url,
      X_API_URL: social.url,
      PUBLIC_URL: 'https://svc.example.com',
      PUBLISHER_POLL_MS: '50',
      WORKFLOW_POLL_MS: '100',
      // The offline model costs money here: the month has spending for the budget events.
      MODEL_PRICES: JSON.stringify({ offline: { inputPerMTok: 100, outputPerMTok: 100 } }),
    },
  });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const endpoint = await t.call({ method: 'POST', url: `${base}/webhook-endpoints`, auth: owner(), payload: { url: hooks.url('/hook'), events: ['*'] } });
  expect(endpoint.statusCode, endpoint.body).toBe(201);
  secret = endpoint.json().secret;
  const { port } = t.app.server.address() as { port: number };
  stream = await SseClient.open(`http://127.0.0.1:${port}${base}/events`, { authorization: `Bearer ${t.orgA.token}` });
  expect(stream.status).toBe(200);
});
afterAll(async () => {
  stream?.close();
  await t?.close();
  await Promise.all([hooks?.stop(), smtp?.close(), social?.close(), oauth?.stop(), google?.stop()]);
});

function signed(req: Received): boolean {
  const expected =
    'sha256=' +
    createHmac('sha256', secret)
      .update(`${String(req.headers['x-service-timestamp'])}.${req.raw}`)
      .digest('hex');
  const got = String(req.headers['x-service-signature'] ?? '');
  return got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}

/** Every platform event the endpoint got (once each: delivery is at least once), checked for its signature. */
function deliveries(type?: string): Envelope[] {
  const byId = new Map<string, Envelope>();
  for (const req of hooks.received) {
    if (!req.url.startsWith('/hook')) continue;
    const envelope = req.json as Envelope;
    if (type && envelope.type !== type) continue;
    if (!signed(req)) throw new Error(`delivery of ${envelope.type} ${envelope.id} is not signed with the endpoint secret`);
    expect(req.headers['x-service-event']).toBe(envelope.type);
    byId.set(envelope.id, envelope);
  }
  return [...byId.values()];
}

/** Waits for the delivery of an event of this type whose payload matches, and checks it against the catalog. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function delivered(type: string, match: (payload: Record<string, any>) => boolean = () => true): Promise<Record<string, any>> {
  const envelope = await eventually(() => deliveries(type).find((e) => match(e.payload)), 15_000);
  expect(envelope.organizationId).toBe(t.orgA.orgId);
  expect(problemsOf(CATALOG[type]!, envelope.payload), `${type}: ${JSON.stringify(envelope.payload)}`).toEqual([]);
  return envelope.payload;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function post<T = Record<string, any>>(path: string, payload: unknown, status = 201): Promise<T> {
  const res = await t.call({ method: 'POST', url: `${base}${path}`, auth: owner(), payload: payload as object });
  expect(res.statusCode, `POST ${path}: ${res.body}`).toBe(status);
  return res.json() as T;
}

/** A lead with every field SPEC's `lead` names (each one its own person: leads are merged on e-mail, phone and website). */
const person = (label: string) => {
  const key = unique(label);
  return {
    name: `Ada ${label}`,
    email: `${key}@lovelace.example`,
    phone: `+1415555${String(1000 + counter).slice(-4)}`,
    company: 'Analytical Engines',
    website: `https://${key}.lovelace.example`,
    source: 'referral',
    tags: ['catalog'],
  };
};

// ---- Causing each event.

describe('platform events, as delivered', () => {
  it("the catalog is SPEC's 28 events", () => {
    expect(Object.keys(CATALOG).sort()).toEqual([...PLATFORM_EVENT_NAMES].sort());
  });

  it('leads: lead.created and lead.updated (with the changes and who made them)', async () => {
    const lead = await post('/leads', person('created'));
    expect((await delivered('lead.created', (p) => p.lead.id === lead.id)).lead).toMatchObject({ email: lead.email, tags: ['catalog'] });
    const patched = await t.call({ method: 'PATCH', url: `${base}/leads/${lead.id}`, auth: owner(), payload: { status: 'CONTACTED' } });
    expect(patched.statusCode, patched.body).toBe(200);
    const updated = await delivered('lead.updated', (p) => p.lead.id === lead.id);
    expect(updated).toMatchObject({ changes: { status: { from: 'NEW', to: 'CONTACTED' } }, actor: { type: 'user', id: t.orgA.ownerId } });
  });

  it("conversations: opened with the lead, message.sent, message.received from the lead, lead.replied, handoff and closed; the stream's conversation.message", async () => {
    const inbox = await post('/inboxes', { name: unique('api'), channel: 'api', config: { url: hooks.url('/inbox') } });
    const lead = await post('/leads', person('reached'));
    const conversation = await post('/conversations', { inboxId: inbox.id, leadId: lead.id, text: 'Hello from us' });
    expect(await delivered('conversation.opened', (p) => p.conversationId === conversation.id)).toMatchObject({ channel: 'api', leadId: lead.id });
    const sent = await delivered('message.sent', (p) => p.conversationId === conversation.id);
    expect(sent).toMatchObject({ channel: 'api', to: lead.email, text: 'Hello from us', sender: 'human' });

    const inbound = await post(`/inboxes/${inbox.id}/messages`, { contact: { name: 'Ada Reached', address: lead.email }, text: 'Tell me more' });
    const received = await delivered('message.received', (p) => p.conversationId === conversation.id);
    expect(received).toMatchObject({ channel: 'api', contactName: 'Ada Reached', text: 'Tell me more', leadId: lead.id });
    expect(await delivered('lead.replied', (p) => p.conversationId === conversation.id)).toMatchObject({
      lead: { id: lead.id },
      channel: 'api',
      text: 'Tell me more',
    });

    const member = await t.member(t.orgA.orgId, 'member');
    await post(`/conversations/${conversation.id}/handoff`, { reason: 'pricing', assigneeId: member.userId }, 200);
    expect(await delivered('conversation.handoff', (p) => p.conversationId === conversation.id)).toMatchObject({
      reason: 'pricing',
      assignedToId: member.userId,
      by: 'human',
    });
    const answer = await post(`/conversations/${conversation.id}/messages`, { text: 'Prices are on their way' });
    await delivered('message.sent', (p) => p.messageId === answer.id);
    await post(`/conversations/${conversation.id}/close`, undefined, 200);
    expect(await delivered('conversation.closed', (p) => p.conversationId === conversation.id)).toMatchObject({ resolvedBy: 'human' });

    // The organization stream: SPEC's conversation message, for the first message a person sent, the
    // inbound message and the answer.
    const heard = (messageId: string) => stream.events('conversation.message').some((m) => (m.data as { message: { id: string } }).message.id === messageId);
    await stream.until(() => heard(sent.messageId as string) && heard(inbound.id) && heard(answer.id));
    const messages = stream
      .events('conversation.message')
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      .map((m) => m.data as Record<string, any>)
      .filter((d) => d.conversationId === conversation.id);
    for (const data of messages) expect(problemsOf(STREAM_MESSAGE, data, 'data'), JSON.stringify(data)).toEqual([]);
    expect(messages.find((d) => d.message.id === inbound.id)).toMatchObject({
      channel: 'api',
      message: { direction: 'in', sender: 'contact', text: 'Tell me more' },
    });
    expect(messages.find((d) => d.message.id === answer.id)).toMatchObject({
      channel: 'api',
      message: { direction: 'out', sender: 'human', text: 'Prices are on their way' },
    });
    expect(messages.find((d) => d.message.id === sent.messageId)).toMatchObject({
      channel: 'api',
      message: { direction: 'out', sender: 'human', text: 'Hello from us' },
    });
  });

  it('posts: integration.connected (in a project), post.created, post.approved with the edited body, post.published; post.failed and integration.error on refused credentials', async () => {
    const connect = async (token: string) =>
      post('/integrations', { provider: 'x', name: `X ${token}`, projectId: t.orgA.projectId, credentials: { accessToken: token } });
    const good = await connect(unique('ok-x'));
    expect(await delivered('integration.connected', (p) => p.integrationId === good.id)).toMatchObject({ provider: 'x', projectId: t.orgA.projectId });
    const draft = await post('/content', { platform: 'X', body: 'Draft text', integrationId: good.id });
    expect((await delivered('post.created', (p) => p.post.id === draft.id)).post).toMatchObject({ status: 'DRAFT', integrationId: good.id });
    await post(`/content/${draft.id}/approve`, { body: 'Approved text' }, 200);
    expect(await delivered('post.approved', (p) => p.post.id === draft.id)).toMatchObject({
      editedBody: 'Approved text',
      approvedBy: { type: 'user', id: t.orgA.ownerId },
    });
    const published = await delivered('post.published', (p) => p.post.id === draft.id);
    expect(published).toMatchObject({ post: { status: 'PUBLISHED', body: 'Approved text' }, url: `https://x.com/i/web/status/${published.externalId}` });

    const refused = await connect(unique('revoked-x'));
    const doomed = await post('/content', { platform: 'X', body: 'Will not go out', integrationId: refused.id });
    await post(`/content/${doomed.id}/approve`, {}, 200);
    expect(await delivered('post.failed', (p) => p.post.id === doomed.id)).toMatchObject({
      post: { status: 'FAILED' },
      error: { code: 'INTEGRATION_AUTH', retryable: false },
    });
    expect(await delivered('integration.error', (p) => p.integrationId === refused.id)).toMatchObject({ provider: 'x', code: 'INTEGRATION_AUTH' });
  });

  it('campaigns: campaign.started and campaign.finished with the stats, over e-mail', async () => {
    const inbox = await post('/inboxes', {
      name: unique('mail'),
      channel: 'email',
      config: { address: `${unique('sales')}@shop.example.com`, fromName: 'Shop' },
    });
    const tag = unique('wave');
    const lead = await post('/leads', { ...person('campaign'), tags: [tag] });
    const campaign = await post('/campaigns', {
      name: 'Welcome',
      inboxId: inbox.id,
      audience: { tags: [tag] },
      steps: [{ delaySeconds: 0, subject: 'Hello {{ lead.name }}', text: 'Welcome!' }],
    });
    await post(`/campaigns/${campaign.id}/start`, {}, 200);
    expect(await delivered('campaign.started', (p) => p.campaign.id === campaign.id)).toMatchObject({
      campaign: { name: 'Welcome', channel: 'email', total: 1 },
    });
    expect(await delivered('campaign.finished', (p) => p.campaign.id === campaign.id)).toMatchObject({ stats: { sent: 1, failed: 0, skipped: 0 } });
    expect(await delivered('message.sent', (p) => p.to === lead.email)).toMatchObject({ channel: 'email', sender: 'campaign' });
    expect(smtp.received.some((m) => m.rcptTo.includes(lead.email))).toBe(true);
  });

  it('agents: lead.qualified by the run, agent.report.created and agent.run.finished with the report', async () => {
    const lead = await post('/leads', person('qualified'));
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'LEAD_QUALIFIER', task: 'Qualify', input: { leadIds: [lead.id], threshold: 50 } });
    expect(run.status).toBe('succeeded');
    expect(await delivered('lead.qualified', (p) => p.lead.id === lead.id)).toMatchObject({ lead: { status: 'QUALIFIED' }, agentRunId: run.id });
    expect(await delivered('agent.report.created', (p) => p.agentRunId === run.id)).toMatchObject({
      agentType: 'LEAD_QUALIFIER',
      report: { id: run.reportId },
    });
    expect(await delivered('agent.run.finished', (p) => p.agentRunId === run.id)).toMatchObject({
      type: 'LEAD_QUALIFIER',
      status: 'succeeded',
      reportId: run.reportId,
      usage: { modelId: 'offline' },
    });
  });

  it('workflows: started, approval requested and resolved, finished; a run over its budget fails (workflow.run.failed, budget.exceeded with the run)', async () => {
    const w = api(t);
    const flow = await w.create(
      [
        manual,
        {
          id: 'ask',
          type: 'flow.approval',
          name: 'Ask the editor',
          params: { title: 'Publish {{ topic }}?', description: 'Check it', expiresInSeconds: 3600 },
        },
        { id: 'yes', type: 'data.set', params: { fields: { outcome: 'approved' } } },
      ],
      [
        { from: 'start', to: 'ask' },
        { from: 'ask', to: 'yes', output: 'approved' },
      ],
    );
    const started = await w.run(flow.id, { input: { topic: 'AI' } });
    expect(await delivered('workflow.run.started', (p) => p.runId === started.id)).toMatchObject({ workflowId: flow.id, workflowName: 'wf' });
    const requested = await delivered('approval.requested', (p) => p.runId === started.id);
    expect(requested).toMatchObject({ title: 'Publish AI?', description: 'Check it', nodeId: 'ask' });
    await post(`/approvals/${requested.approvalId}/approve`, { comment: 'ship it', editedPayload: { topic: 'AI agents' } }, 200);
    expect(await delivered('approval.resolved', (p) => p.approvalId === requested.approvalId)).toMatchObject({
      decision: 'approved',
      comment: 'ship it',
      editedPayload: { topic: 'AI agents' },
    });
    expect(await delivered('workflow.run.finished', (p) => p.runId === started.id)).toMatchObject({ status: 'SUCCEEDED', itemCount: 1 });

    const costly = await w.create(
      [manual, { id: 'agent', type: 'ai.agent', name: 'Digest', params: { type: 'REPORT_WRITER', task: 'Digest' } }],
      [{ from: 'start', to: 'agent' }],
      { budgetUsd: 0.05 },
    );
    const failing = await w.run(costly.id, {});
    expect(await delivered('workflow.run.failed', (p) => p.runId === failing.id)).toMatchObject({
      workflowId: costly.id,
      failedNodeId: 'agent',
      failedNodeName: 'Digest',
    });
    expect(await delivered('budget.exceeded', (p) => p.runId === failing.id)).toMatchObject({ scope: 'workflow', limitUsd: 0.05 });
    expect(await delivered('agent.run.finished', (p) => p.status === 'budget_exceeded')).toMatchObject({ type: 'REPORT_WRITER' });
  });

  it("analytics: integration.connected through Google's consent, analytics.synced and analytics.threshold", async () => {
    const property = 'properties/4242';
    const days: Record<string, { sessions: number; totalUsers: number; keyEvents: number }> = {};
    for (let back = 0; back <= 6; back++)
      days[new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10)] = { sessions: 800, totalUsers: 600, keyEvents: 12 };
    google.setGa4(property, days);
    // The browser's round trip: start, Google's consent, the callback with the start's cookie.
    const started = await t.call({ method: 'POST', url: `${base}/integrations/oauth/google/start`, auth: owner(), payload: {} });
    expect(started.statusCode, started.body).toBe(200);
    const callback = new URL(await follow(started.json().authorizationUrl));
    const back = await t.call({
      method: 'GET',
      url: callback.pathname + callback.search,
      cookies: Object.fromEntries(started.cookies.map((c) => [c.name, c.value])),
    });
    expect(back.statusCode, back.body).toBe(302);
    const integrationId = new URL(back.headers.location as string).searchParams.get('connected')!;
    expect(await delivered('integration.connected', (p) => p.integrationId === integrationId)).toMatchObject({ provider: 'google' });
    // The rule first: whichever sync fetches the property (the daily one may start once it is chosen) evaluates it.
    const rule = await post('/analytics/rules', {
      name: 'Traffic spike',
      integrationId,
      metric: 'ga4.sessions',
      compare: 'above',
      threshold: 500,
      window: 'day',
    });
    const patched = await t.call({
      method: 'PATCH',
      url: `${base}/integrations/${integrationId}`,
      auth: owner(),
      payload: { config: { propertyId: property } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    await post(`/integrations/${integrationId}/sync`, {}, 202);
    const synced = await delivered('analytics.synced', (p) => p.integrationId === integrationId && p.source === 'ga4');
    expect(synced.metrics).toMatchObject({ sessions: 800, users: 600, conversions: 12 });
    expect(await delivered('analytics.threshold', (p) => p.ruleId === rule.id)).toMatchObject({
      metric: 'ga4.sessions',
      value: 800,
      threshold: 500,
      compare: 'above',
      direction: 'up',
    });
  });

  it("budgets: budget.warning and budget.exceeded when a limit under the month's spending is set", async () => {
    const budget = (await t.call({ method: 'GET', url: `${base}/budget`, auth: owner() })).json();
    expect(budget.usedUsd).toBeGreaterThan(0);
    const limit = Math.round((budget.usedUsd / 2) * 1e6) / 1e6;
    const set = await t.call({ method: 'PUT', url: `${base}/budget`, auth: owner(), payload: { monthlyLimitUsd: limit } });
    expect(set.statusCode, set.body).toBe(200);
    expect(await delivered('budget.warning', (p) => p.limitUsd === limit)).toMatchObject({ scope: 'organization', usedUsd: budget.usedUsd });
    expect(await delivered('budget.exceeded', (p) => p.limitUsd === limit)).toMatchObject({ scope: 'organization', usedUsd: budget.usedUsd });
  });

  it("every one of the 28 events arrived, and every delivery carries SPEC's fields", () => {
    const all = deliveries();
    expect(PLATFORM_EVENT_NAMES.filter((name) => !all.some((e) => e.type === name))).toEqual([]);
    const wrong = all.filter((e) => CATALOG[e.type]).flatMap((e) => problemsOf(CATALOG[e.type]!, e.payload, e.type));
    expect(wrong).toEqual([]);
  });
});

// ---- docs/webhooks.md: every example is SPEC's payload, and shows only what is sent.

/** The examples of the "Events and their payloads" section: a `#### \`name\`` heading, then a ```json block. */
function documentedExamples(): Map<string, unknown> {
  const doc = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8');
  const start = doc.indexOf('\n## Events and their payloads');
  expect(start, 'docs/webhooks.md has no "Events and their payloads" section').toBeGreaterThan(0);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  const examples = new Map<string, unknown>();
  for (const m of section.matchAll(/^#### `([a-z.]+)`[^\n]*\n[\s\S]*?```json\n([\s\S]*?)```/gm)) {
    expect(examples.has(m[1]!), `${m[1]} is documented twice`).toBe(false);
    examples.set(m[1]!, JSON.parse(m[2]!));
  }
  return examples;
}

/** Paths of the example that no delivered payload has (objects by key, arrays by their items). */
function unsent(example: unknown, real: unknown[], path: string, out: string[]): string[] {
  if (Array.isArray(example)) {
    const items = real.filter(Array.isArray).flat();
    for (const item of example) unsent(item, items, `${path}[]`, out);
  } else if (isObject(example)) {
    const objects = real.filter(isObject);
    for (const [key, value] of Object.entries(example)) {
      const having = objects.filter((o) => key in o);
      if (having.length === 0) out.push(`${path}.${key}`);
      else
        unsent(
          value,
          having.map((o) => o[key]),
          `${path}.${key}`,
          out,
        );
    }
  }
  return out;
}

describe('docs/webhooks.md', () => {
  it("shows one example per event and the stream's conversation.message, each with SPEC's fields and only fields the service sends", () => {
    const examples = documentedExamples();
    expect([...examples.keys()].sort()).toEqual([...PLATFORM_EVENT_NAMES, 'conversation.message'].sort());
    const all = deliveries();
    const problems: string[] = [];
    for (const name of PLATFORM_EVENT_NAMES) {
      const example = examples.get(name);
      problems.push(...problemsOf(CATALOG[name]!, example, name));
      const real = all.filter((e) => e.type === name).map((e) => e.payload);
      problems.push(...unsent(example, real, name, []).map((path) => `${path} is shown but was in no delivery`));
    }
    const example = examples.get('conversation.message');
    problems.push(...problemsOf(STREAM_MESSAGE, example, 'conversation.message'));
    problems.push(
      ...unsent(
        example,
        stream.events('conversation.message').map((m) => m.data),
        'conversation.message',
        [],
      ).map((path) => `${path} is shown but was in no stream message`),
    );
    expect(problems).toEqual([]);
  });
});
