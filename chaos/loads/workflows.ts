/**
 * The workflows load of the chaos run: workflow runs started by every kind of trigger (the public
 * webhook, `POST …/workflows/:id/run`, `lead.created` events, a schedule), with a delay, an approval
 * the load decides (some left undecided on purpose), an HTTP step, signed webhookOut steps to its
 * own stand-in and an AI step on the model stand-in; readers of the run streams that disconnect at
 * random (also mid-replay) and reconnect with `since`. At the end it checks, against its stand-in's
 * records and the database:
 *
 * - effects once: no (run, node, item) reached the stand-in with two envelope ids, and none more
 *   often than the node has stored attempts (a finished step never runs again);
 * - every run of its workflows ended (or waits on an approval left undecided);
 * - what each stream reader saw, de-duplicated, is exactly the run's stored events, in order;
 * - one run per accepted trigger (webhook, manual), none per refused one; one per lead.created;
 *   one per schedule time; an approved run goes on `approved`, a rejected one on `rejected`.
 *
 * Records are kept compact: ids and counters, never bodies.
 */
import type { Check, Load, StandIn, StandInRequest, World } from '../world.ts';
import { eventKey, followRun, type Follow } from './workflows-stream.ts';

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELED']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Retries of the steps that reach the stand-in: long enough to outlast a short stand-in fault. */
const RETRY = { maxAttempts: 5, backoffSeconds: 5 };
const MAX_READERS = 6;

type Kind = 'hook' | 'appr' | 'ai';
/** One trigger request: its marker (in the run input), what answered, the run it started. */
interface Trigger {
  m: string;
  kind: Kind;
  status: number;
  runId: string | null;
}
/** What the stand-in got for one (run, node, item): the envelope id(s) and how many requests. */
interface Effect {
  id: string | null;
  others: string[] | null;
  n: number;
}

interface State {
  tag: string;
  n: number;
  standIn: StandIn;
  projectId: string;
  wf: Record<'hook' | 'appr' | 'ai' | 'event' | 'sched', string>;
  hookPath: string;
  modelId: string;
  triggers: Trigger[];
  leads: Map<string, string>;
  effects: Map<string, Effect>;
  purposely503: number;
  follows: Map<string, Follow>;
  queue: string[];
  readers: number;
  /** Approvals: when each is due for a decision, the choice made (kept for retries), the runs it concerned. */
  due: Map<string, number>;
  choice: Map<string, { runId: string; decision: 'approve' | 'reject'; edited: boolean; answered: boolean }>;
  undecided: Set<string>;
  approvedEnvelope: Map<string, boolean>;
  /** Runs the load canceled: what the cancel answered, and when. */
  cancels: { runId: string; status: number; at: number }[];
  canceling: Set<Promise<void>>;
}

let s: State | null = null;
const state = (): State => {
  if (!s) throw new Error('workflows load: setup did not run');
  return s;
};

function marker(): string {
  const st = state();
  return `${st.tag}-${(st.n++).toString(36)}`;
}

function onRequest(req: StandInRequest): { status: number } | Promise<{ status: number }> {
  const st = state();
  const path = req.url.split('?')[0]!;
  let key: string | null = null;
  let envelopeId: string | null = null;
  if (path.startsWith('/out/')) {
    const env = req.json as { id?: string; payload?: { runId?: string; nodeId?: string; items?: { edited?: boolean }[] } } | undefined;
    if (env?.payload?.runId) {
      key = `${env.payload.runId}|${env.payload.nodeId}|0`;
      envelopeId = env.id ?? '?';
      if (path === '/out/approved') st.approvedEnvelope.set(env.payload.runId, env.payload.items?.[0]?.edited === true);
    }
  } else if (path.startsWith('/http/')) {
    const body = req.json as { r?: string; n?: string; k?: string } | undefined;
    if (body?.r) key = `${body.r}|${body.n}|${body.k}`;
  }
  if (key) {
    const e = st.effects.get(key);
    if (!e) st.effects.set(key, { id: envelopeId, others: null, n: 1 });
    else {
      e.n++;
      if (envelopeId && e.id !== envelopeId && !e.others?.includes(envelopeId)) (e.others ??= []).push(envelopeId);
    }
  }
  // A few refusals of our own, so that step retries (same envelope id) happen without a fault.
  if (Math.random() < 0.03) {
    st.purposely503++;
    return { status: 503 };
  }
  // Some answers take a while, so that a killed instance is more often caught with a send in flight.
  if (Math.random() < 0.1) return sleep(500 + Math.random() * 2000).then(() => ({ status: 200 }));
  return { status: 200 };
}

async function create(world: World, body: Record<string, unknown>): Promise<{ id: string; webhookUrl?: string; webhookToken?: string }> {
  const answer = await world.api.until('POST', `${world.api.org}/workflows`, { body, auth: 'key', routeClass: 'workflow.create', withinMs: 60_000 });
  if (answer.status !== 201) throw new Error(`workflows load: creating ${String(body.name)} answered ${answer.status} ${answer.text.slice(0, 300)}`);
  return answer.json;
}

async function setup(world: World): Promise<void> {
  const { api } = world;
  const standIn = await world.standIn('workflows');
  s = {
    tag: `wfl${world.rng.id(5)}`,
    n: 0,
    standIn,
    projectId: '',
    wf: { hook: '', appr: '', ai: '', event: '', sched: '' },
    hookPath: '',
    modelId: world.env.DEFAULT_MODEL?.startsWith('openai-compatible:') ? world.env.DEFAULT_MODEL : 'openai-compatible:chaos-model',
    triggers: [],
    leads: new Map(),
    effects: new Map(),
    purposely503: 0,
    follows: new Map(),
    queue: [],
    readers: 0,
    due: new Map(),
    choice: new Map(),
    undecided: new Set(),
    approvedEnvelope: new Map(),
    cancels: [],
    canceling: new Set(),
  };
  const st = s;
  standIn.handle = onRequest;

  // The model: answer our agents plainly, pass anything else to the script installed before us.
  const previous = world.model.script;
  world.model.script = (request, index) =>
    JSON.stringify(request.messages).includes('wfload-agent') ? { content: 'Done: nothing else to do.' } : previous(request, index);

  // A project of our own, so that our event trigger hears only the leads we create.
  const project = await api.until('POST', `${api.org}/projects`, { body: { name: `${st.tag} workflows` }, routeClass: 'project.create', withinMs: 60_000 });
  if (project.status !== 201) throw new Error(`workflows load: creating a project answered ${project.status} ${project.text.slice(0, 300)}`);
  st.projectId = project.json.id;

  const out = (path: string, event: string) => ({ type: 'utility.webhookOut', params: { url: standIn.url(`/out/${path}`), event }, retry: RETRY });
  const http = (path: string, k: string) => ({
    type: 'utility.httpRequest',
    params: { method: 'POST', url: standIn.url(`/http/${path}`), body: { r: '{{ $run.id }}', n: 'http', k, m: '{{ m }}' }, timeoutMs: 5000 },
    retry: RETRY,
  });
  const agent = (task: string) => ({
    type: 'ai.agent',
    params: { type: 'REPORT_WRITER', task: `wfload-agent: ${task}`, modelId: st.modelId, maxSteps: 2 },
    retry: { maxAttempts: 2, backoffSeconds: 2 },
  });

  const hook = await create(world, {
    name: `${st.tag} hook`,
    nodes: [
      { id: 'start', type: 'trigger.webhook' },
      { id: 'a', type: 'data.set', params: { fields: { k: 'a' } } },
      { id: 'b', type: 'data.set', params: { fields: { k: 'b' } } },
      { id: 'http', ...http('hook', '{{ k }}') },
      { id: 'out', ...out('hook', 'wfload.hook') },
    ],
    edges: [
      { from: 'start', to: 'a' },
      { from: 'start', to: 'b' },
      { from: 'a', to: 'http' },
      { from: 'b', to: 'http' },
      { from: 'http', to: 'out' },
    ],
  });
  st.wf.hook = hook.id;
  const hookUrl = hook.webhookUrl ?? (hook.webhookToken ? `/api/v1/hooks/${hook.id}/${hook.webhookToken}` : '');
  if (!hookUrl) throw new Error('workflows load: the webhook workflow came without its URL');
  st.hookPath = new URL(hookUrl, 'http://x').pathname;

  st.wf.appr = (
    await create(world, {
      name: `${st.tag} approval`,
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'wait', type: 'flow.delay', params: { seconds: 2 } },
        { id: 'approve', type: 'flow.approval', params: { title: 'wfload {{ m }}' } },
        { id: 'ok', ...out('approved', 'wfload.approved') },
        { id: 'no', ...out('rejected', 'wfload.rejected') },
      ],
      edges: [
        { from: 'start', to: 'wait' },
        { from: 'wait', to: 'approve' },
        { from: 'approve', to: 'ok', output: 'approved' },
        { from: 'approve', to: 'no', output: 'rejected' },
      ],
    })
  ).id;

  st.wf.ai = (
    await create(world, {
      name: `${st.tag} ai`,
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'agent', ...agent('summarize {{ m }}') },
        { id: 'out', ...out('ai', 'wfload.ai') },
      ],
      edges: [
        { from: 'start', to: 'agent' },
        { from: 'agent', to: 'out' },
      ],
    })
  ).id;

  st.wf.event = (
    await create(world, {
      name: `${st.tag} event`,
      projectId: st.projectId,
      nodes: [
        { id: 'start', type: 'trigger.event', params: { events: ['lead.created'] } },
        { id: 'agent', ...agent('look at the lead {{ payload.lead.name }}') },
        { id: 'out', ...out('event', 'wfload.event') },
      ],
      edges: [
        { from: 'start', to: 'agent' },
        { from: 'agent', to: 'out' },
      ],
    })
  ).id;

  st.wf.sched = (
    await create(world, {
      name: `${st.tag} schedule`,
      nodes: [
        { id: 'start', type: 'trigger.schedule', params: { cron: '*/5 * * * * *' } },
        { id: 'http', ...http('sched', 's') },
      ],
      edges: [{ from: 'start', to: 'http' }],
    })
  ).id;
  world.log(
    `workflows: ${Object.entries(st.wf)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; project ${st.projectId}; stand-in ${standIn.url('/')}`,
  );
}

/** Follows about one accepted run in five, with at most MAX_READERS readers at once. */
function maybeFollow(world: World, runId: string): void {
  const st = state();
  if (world.rng.next() < 0.2 && st.queue.length < 50) st.queue.push(runId);
}

async function tick(world: World): Promise<void> {
  const st = state();
  const { api, rng } = world;
  const r = rng.next();
  const m = marker();
  if (r < 0.4) {
    // The public webhook trigger: no credentials but the token in the path.
    const answer = await api.request('POST', st.hookPath, { body: { m, n: rng.int(1000) }, auth: 'none', routeClass: 'workflow.hook', timeoutMs: 15_000 });
    const runId = answer.status === 202 && typeof answer.json?.runId === 'string' ? (answer.json.runId as string) : null;
    st.triggers.push({ m, kind: 'hook', status: answer.status, runId });
    if (runId) maybeFollow(world, runId);
    else world.count(`workflow hook POST answered ${answer.status}`);
  } else if (r < 0.85) {
    const kind: Kind = r < 0.7 ? 'appr' : 'ai';
    const input: Record<string, unknown> = { m };
    // One approval in ten is left undecided on purpose: its run stays WAITING.
    if (kind === 'appr' && rng.next() < 0.1) input.undecided = true;
    const answer = await api.request('POST', `${api.org}/workflows/${st.wf[kind]}/run`, {
      body: { input },
      auth: 'key',
      routeClass: 'workflow.run',
      timeoutMs: 15_000,
    });
    const runId = answer.status === 201 && typeof answer.json?.id === 'string' ? (answer.json.id as string) : null;
    st.triggers.push({ m, kind, status: answer.status, runId });
    // A run left waiting on purpose would hold a reader until the end.
    if (runId && !input.undecided) maybeFollow(world, runId);
    // A few approval runs are canceled a moment later: in the queue, the delay, or the approval.
    if (runId && kind === 'appr' && !input.undecided && rng.next() < 0.06) {
      const wait = 300 + rng.int(3000);
      const p: Promise<void> = (async () => {
        await sleep(wait);
        const answer = await api.request('POST', `${api.org}/runs/${runId}/cancel`, { auth: 'key', routeClass: 'run.cancel' });
        st.cancels.push({ runId, status: answer.status, at: Date.now() });
        world.count(`workflow run cancel answered ${answer.status}`);
      })().finally(() => st.canceling.delete(p));
      st.canceling.add(p);
    }
    if (!runId) world.count(`workflow run POST answered ${answer.status}`);
  } else {
    // A lead in our project: its lead.created starts one run of the event workflow.
    const answer = await api.request('POST', `${api.org}/leads`, {
      body: { name: `Wfload ${m}`, email: `${m}@wfload.example`, projectId: st.projectId, source: 'wfload' },
      auth: 'key',
      routeClass: 'lead.create',
      timeoutMs: 15_000,
    });
    if (answer.status === 201 && typeof answer.json?.id === 'string') st.leads.set(answer.json.id as string, m);
  }
}

/** One look at the pending approvals: decide ours that are due, note those left undecided on purpose. */
async function decidePass(world: World, now: () => number, hurry = false): Promise<number> {
  const st = state();
  const { api } = world;
  let open = 0;
  for (let page = 1; page <= 20; page++) {
    const list = await api.request('GET', `${api.org}/approvals?status=PENDING&sort=createdAt&pageSize=100&page=${page}`, {
      auth: 'key',
      routeClass: 'approval.list',
    });
    if (list.status !== 200) return open + 1;
    const items = (list.json?.items ?? []) as { id: string; runId: string | null; payload: unknown }[];
    for (const a of items) {
      const first = (Array.isArray(a.payload) ? a.payload[0] : a.payload) as { m?: string; undecided?: boolean } | undefined;
      if (!a.runId || typeof first?.m !== 'string' || !first.m.startsWith(`${st.tag}-`)) continue;
      if (first.undecided) {
        st.undecided.add(a.runId);
        continue;
      }
      open++;
      let due = st.due.get(a.id);
      if (due === undefined) st.due.set(a.id, (due = now() + 300 + world.rng.int(2700)));
      if (!hurry && now() < due) continue;
      let choice = st.choice.get(a.id);
      if (!choice) {
        const decision = world.rng.next() < 0.7 ? 'approve' : 'reject';
        choice = { runId: a.runId, decision, edited: decision === 'approve' && world.rng.next() < 0.3, answered: false };
        st.choice.set(a.id, choice);
      }
      const body: Record<string, unknown> = { comment: 'wfload' };
      if (choice.edited) body.editedPayload = [{ m: first.m, edited: true }];
      const answer = await api.request('POST', `${api.org}/approvals/${a.id}/${choice.decision}`, { body, auth: 'key', routeClass: 'approval.decide' });
      if (answer.status === 200 || answer.status === 409) {
        choice.answered = true;
        st.due.delete(a.id);
        world.count(`workflow approvals ${choice.decision === 'approve' ? 'approved' : 'rejected'}${choice.edited ? ' (edited)' : ''}`);
      }
    }
    if (items.length < 100) break;
  }
  return open;
}

async function readers(world: World, signal: AbortSignal): Promise<void> {
  const st = state();
  const running = new Set<Promise<void>>();
  while (!signal.aborted) {
    while (st.queue.length && running.size < MAX_READERS) {
      const runId = st.queue.shift()!;
      const f: Follow = { runId, types: [], violations: [], done: false, connections: 0, duplicates: 0 };
      st.follows.set(runId, f);
      const p = followRun(world, f, signal).finally(() => running.delete(p));
      running.add(p);
    }
    await sleep(200);
  }
  await Promise.all(running);
}

async function background(world: World): Promise<void> {
  const approvals = (async () => {
    while (!world.signal.aborted) {
      try {
        await decidePass(world, Date.now);
      } catch (error) {
        world.log(`workflows: approval pass failed: ${String(error)}`);
      }
      await sleep(1000);
    }
  })();
  await Promise.all([approvals, readers(world, world.signal)]);
}

/** world.sql, retried while the database is away (up to the deadline). */
async function q<T>(world: World, deadline: number, text: string, params?: unknown[]): Promise<T[]> {
  for (;;) {
    try {
      return await world.sql<T>(text, params);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(1000);
    }
  }
}

interface RunRow {
  id: string;
  wf: string;
  status: string;
  m: string | null;
  und: string | null;
  pend: boolean;
  code: string | null;
  msg: string | null;
  enode: string | null;
  lead: string | null;
  sat: string | null;
}

async function check(world: World, deadline: number): Promise<Check[]> {
  const st = state();
  const { api } = world;
  const wfIds = Object.values(st.wf);
  await Promise.all(st.canceling);
  // The schedule stops, so that the set of runs stops growing.
  const off = await api.until('PATCH', `${api.org}/workflows/${st.wf.sched}`, { body: { active: false }, auth: 'key', withinMs: 30_000 });
  if (off.status !== 200) world.log(`workflows: deactivating the schedule answered ${off.status}`);

  const unfinished = () =>
    q<{ id: string; status: string; und: string | null; pend: boolean }>(
      world,
      deadline,
      `select r.id, r.status, r.input->>'undecided' as und,
              exists (select 1 from approvals a where a.run_id = r.id and a.status = 'PENDING') as pend
         from workflow_runs r where r.workflow_id = any($1) and r.status not in ('SUCCEEDED','FAILED','CANCELED')`,
      [wfIds],
    );
  // Decide what is left to decide; wait for the runs to end and every lead to have its event run.
  let left = 0;
  for (;;) {
    await decidePass(world, Date.now, true).catch(() => 1);
    const open = (await unfinished()).filter((r) => !(r.status === 'WAITING' && r.und === 'true' && r.pend));
    const [{ n: leadRuns } = { n: 0 }] = await q<{ n: number }>(world, deadline, `select count(*)::int as n from workflow_runs where workflow_id = $1`, [
      st.wf.event,
    ]);
    left = open.length;
    if ((left === 0 && leadRuns >= st.leads.size) || Date.now() > deadline - 15_000) break;
    await sleep(1000);
  }
  const runs = await q<RunRow>(
    world,
    deadline + 30_000,
    `select r.id, r.workflow_id as wf, r.status, r.input->>'m' as m, r.input->>'undecided' as und,
            exists (select 1 from approvals a where a.run_id = r.id and a.status = 'PENDING') as pend,
            r.error->>'code' as code, left(r.error->>'message', 200) as msg, r.error->>'nodeId' as enode,
            r.input->'payload'->'lead'->>'id' as lead, r.input->>'scheduledAt' as sat
       from workflow_runs r where r.workflow_id = any($1)`,
    [wfIds],
  );
  const byId = new Map(runs.map((r) => [r.id, r]));
  // Readers that were cut by the end of the load phase read on to the end of their run.
  const finish = new AbortController();
  const timer = setTimeout(() => finish.abort(), Math.max(1000, deadline - Date.now() - 8000));
  await Promise.all(
    [...st.follows.values()].filter((f) => !f.done && FINAL.has(byId.get(f.runId)?.status ?? '')).map((f) => followRun(world, f, finish.signal, true)),
  );
  clearTimeout(timer);

  const checks: Check[] = [];

  // 1. Effects once.
  const attempts = new Map<string, number>();
  for (const row of await q<{ run_id: string; node_id: string; n: number }>(
    world,
    deadline + 30_000,
    `select s.run_id, s.node_id, count(*)::int as n from run_steps s join workflow_runs r on r.id = s.run_id
      where r.workflow_id = any($1) and s.node_id in ('http','out','ok','no','agent') group by s.run_id, s.node_id`,
    [wfIds],
  ))
    attempts.set(`${row.run_id}|${row.node_id}`, row.n);
  const effectViolations: string[] = [];
  let redeliveries = 0;
  for (const [key, e] of st.effects) {
    redeliveries += e.n - 1;
    if (e.others) effectViolations.push(`${key}: envelope ids ${[e.id, ...e.others].join(',')}`);
    const [runId, nodeId] = key.split('|');
    const stored = attempts.get(`${runId}|${nodeId}`) ?? 0;
    if (e.n > stored) effectViolations.push(`${key}: ${e.n} requests, ${stored} stored attempts`);
  }
  // The AI step's effect is an agent run: no more of them than the step's stored attempts.
  const agentRuns = await q<{ run_id: string; n: number }>(
    world,
    deadline + 30_000,
    `select workflow_run_id as run_id, count(*)::int as n from agent_runs where workflow_id = any($1) group by workflow_run_id`,
    [wfIds],
  );
  for (const row of agentRuns) {
    const stored = attempts.get(`${row.run_id}|agent`) ?? 0;
    if (row.n > stored) effectViolations.push(`${row.run_id}|agent: ${row.n} agent runs, ${stored} stored attempts`);
  }
  world.count('workflow effect redeliveries (same id or same item)', redeliveries);
  world.count('workflow stand-in 503s on purpose', st.purposely503);
  checks.push({
    promise: 'workflow effects once (one envelope id per run/node/item; requests and agent runs ≤ stored attempts)',
    count: st.effects.size + agentRuns.length,
    violations: effectViolations,
  });

  // A step whose finish was stored never runs again: no attempt after a SUCCEEDED one.
  const rerun = await q<{ run_id: string; node_id: string; attempt: number }>(
    world,
    deadline + 30_000,
    `select s.run_id, s.node_id, s.attempt from run_steps s join workflow_runs r on r.id = s.run_id
      where r.workflow_id = any($1) and s.status = 'SUCCEEDED'
        and exists (select 1 from run_steps l where l.run_id = s.run_id and l.node_id = s.node_id and l.attempt > s.attempt)`,
    [wfIds],
  );
  const [{ n: stepCount } = { n: 0 }] = await q<{ n: number }>(
    world,
    deadline + 30_000,
    `select count(*)::int as n from run_steps s join workflow_runs r on r.id = s.run_id where r.workflow_id = any($1)`,
    [wfIds],
  );
  checks.push({
    promise: 'workflow steps: none runs again once its success is stored',
    count: stepCount,
    violations: rerun.map((r) => `${r.run_id}|${r.node_id}: attempt after SUCCEEDED attempt ${r.attempt}`),
  });

  // 2. Runs end.
  const endViolations: string[] = [];
  const failures = new Map<string, number>();
  let undecided = 0;
  for (const r of runs) {
    if (r.status === 'FAILED') {
      const standInDown =
        ['http', 'out', 'ok', 'no'].includes(r.enode ?? '') &&
        (['CONNECT', 'TIMEOUT'].includes(r.code ?? '') ||
          /answered 5\d\d|no answer|other side closed|timed? ?out|time-out|ECONN|socket|failed: |abort/i.test(r.msg ?? ''));
      const reason = standInDown ? 'stand-in down' : (r.code ?? 'no code');
      failures.set(reason, (failures.get(reason) ?? 0) + 1);
      if (!standInDown && failures.get(reason)! <= 3) world.log(`workflows: run ${r.id} FAILED ${r.code}: ${r.msg}`);
    } else if (FINAL.has(r.status)) continue;
    else if (r.status === 'WAITING' && r.und === 'true' && r.pend) undecided++;
    else endViolations.push(`${r.id}:${r.status}`);
  }
  for (const t of st.triggers) if (t.runId && !byId.has(t.runId)) endViolations.push(`${t.runId}:missing`);
  for (const [reason, n] of failures) world.count(`workflow runs FAILED (${reason})`, n);
  world.count('workflow runs WAITING on an approval left undecided', undecided);
  checks.push({ promise: 'workflow runs end (final, or WAITING on an approval left undecided)', count: runs.length, violations: endViolations });

  // 3. Streams.
  const followed = [...st.follows.values()];
  const stored = new Map<string, string[]>();
  for (let i = 0; i < followed.length; i += 500) {
    const ids = followed.slice(i, i + 500).map((f) => f.runId);
    for (const e of await q<{ run_id: string; seq: number; type: string; data: Record<string, unknown> }>(
      world,
      deadline + 30_000,
      `select run_id, seq, type, jsonb_build_object('nodeId', data->'nodeId', 'status', data->'status', 'at', data->'at') as data
         from run_events where run_id = any($1) order by run_id, seq`,
      [ids],
    )) {
      const list = stored.get(e.run_id) ?? [];
      if (e.seq !== list.length + 1) list.push(`(seq ${e.seq} stored after ${list.length})`);
      list.push(eventKey(e.type, e.data));
      stored.set(e.run_id, list);
    }
  }
  const streamViolations: string[] = [];
  let connections = 0;
  let duplicates = 0;
  for (const f of followed) {
    connections += f.connections;
    duplicates += f.duplicates;
    for (const v of f.violations) streamViolations.push(`${f.runId}: ${v}`);
    const want = stored.get(f.runId) ?? [];
    const run = byId.get(f.runId);
    const final = run !== undefined && FINAL.has(run.status);
    const seen = f.types;
    const same = final ? seen.length === want.length : seen.length <= want.length;
    const mismatch = seen.findIndex((t, i) => t !== want[i]);
    if (!same || mismatch !== -1)
      streamViolations.push(
        `${f.runId}: saw ${seen.length} events, stored ${want.length}${mismatch !== -1 ? `, first difference at ${mismatch + 1}: ${seen[mismatch]} vs ${want[mismatch]}` : ''}${f.done ? '' : ' (reader not done)'}`,
      );
    else if (final && !f.done) streamViolations.push(`${f.runId}: the stream did not close after run.finished`);
  }
  world.count('workflow stream connections', connections);
  world.count('workflow stream events repeated after reconnect (de-duplicated)', duplicates);
  checks.push({ promise: 'workflow run streams complete (in order, no gap, = stored events)', count: followed.length, violations: streamViolations });

  // 4. Triggers: one run per accepted request, none per refused one.
  const byMarker = new Map<string, string[]>();
  for (const r of runs) if (r.m) byMarker.set(r.m, [...(byMarker.get(r.m) ?? []), r.id]);
  const triggerCheck = (kind: Kind | 'manual', promise: string): Check => {
    const violations: string[] = [];
    let count = 0;
    let unanswered = 0;
    for (const t of st.triggers) {
      if (kind === 'hook' ? t.kind !== 'hook' : t.kind === 'hook') continue;
      count++;
      const got = byMarker.get(t.m) ?? [];
      if (t.runId) {
        if (got.length !== 1 || got[0] !== t.runId) violations.push(`${t.m}: answered ${t.runId}, runs [${got.join(',')}]`);
      } else if (t.status === 0 || t.status >= 500) {
        if (got.length > 1) violations.push(`${t.m}: no answer (${t.status}), runs [${got.join(',')}]`);
        unanswered += got.length;
      } else if (got.length) violations.push(`${t.m}: refused ${t.status}, runs [${got.join(',')}]`);
    }
    world.count(`workflow ${kind} triggers unanswered but started (allowed)`, unanswered);
    return { promise, count, violations };
  };
  checks.push(triggerCheck('hook', 'workflow webhook trigger: one run per accepted POST, none per refused one'));
  checks.push(triggerCheck('manual', 'workflow manual trigger: one run per accepted POST, none per refused one'));

  // Event trigger: one run per lead created in our project.
  const runsOfLead = new Map<string, number>();
  for (const r of runs) if (r.wf === st.wf.event && r.lead) runsOfLead.set(r.lead, (runsOfLead.get(r.lead) ?? 0) + 1);
  const eventViolations: string[] = [];
  for (const leadId of st.leads.keys()) if (runsOfLead.get(leadId) !== 1) eventViolations.push(`${leadId}: ${runsOfLead.get(leadId) ?? 0} runs`);
  for (const [leadId, n] of runsOfLead) if (n > 1 && !st.leads.has(leadId)) eventViolations.push(`${leadId}: ${n} runs`);
  checks.push({ promise: 'workflow event trigger: one run per lead.created', count: st.leads.size, violations: eventViolations });

  // Schedule: one run per fire time.
  const fires = new Map<string, string[]>();
  for (const r of runs) if (r.wf === st.wf.sched && r.sat) fires.set(r.sat, [...(fires.get(r.sat) ?? []), r.id]);
  const fireViolations = [...fires].filter(([, ids]) => ids.length > 1).map(([at, ids]) => `${at}: [${ids.join(',')}]`);
  checks.push({ promise: 'workflow schedule: one run per fire time', count: fires.size, violations: fireViolations });

  // Approvals: the run follows the decision (and an edited payload is what the approved step sent).
  const branch = new Map<string, { ok: string[]; no: string[] }>();
  const decided = [...st.choice.values()].filter((c) => c.answered);
  for (let i = 0; i < decided.length; i += 500) {
    const ids = decided.slice(i, i + 500).map((c) => c.runId);
    for (const row of await q<{ run_id: string; node_id: string; status: string }>(
      world,
      deadline + 30_000,
      `select run_id, node_id, status from run_steps where run_id = any($1) and node_id in ('ok','no')`,
      [ids],
    )) {
      const b = branch.get(row.run_id) ?? { ok: [], no: [] };
      b[row.node_id as 'ok' | 'no'].push(row.status);
      branch.set(row.run_id, b);
    }
  }
  const approvalViolations: string[] = [];
  for (const c of decided) {
    const b = branch.get(c.runId) ?? { ok: [], no: [] };
    const ran = (list: string[]) => list.some((x) => x !== 'SKIPPED');
    const [taken, other] = c.decision === 'approve' ? [b.ok, b.no] : [b.no, b.ok];
    const run = byId.get(c.runId);
    if (run?.status === 'SUCCEEDED' && !ran(taken)) approvalViolations.push(`${c.runId}: ${c.decision}d, its branch did not run`);
    if (ran(other)) approvalViolations.push(`${c.runId}: ${c.decision}d, the other branch ran`);
    const env = st.approvedEnvelope.get(c.runId);
    if (env !== undefined && c.decision === 'approve' && env !== c.edited) approvalViolations.push(`${c.runId}: edited ${c.edited}, sent edited ${env}`);
  }
  checks.push({ promise: 'workflow approvals: the run goes on the branch decided', count: decided.length, violations: approvalViolations });
  // Cancel: a run whose cancel was answered 200 ends CANCELED, starts no step after it, and keeps no approval pending.
  const canceled = st.cancels.filter((c) => c.status === 200);
  const cancelViolations: string[] = [];
  const lastStart = new Map<string, number>();
  const stillPending = new Set<string>();
  if (canceled.length) {
    const ids = canceled.map((c) => c.runId);
    for (const row of await q<{ run_id: string; ms: number }>(
      world,
      deadline + 30_000,
      `select run_id, (extract(epoch from max(started_at)) * 1000)::float8 as ms from run_steps where run_id = any($1) group by run_id`,
      [ids],
    ))
      lastStart.set(row.run_id, Number(row.ms));
    for (const row of await q<{ run_id: string }>(world, deadline + 30_000, `select run_id from approvals where run_id = any($1) and status = 'PENDING'`, [
      ids,
    ]))
      stillPending.add(row.run_id);
  }
  for (const c of canceled) {
    const status = byId.get(c.runId)?.status;
    if (status !== 'CANCELED') cancelViolations.push(`${c.runId}: cancel answered 200, run ${status}`);
    const started = lastStart.get(c.runId);
    if (started !== undefined && started > c.at)
      cancelViolations.push(`${c.runId}: a step started ${Math.round(started - c.at)} ms after the cancel was answered`);
    if (stillPending.has(c.runId)) cancelViolations.push(`${c.runId}: its approval is still PENDING`);
  }
  checks.push({
    promise: 'workflow cancel: the run ends CANCELED, starts nothing after, leaves no approval pending',
    count: canceled.length,
    violations: cancelViolations,
  });
  if (left) world.log(`workflows: ${left} runs still not ended at the deadline`);
  return checks;
}

export const load: Load = {
  name: 'workflows',
  setup,
  ratePerSecond: 2.5,
  tick,
  background,
  check,
};
