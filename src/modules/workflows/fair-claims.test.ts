import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inArray } from 'drizzle-orm';
import { buildTestApp, TEST_PASSWORD, type TestApp } from '../../../test/harness.ts';
import { eventually } from '../../../test/helpers.ts';
import { workflowRuns } from './tables.ts';

/**
 * Fair claiming: one organization's flood of queued runs does not hold back the others. The run
 * loop is not started; the test drives claim rounds one at a time (two slots each) and looks at
 * which organizations' runs each round started. (Which organization goes first depends on how
 * their ids sort: the turns go round them in that order.)
 */
const nodes = [
  { id: 'start', type: 'trigger.manual' },
  { id: 'set', type: 'data.set', params: { fields: { ok: true } } },
];
const edges = [{ from: 'start', to: 'set' }];

describe('claiming queued runs in turns across organizations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ workers: false, env: { WORKFLOW_CONCURRENCY: '2', RUN_QUEUE_MAX_AGE_MS: '0' } });
  });
  afterAll(() => t.close());

  it("starts a small organization's runs within the first rounds, though a flood of another's was queued before them", async () => {
    const { organization } = await t.app.services.auth.createUserWithOrg({
      email: `owner-c-${Date.now()}@example.com`,
      password: TEST_PASSWORD,
      organizationName: 'Org C',
    });
    const apiKeyC = await t.key(organization.id, ['*']);
    const orgs = [
      { name: 'A', orgId: t.orgA.orgId, auth: { token: t.orgA.token }, runs: 30 },
      { name: 'B', orgId: t.orgB.orgId, auth: { token: t.orgB.token }, runs: 3 },
      { name: 'C', orgId: organization.id, auth: { apiKey: apiKeyC }, runs: 2 },
    ];
    const nameOf = new Map(orgs.map((o) => [o.orgId, o.name]));
    // A floods first; B and C queue a few runs after all of A's.
    for (const org of orgs) {
      const created = await t.call({
        method: 'POST',
        url: `/api/v1/orgs/${org.orgId}/workflows`,
        auth: org.auth,
        payload: { name: `wf ${org.name}`, nodes, edges },
      });
      expect(created.statusCode).toBe(201);
      for (let i = 0; i < org.runs; i++) {
        const res = await t.call({
          method: 'POST',
          url: `/api/v1/orgs/${org.orgId}/workflows/${created.json().id}/run`,
          auth: org.auth,
          payload: { input: { i } },
        });
        expect(res.statusCode).toBe(201);
      }
    }

    const driver = t.app.services.runDriver;
    const claimRound = async () => {
      await driver.round();
      await eventually(() => expect(driver.running).toBe(0));
    };
    const seen = new Set<string>();
    const rounds: string[][] = [];
    for (let round = 0; round < 5; round++) {
      await claimRound();
      const started = await t.database.db
        .select({ id: workflowRuns.id, orgId: workflowRuns.orgId, status: workflowRuns.status })
        .from(workflowRuns)
        .where(
          inArray(
            workflowRuns.orgId,
            orgs.map((o) => o.orgId),
          ),
        );
      const fresh = started.filter((r) => r.status !== 'QUEUED' && !seen.has(r.id));
      for (const r of fresh) {
        seen.add(r.id);
        expect(r.status).toBe('SUCCEEDED');
      }
      rounds.push(fresh.map((r) => nameOf.get(r.orgId)!).sort());
    }
    // Two slots a round, served organization by organization in turn: B's 3 and C's 2 runs all
    // start within the first five rounds, while 25 of A's runs are still queued (first come,
    // first served would have started them after all 30 of A's, in round 16).
    expect(rounds.every((names) => names.length === 2)).toBe(true);
    const count = (name: string) => rounds.flat().filter((n) => n === name).length;
    expect(count('B')).toBe(3);
    expect(count('C')).toBe(2);
    expect(count('A')).toBe(5);
    // A's flood is then worked off on its own.
    for (let round = 0; round < 13; round++) await claimRound();
    const left = await t.database.db
      .select({ status: workflowRuns.status })
      .from(workflowRuns)
      .where(inArray(workflowRuns.orgId, [t.orgA.orgId]));
    expect(left.filter((r) => r.status === 'SUCCEEDED')).toHaveLength(30);
  });
});
