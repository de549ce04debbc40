import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { OrgFixture } from '../../../test/harness.ts';
import { eventually } from '../../../test/helpers.ts';
import { SmtpStandIn } from '../../../test/smtp.ts';
import { api, manual, startWorkflowApp } from '../../../test/workflows.ts';
import { expressionPool } from '../../platform/expressions/pool.ts';

/**
 * User expressions run in worker threads (platform/expressions/pool.ts), so that none can hold the
 * server: an expression that overruns is terminated, and one organization's flood of expressions
 * neither delays another organization's requests nor its expressions. (Issue 29: a tail recursion
 * held the event loop a second per evaluation; 64 parallel preview calls held /healthz for a minute.)
 */

const RECURSION = '($f := function($n){ $f($n + 1) }; $f(0))';
/** One built-in call, so one evaluation step: JSONata's own time limit is checked only between steps (8 s here without the workers). */
const HEAVY_BUILTIN = '$sort([1..20000])';

let t: Awaited<ReturnType<typeof startWorkflowApp>>['t'];
let close: () => Promise<void>;
let smtp: SmtpStandIn;
const workflowOf = new Map<string, string>();

beforeAll(async () => {
  // The campaign's e-mail inbox needs a relay (test mode sends nothing through it).
  smtp = await new SmtpStandIn().start();
  // Three threads, of which one organization may hold two.
  ({ t, close } = await startWorkflowApp({ EXPRESSION_TIMEOUT_MS: '100', EXPRESSION_THREADS: '3', WORKFLOW_POLL_MS: '50', SMTP_URL: smtp.url }));
  for (const org of [t.orgA, t.orgB]) {
    const res = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${org.orgId}/workflows`,
      auth: { token: org.token },
      payload: { name: 'preview', nodes: [manual], edges: [] },
    });
    workflowOf.set(org.orgId, res.json().id);
  }
});
afterAll(async () => {
  await close();
  await smtp.close();
});

const preview = (org: OrgFixture, expression: string) =>
  t.call({
    method: 'POST',
    url: `/api/v1/orgs/${org.orgId}/workflows/${workflowOf.get(org.orgId)}/expressions/evaluate`,
    auth: { token: org.token },
    payload: { expression },
  });

/** `count` preview calls of organization A at once; `pending()` says how many have not answered yet. */
function attack(count: number, expression: string) {
  let pending = count;
  const answers = Promise.all(
    Array.from({ length: count }, () =>
      preview(t.orgA, expression).then((res) => {
        pending--;
        return res;
      }),
    ),
  );
  return { answers, pending: () => pending };
}

/** Organization B's requests, each with the number of A's calls still unanswered when it answered. */
async function requestsOfB(pending: () => number): Promise<{ res: LightMyRequestResponse; pendingA: number }[]> {
  const auth = { token: t.orgB.token };
  const out: { res: LightMyRequestResponse; pendingA: number }[] = [];
  for (const request of [
    () => t.call({ method: 'GET', url: '/healthz' }),
    () => t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/leads`, auth }),
    // Not a plain path: evaluated in a worker, while A's evaluations fill A's share of them.
    () => preview(t.orgB, '$sum([1..10]) & " " & $map(["a", "b"], function($v){ $uppercase($v) })[1]'),
  ]) {
    const res = await request();
    out.push({ res, pendingA: pending() });
  }
  return out;
}

describe('expression workers', () => {
  it("64 parallel recursions of one organization each stop with EXPRESSION_LIMIT, and another organization's /healthz, lead list and expression answer while they are still pending", async () => {
    const a = attack(64, RECURSION);
    // A's evaluations wait for A's share of the threads.
    await eventually(() => expressionPool().load(t.orgA.orgId).queued > 0);

    const b = await requestsOfB(a.pending);
    expect(b.map(({ res }) => res.statusCode)).toEqual([200, 200, 200]);
    expect(b[2]!.res.json().value).toBe('55 B');
    for (const { pendingA } of b) expect(pendingA).toBeGreaterThan(0);

    const answers = await a.answers;
    for (const res of answers) {
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: 'EXPRESSION_LIMIT' });
      expect(res.json().message).toContain('ran longer than 100 ms');
    }
  });

  it('a built-in call that JSONata cannot interrupt is terminated with EXPRESSION_LIMIT, meanwhile the server answers, and the worker is replaced', async () => {
    const a = attack(6, HEAVY_BUILTIN);
    await eventually(() => expressionPool().load(t.orgA.orgId).running > 0);

    const b = await requestsOfB(a.pending);
    expect(b.map(({ res }) => res.statusCode)).toEqual([200, 200, 200]);
    for (const { pendingA } of b) expect(pendingA).toBeGreaterThan(0);

    for (const res of await a.answers) {
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: 'EXPRESSION_LIMIT' });
      expect(res.json().message).toContain(`expression "${HEAVY_BUILTIN}" stopped: it ran longer than 100 ms`);
    }
    // The terminated threads were replaced: every thread evaluates again.
    const after = await Promise.all(Array.from({ length: 6 }, () => preview(t.orgA, '$count([1..100][$ > 50])')));
    for (const res of after) expect(res.json()).toMatchObject({ value: 50 });
  });

  it("a run's steps hand the worker the items of the nodes they name (by name or computed) and the secrets they name", async () => {
    const w = api(t);
    expect((await t.call({ method: 'PUT', url: `${w.base}/secrets/TOKEN`, auth: w.auth, payload: { value: 'abc' } })).statusCode).toBe(201);
    const wf = await w.create(
      [
        manual,
        { id: 'a', type: 'data.set', params: { fields: { n: [1, 5, 9] }, keepOnlySet: true } },
        {
          id: 'b',
          type: 'data.set',
          params: {
            keepOnlySet: true,
            fields: {
              named: '{{ $node("a").n[$ > 2] }}',
              computed: '{{ ($id := "a"; $count($node($id).n)) }}',
              secret: '{{ $secrets.TOKEN ~> $substring(1) }}',
              input: '{{ $map([$input.who], function($v){ $v & "!" }) }}',
            },
          },
        },
        { id: 'if', type: 'flow.if', params: { condition: '$count($node("a").n[$ > 4]) = 2' } },
      ],
      [
        { from: 'start', to: 'a' },
        { from: 'a', to: 'b' },
        { from: 'b', to: 'if' },
      ],
    );
    const run = await w.until((await w.run(wf.id, { input: { who: 'Ann' } })).id);
    expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');
    expect(w.step(run, 'b')!.items![0]).toMatchObject({ named: [5, 9], computed: 3, secret: 'bc', input: 'Ann!' });
    expect(w.step(run, 'if')!.outputs).toMatchObject({ true: [{}], false: [] });

    // A missing secret is still told by name before anything is evaluated.
    const missing = await w.create(
      [manual, { id: 'b', type: 'data.set', params: { fields: { s: '{{ $secrets.NOPE ~> $uppercase }}' } } }],
      [{ from: 'start', to: 'b' }],
    );
    const failed = await w.until((await w.run(missing.id)).id);
    expect(failed.error).toMatchObject({ code: 'SECRET_MISSING', nodeId: 'b' });
  });

  it('a test-mode campaign to 30 leads whose text holds the recursion: each recipient fails with EXPRESSION_LIMIT, rendered in the workers while the server answers', async () => {
    const base = `/api/v1/orgs/${t.orgA.orgId}`;
    const auth = { token: t.orgA.token };
    const created = async (url: string, payload: object) => {
      const res = await t.call({ method: 'POST', url: `${base}${url}`, auth, payload });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: string };
    };
    const inbox = await created('/inboxes', { name: 'Outreach', channel: 'email', config: { address: 'sales@shop.example.com', fromName: 'Shop' } });
    const leadIds: string[] = [];
    for (let i = 0; i < 30; i++) leadIds.push((await created('/leads', { name: `Lead ${i}`, email: `lead${i}@campaign.example` })).id);
    const campaign = await created('/campaigns', {
      name: 'Recursion',
      inboxId: inbox.id,
      audience: { leadIds },
      steps: [{ delaySeconds: 0, subject: 'Hi {{ lead.name }}', text: `Hello {{ ${RECURSION} }}` }],
    });
    expect((await t.call({ method: 'POST', url: `${base}/campaigns/${campaign.id}/start`, auth, payload: { testMode: true } })).statusCode).toBe(200);

    // The batch's messages are rendered before its transaction (renderAhead): while the workers run
    // them, the server answers and the store too — on the embedded store a transaction held through
    // the renders would hold its one connection, and B's lead list with it.
    await eventually(() => expressionPool().load(t.orgA.orgId).running > 0);
    expect((await t.call({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const leadsOfB = await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/leads`, auth: { token: t.orgB.token } });
    expect(leadsOfB.statusCode).toBe(200);
    expect(expressionPool().load(t.orgA.orgId).running).toBeGreaterThan(0);

    const recipients = await eventually(async () => {
      const list = (await t.call({ method: 'GET', url: `${base}/campaigns/${campaign.id}/recipients?pageSize=100`, auth })).json().items as {
        status: string;
        error: string | null;
      }[];
      return list.every((r) => r.status === 'FAILED') ? list : null;
    }, 30_000);
    expect(recipients).toHaveLength(30);
    for (const r of recipients) expect(r.error).toContain('stopped: it ran longer than 100 ms');
  });
});
