import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, eq, sql } from 'drizzle-orm';
import { buildTestApp, type OrgFixture, type TestApp } from '../../../test/harness.ts';
import { Receiver } from '../../../test/receiver.ts';
import { ModelServer, type ChatRequest, type Reply } from '../../../test/model-server.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { agentRuns } from '../agents/tables.ts';
import { TOOLS } from '../agents/tools/index.ts';
import { conversations, messages } from './tables.ts';

/**
 * The conversations bot end to end: inbound messages on an api inbox (the customer's system posts
 * them; the bot's answers arrive at a loopback receiver as signed webhooks), the offline model
 * answering from the inbox's FAQ, and a loopback OpenAI-compatible model (behind a gate the test
 * opens) where a test needs a turn held open.
 */

/** A loopback proxy in front of the model server that holds each request until the test opens the gate. */
class Gate {
  private server: Server | null = null;
  private waiting: (() => void)[] = [];
  private open = true;
  arrived = 0;

  async start(target: string): Promise<string> {
    const upstream = new URL(target);
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.arrived++;
        const forward = () => {
          const out = httpRequest(
            {
              host: upstream.hostname,
              port: upstream.port,
              method: req.method,
              path: `${upstream.pathname}${req.url!.replace(/^\/v1/, '')}`,
              headers: req.headers,
            },
            (answer) => {
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(res);
            },
          );
          out.on('error', () => res.destroy());
          out.end(Buffer.concat(chunks));
        };
        if (this.open) forward();
        else this.waiting.push(forward);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}/v1`;
  }

  close(): void {
    this.open = false;
  }

  release(): void {
    this.open = true;
    for (const go of this.waiting.splice(0)) go();
  }

  async stop(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const PRICE = 100; // USD per million tokens for the offline model, so a turn has a cost
let t: TestApp;
let rx: Receiver;
let model: ModelServer;
let gate: Gate;

beforeAll(async () => {
  model = new ModelServer();
  const upstream = await model.start();
  gate = new Gate();
  const gated = await gate.start(upstream);
  rx = await new Receiver().start();
  t = await buildTestApp({
    env: {
      WEBHOOK_RETRY_DELAYS_S: '0,0',
      WEBHOOK_TIMEOUT_MS: '2000',
      OPENAI_COMPATIBLE_BASE_URL: gated,
      MODEL_PRICES: JSON.stringify({ offline: { inputPerMTok: PRICE, outputPerMTok: PRICE } }),
    },
  });
});
afterAll(async () => {
  await t.close();
  await rx.stop();
  await gate.stop();
  await model.stop();
});

const base = (org: OrgFixture = t.orgA) => `/api/v1/orgs/${org.orgId}`;
const owner = (org: OrgFixture = t.orgA) => ({ token: org.token });
let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}`;

const FAQ = [
  { question: 'What are your opening hours?', answer: 'We are open Monday to Friday, 9:00 to 17:00.' },
  { question: 'How much does shipping cost?', answer: 'Shipping is free above 50 EUR, else 4.90 EUR.' },
  { question: 'Do you ship internationally?', answer: 'We ship to every EU country.' },
];

interface Inbox {
  id: string;
}
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function botInbox(bot: Record<string, unknown> = { enabled: true }, org: OrgFixture = t.orgA): Promise<Inbox> {
  const res = await t.call({
    method: 'POST',
    url: `${base(org)}/inboxes`,
    auth: owner(org),
    payload: { name: unique('bot'), channel: 'api', config: { url: rx.url(`/bot/${unique('in')}`), faq: FAQ }, bot },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The customer's system posts what a contact wrote; answers the conversation id. */
async function say(inbox: Inbox, address: string, text: string, org: OrgFixture = t.orgA): Promise<string> {
  const res = await t.call({
    method: 'POST',
    url: `${base(org)}/inboxes/${inbox.id}/messages`,
    auth: { apiKey: org.apiKey },
    payload: { contact: { name: 'Ann', address }, text },
  });
  expect(res.statusCode, res.body).toBe(201);
  const [row] = await t.database.db.select().from(messages).where(eq(messages.id, res.json().id));
  return row!.conversationId;
}

async function thread(conversationId: string, org: OrgFixture = t.orgA): Promise<Json[]> {
  const res = await t.call({ method: 'GET', url: `${base(org)}/conversations/${conversationId}/messages?pageSize=100`, auth: owner(org) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items;
}

async function conversation(id: string, org: OrgFixture = t.orgA): Promise<Json> {
  return (await t.call({ method: 'GET', url: `${base(org)}/conversations/${id}`, auth: owner(org) })).json();
}

/** The bot's turns of a conversation, oldest first. */
async function turns(conversationId: string) {
  return t.database.db
    .select()
    .from(agentRuns)
    .where(and(eq(agentRuns.type, 'CHATBOT'), sql`${agentRuns.input}->>'conversationId' = ${conversationId}`))
    .orderBy(asc(agentRuns.createdAt), asc(agentRuns.id));
}

const FINAL = ['succeeded', 'failed', 'canceled', 'budget_exceeded', 'max_steps'];

/** Everything the commits so far set in motion has happened: events dispatched, no turn waiting or running. */
async function settled(): Promise<void> {
  await eventually(async () => (await t.app.services.dispatcher.pending()) === 0);
  await eventually(async () => {
    const [open] = await t.database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(agentRuns)
      .where(sql`${agentRuns.status} in ('QUEUED', 'RUNNING')`);
    return open!.n === 0;
  });
}

const botSays = (items: Json[]) => items.filter((m) => m.sender === 'bot');

describe('the conversations bot', () => {
  it('answers from the FAQ as sender bot, delivered to the channel, with its turn recorded as an agent run with its cost in usage', async () => {
    const inbox = await botInbox();
    const id = await say(inbox, `${unique('ann')}@example.com`, 'Hi! What are your opening hours on Friday?');
    const answer = await eventually(async () => botSays(await thread(id)).find((m) => m.status === 'sent'));
    expect(answer).toMatchObject({ direction: 'out', sender: 'bot', text: FAQ[0]!.answer });
    const delivered = await eventually(() => rx.received.find((r) => (r.json as Json)?.payload?.message?.id === answer.id));
    expect((delivered.json as Json).payload.message).toMatchObject({ sender: 'bot', text: FAQ[0]!.answer });
    expect((await conversation(id)).handledBy).toBe('bot');

    const [turn] = await turns(id);
    expect(turn).toMatchObject({ status: 'succeeded', modelId: 'offline', projectId: t.orgA.projectId });
    const run = (await t.call({ method: 'GET', url: `${base()}/agent-runs/${turn!.id}`, auth: owner() })).json();
    expect(run.usage.inputTokens).toBeGreaterThan(0);
    expect(run.usage.costUsd).toBeGreaterThan(0);
    expect(run.steps.map((s: Json) => s.name).filter(Boolean)).toContain('reply');
    const usage = (await t.call({ method: 'GET', url: `${base()}/usage?groupBy=agentType`, auth: owner() })).json();
    const chatbot = usage.groups.find((g: Json) => g.key === 'CHATBOT');
    expect(chatbot.costUsd).toBeGreaterThan(0);
    expect(chatbot.runs).toBeGreaterThanOrEqual(1);
    await settled();
  });

  it('hands off to people when the contact asks for a person: conversation.handoff by the bot, a notification, and no bot reply then or after', async () => {
    const inbox = await botInbox();
    const id = await say(inbox, `${unique('bob')}@example.com`, 'I want to talk to a person please');
    const handed = await eventually(async () => {
      const c = await conversation(id);
      return c.handledBy === 'human' ? c : null;
    });
    expect(handed.handoffReason).toBe('contact asked for a person');
    const event = (await eventsOf(t, t.orgA.orgId, 'conversation.handoff')).find((e) => e.payload.conversationId === id);
    expect(event!.payload).toMatchObject({ by: 'bot', reason: 'contact asked for a person' });
    const notes = (await t.call({ method: 'GET', url: `${base()}/notifications?pageSize=100`, auth: owner() })).json();
    expect(notes.items.find((n: Json) => n.link === `/conversations/${id}`)).toMatchObject({ title: 'A conversation needs a person' });

    await say(inbox, `${(await conversation(id)).contact.address}`, 'What are your opening hours?');
    await settled();
    expect(botSays(await thread(id))).toHaveLength(0);
    expect(await turns(id)).toHaveLength(1);
  });

  it('hands off when the FAQ has no answer, and closes (resolved by the bot) after a thank-you', async () => {
    const inbox = await botInbox();
    const unknown = await say(inbox, `${unique('cy')}@example.com`, 'Can I pay with cryptocurrency?');
    await eventually(async () => (await conversation(unknown)).handoffReason === 'no answer in the FAQ');
    const address = `${unique('dee')}@example.com`;
    const id = await say(inbox, address, 'How much does shipping cost?');
    await eventually(async () => botSays(await thread(id)).length === 1);
    await settled();
    await say(inbox, address, "Thanks, that's all!");
    const closed = await eventually(async () => {
      const c = await conversation(id);
      return c.status === 'CLOSED' ? c : null;
    });
    expect(closed.resolvedBy).toBe('bot');
    expect(botSays(await thread(id)).map((m) => m.text)).toEqual([FAQ[1]!.answer, 'You are welcome! Glad I could help. Goodbye.']);
    await settled();
  });

  it('a human reply takes the conversation over: later messages start no turn and get no bot reply', async () => {
    const inbox = await botInbox();
    const address = `${unique('eve')}@example.com`;
    const id = await say(inbox, address, 'Do you ship internationally?');
    await eventually(async () => botSays(await thread(id)).length === 1);
    const human = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${id}/messages`,
      auth: owner(),
      payload: { text: 'Hi, Sam here — happy to help.' },
    });
    expect(human.statusCode, human.body).toBe(201);
    expect((await conversation(id)).handledBy).toBe('human');
    await say(inbox, address, 'What are your opening hours?');
    await settled();
    await t.app.services.conversationBot.round();
    expect(botSays(await thread(id))).toHaveLength(1);
    expect(await turns(id)).toHaveLength(1);
  });

  it("drops the bot's reply when a person takes over during the turn", async () => {
    const inbox = await botInbox({ enabled: true, modelId: 'openai-compatible:gated' });
    model.script = (request: ChatRequest): Reply =>
      ModelServer.toolResults(request).length === 0
        ? { toolCalls: [{ name: 'reply', arguments: { text: 'We are open 9 to 5.' } }] }
        : { content: 'Turn over.' };
    gate.close();
    const before = gate.arrived;
    const id = await say(inbox, `${unique('fay')}@example.com`, 'When are you open?');
    await eventually(() => gate.arrived > before);
    expect((await turns(id))[0]!.status).toBe('RUNNING');
    const human = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${id}/messages`,
      auth: owner(),
      payload: { text: 'A person here: we open at nine.' },
    });
    expect(human.statusCode).toBe(201);
    gate.release();
    const turn = await eventually(async () => {
      const [r] = await turns(id);
      return FINAL.includes(r!.status) ? r : null;
    });
    expect(turn!.status).toBe('succeeded');
    const steps = (await t.call({ method: 'GET', url: `${base()}/agent-runs/${turn!.id}`, auth: owner() })).json().steps;
    const result = steps.find((s: Json) => s.type === 'tool_result' && s.name === 'reply');
    expect(JSON.parse(result.output)).toMatchObject({ dropped: true, reason: 'a person handles this conversation' });
    await settled();
    expect(botSays(await thread(id))).toHaveLength(0);
    expect(rx.received.some((r) => (r.json as Json)?.payload?.conversation?.id === id && (r.json as Json).payload.message.sender === 'bot')).toBe(false);
  });

  it('takes one turn at a time per conversation: a message arriving during a turn is answered by the next turn', async () => {
    const inbox = await botInbox({ enabled: true, modelId: 'openai-compatible:gated' });
    model.script = (request: ChatRequest): Reply => {
      if (ModelServer.toolResults(request).length > 0) return { content: 'Answered.' };
      const user = String(request.messages.find((m) => m.role === 'user')?.content ?? '');
      const input = JSON.parse(user.slice(user.indexOf('{'), user.lastIndexOf('}') + 1)) as { messages: { text: string }[] };
      return { toolCalls: [{ name: 'reply', arguments: { text: `About: ${input.messages.map((m) => m.text).join(' + ')}` } }] };
    };
    gate.close();
    const before = gate.arrived;
    const address = `${unique('gus')}@example.com`;
    const id = await say(inbox, address, 'first question');
    await eventually(() => gate.arrived > before);
    await say(inbox, address, 'second question');
    const waiting = await eventually(async () => {
      const list = await turns(id);
      return list.length === 2 && list[1]!.status === 'QUEUED' ? list : null;
    });
    expect(waiting[0]!.status).toBe('RUNNING');
    // Another round (as another instance's would) does not start the conversation's second turn.
    await t.app.services.conversationBot.round();
    expect((await turns(id)).map((r) => r.status)).toEqual(['RUNNING', 'QUEUED']);
    gate.release();
    const done = await eventually(async () => {
      const list = await turns(id);
      return list.length === 2 && list.every((r) => r.status === 'succeeded') ? list : null;
    });
    expect(done[1]!.startedAt!.getTime()).toBeGreaterThanOrEqual(done[0]!.finishedAt!.getTime());
    expect(botSays(await thread(id)).map((m) => m.text)).toEqual(['About: first question', 'About: second question']);
    await settled();
  });

  it('a disabled bot does nothing, and neither does a bot switched off after the conversation opened', async () => {
    const off = await botInbox({ enabled: false });
    const quiet = await say(off, `${unique('hal')}@example.com`, 'What are your opening hours?');
    const on = await botInbox();
    const address = `${unique('ida')}@example.com`;
    const later = await say(on, address, 'How much does shipping cost?');
    await eventually(async () => botSays(await thread(later)).length === 1);
    await settled();
    const patched = await t.call({ method: 'PATCH', url: `${base()}/inboxes/${on.id}`, auth: owner(), payload: { bot: { enabled: false } } });
    expect(patched.statusCode).toBe(200);
    await say(on, address, 'What are your opening hours?');
    await settled();
    expect((await conversation(quiet)).handledBy).toBe('human');
    expect(await turns(quiet)).toHaveLength(0);
    expect(botSays(await thread(quiet))).toHaveLength(0);
    expect(await turns(later)).toHaveLength(1);
    expect(botSays(await thread(later))).toHaveLength(1);
  });

  it("uses a saved agent's model and instructions, and its lead tools reach the conversation's lead", async () => {
    const agent = (
      await t.call({
        method: 'POST',
        url: `${base()}/agents`,
        auth: owner(),
        payload: { name: 'Front desk', type: 'CHATBOT', modelId: 'openai-compatible:desk', instructions: 'Be brief.' },
      })
    ).json();
    const inbox = await botInbox({ enabled: true, agentId: agent.id });
    model.script = (request: ChatRequest): Reply => {
      const results = ModelServer.toolResults(request);
      if (results.length === 0)
        return {
          toolCalls: [
            { name: 'lookupLead', arguments: {} },
            { name: 'updateLead', arguments: { company: 'Acme GmbH', tags: ['chat'] } },
          ],
        };
      if (results.length === 2) return { toolCalls: [{ name: 'reply', arguments: { text: `Thanks ${(results[0]!.output as Json).lead.name}, noted.` } }] };
      return { content: 'Recorded the company.' };
    };
    const address = `${unique('jo')}@example.com`;
    const id = await say(inbox, address, 'I work at Acme GmbH');
    const reply = await eventually(async () => botSays(await thread(id))[0]);
    expect(reply.text).toBe('Thanks Ann, noted.');
    const turn = await eventually(async () => {
      const [r] = await turns(id);
      return FINAL.includes(r!.status) ? r : null;
    });
    expect(turn).toMatchObject({ agentId: agent.id, modelId: 'openai-compatible:desk', instructions: 'Be brief.', status: 'succeeded' });
    const lead = (await t.call({ method: 'GET', url: `${base()}/leads/${(await conversation(id)).leadId}`, auth: owner() })).json();
    expect(lead).toMatchObject({ email: address, company: 'Acme GmbH', tags: ['chat'] });
    const request = model.requests.at(-1)!;
    expect(JSON.stringify(request.messages[0]!.content)).toContain('Be brief.');
    await settled();
  });

  it('hands the conversation to people when a turn breaks (the model fails), without a bot reply', async () => {
    const inbox = await botInbox({ enabled: true, modelId: 'openai-compatible:down' });
    model.script = (): Reply => ({ status: 500 });
    const id = await say(inbox, `${unique('lou')}@example.com`, 'Hello?');
    const handed = await eventually(async () => {
      const c = await conversation(id);
      return c.handledBy === 'human' ? c : null;
    });
    expect(handed.handoffReason).toBe('the bot could not answer');
    const [turn] = await turns(id);
    expect(turn!.status).toBe('failed');
    const event = (await eventsOf(t, t.orgA.orgId, 'conversation.handoff')).find((e) => e.payload.conversationId === id);
    expect(event!.payload).toMatchObject({ by: 'bot', reason: 'the bot could not answer' });
    await settled();
    expect(botSays(await thread(id))).toHaveLength(0);
  });

  it('writes a CHATBOT_INSIGHTS report whose recommendation can be applied', async () => {
    // The earlier tests handed conversations off (a person asked for, no FAQ answer).
    const run = await t.call({
      method: 'POST',
      url: `${base()}/agents/run`,
      auth: owner(),
      payload: { type: 'CHATBOT_ANALYST', task: 'How does the bot do?', input: { days: 7 } },
    });
    expect(run.statusCode, run.body).toBe(202);
    const done = await eventually(async () => {
      const r = (await t.call({ method: 'GET', url: `${base()}/agent-runs/${run.json().id}`, auth: owner() })).json();
      return FINAL.includes(r.status) ? r : null;
    });
    expect(done.status, done.error).toBe('succeeded');
    const report = (await t.call({ method: 'GET', url: `${base()}/reports/${done.reportId}`, auth: owner() })).json();
    expect(report.type).toBe('CHATBOT_INSIGHTS');
    expect(report.metrics.handoffs).toBeGreaterThanOrEqual(2);
    expect(report.body).toContain('contact asked for a person');
    const tag = report.recommendations.find((r: Json) => r.action.type === 'tag_leads');
    expect(tag).toBeDefined();
    const applied = await t.call({ method: 'POST', url: `${base()}/reports/${report.id}/apply-recommendation`, auth: owner(), payload: { index: tag.index } });
    expect(applied.statusCode, applied.body).toBe(200);
    const tagged = (await t.call({ method: 'GET', url: `${base()}/leads?tags=chatbot-handoff&pageSize=100`, auth: owner() })).json();
    expect(tagged.total).toBe(tag.action.params.leadIds.length);
    expect(tagged.total).toBeGreaterThanOrEqual(2);

    // The REPORT_WRITER writes it too when asked for that report type.
    const writer = await t.call({
      method: 'POST',
      url: `${base()}/agents/run`,
      auth: owner(),
      payload: { type: 'REPORT_WRITER', task: 'Chatbot insights', input: { reportType: 'CHATBOT_INSIGHTS', days: 7 } },
    });
    expect(writer.statusCode, writer.body).toBe(202);
    const written = await eventually(async () => {
      const r = (await t.call({ method: 'GET', url: `${base()}/agent-runs/${writer.json().id}`, auth: owner() })).json();
      return FINAL.includes(r.status) ? r : null;
    });
    expect(written.status, written.error).toBe('succeeded');
    const insights = (await t.call({ method: 'GET', url: `${base()}/reports/${written.reportId}`, auth: owner() })).json();
    expect(insights).toMatchObject({ type: 'CHATBOT_INSIGHTS', metrics: { handoffs: report.metrics.handoffs } });
    expect(insights.recommendations.length).toBeGreaterThanOrEqual(1);
  });

  it("keeps a turn inside its organization: a CHATBOT run naming another organization's conversation, and its tools, reach nothing", async () => {
    const inbox = await botInbox();
    const address = `${unique('kim')}@example.com`;
    const id = await say(inbox, address, 'Do you ship internationally?');
    await eventually(async () => botSays(await thread(id)).length === 1);
    await settled();
    const foreign = await t.call({
      method: 'POST',
      url: `${base(t.orgB)}/agents/run`,
      auth: owner(t.orgB),
      payload: { type: 'CHATBOT', task: 'answer', input: { conversationId: id } },
    });
    expect(foreign.statusCode, foreign.body).toBe(202);
    const ended = await eventually(async () => {
      const r = (await t.call({ method: 'GET', url: `${base(t.orgB)}/agent-runs/${foreign.json().id}`, auth: owner(t.orgB) })).json();
      return FINAL.includes(r.status) ? r : null;
    });
    expect(ended).toMatchObject({ status: 'failed', error: `Conversation ${id} not found` });

    // The tools themselves, run for organization B with A's conversation: each is refused.
    const s = t.app.services;
    const ctx = {
      clock: s.clock,
      config: s.config,
      leads: s.leads,
      usage: s.usage,
      budgets: s.budgets,
      reports: s.reports,
      conversations: s.conversations,
      orgId: t.orgB.orgId,
      projectId: t.orgB.projectId,
      agentRunId: foreign.json().id,
      agentType: 'CHATBOT',
      workflowRunId: null,
      input: { conversationId: id },
      leadScope: { orgId: t.orgB.orgId, projectId: t.orgB.projectId, actor: { type: 'agent' as const, id: foreign.json().id } },
      signal: new AbortController().signal,
      onReport: () => {},
    };
    for (const [name, input] of [
      ['reply', { text: 'hi' }],
      ['handoff', { reason: 'x' }],
      ['close', {}],
      ['lookupLead', {}],
      ['updateLead', { company: 'Evil' }],
    ] as const) {
      expect(await TOOLS[name]!.execute(ctx, input), name).toMatchObject({ code: 'NOT_FOUND' });
    }
    const after = await conversation(id);
    expect(after).toMatchObject({ status: 'OPEN', handledBy: 'bot' });
    expect(botSays(await thread(id))).toHaveLength(1);
    const lead = (await t.call({ method: 'GET', url: `${base()}/leads/${after.leadId}`, auth: owner() })).json();
    expect(lead.company ?? null).toBeNull();
    const [row] = await t.database.db.select().from(conversations).where(eq(conversations.id, id));
    expect(row!.orgId).toBe(t.orgA.orgId);
  });
});

describe('a turn requested before a crash', () => {
  it('is still taken after a restart', async () => {
    const app = await buildTestApp({ workers: false });
    try {
      const created = await app.call({
        method: 'POST',
        url: `/api/v1/orgs/${app.orgA.orgId}/inboxes`,
        auth: { token: app.orgA.token },
        payload: { name: 'bot', channel: 'api', config: { url: rx.url('/restart'), faq: FAQ }, bot: { enabled: true } },
      });
      const inbox = created.json();
      const sent = await app.call({
        method: 'POST',
        url: `/api/v1/orgs/${app.orgA.orgId}/inboxes/${inbox.id}/messages`,
        auth: { apiKey: app.orgA.apiKey },
        payload: { contact: { address: 'lee@example.com' }, text: 'How much does shipping cost?' },
      });
      expect(sent.statusCode).toBe(201);
      // The dispatcher requests the turn; the instance dies before any loop takes it.
      await app.app.services.dispatcher.round();
      const [queued] = await app.database.db.select().from(agentRuns).where(eq(agentRuns.type, 'CHATBOT'));
      expect(queued!.status).toBe('QUEUED');
      const next = await app.restart({ workers: true });
      const answer = await eventually(async () => {
        const [row] = await app.database.db
          .select()
          .from(messages)
          .where(and(eq(messages.inboxId, inbox.id), eq(messages.sender, 'bot'), eq(messages.status, 'sent')));
        return row;
      }, 30_000);
      expect(answer.text).toBe(FAQ[1]!.answer);
      await next.close();
    } finally {
      await app.database.close();
    }
    // Two app builds and a restart: slow when the machine is busy.
  }, 90_000);
});
