import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { storeRunningAgentRun } from './agents.ts';
import { buildTestApp } from './harness.ts';

/**
 * Found by the chaos run (issue 31): a SIGTERM'd instance exited 1 after SHUTDOWN_GRACE_MS instead
 * of 0, because a stream request still in its handler (reading the run) when the shutdown closed the
 * open streams opened its stream afterwards, and nothing closed that one: app.close() waited on its
 * connection. Streams are opened here without pause while the app closes.
 */
describe('shutdown while event streams are opening', () => {
  it('app.close() finishes, and no stream is left open', async () => {
    const t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    // A run that stays RUNNING (held by another instance's lease): its stream stays open.
    const id = await storeRunningAgentRun(t, { prefix: 'held' });
    let opened = 0;
    const open = () => {
      const req = request(
        {
          port,
          host: '127.0.0.1',
          path: `/api/v1/orgs/${t.orgA.orgId}/agent-runs/${id}/events`,
          headers: { authorization: `Bearer ${t.orgA.token}` },
          agent: false,
        },
        (res) => {
          if (res.statusCode === 200) opened++;
          res.resume();
        },
      );
      req.on('error', () => undefined);
      req.end();
    };
    const timer = setInterval(() => {
      for (let i = 0; i < 3; i++) open();
    }, 2);
    await new Promise((r) => setTimeout(r, 400));
    const outcome = await Promise.race([t.app.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('still closing after 5 s'), 5000))]);
    clearInterval(timer);
    expect(opened).toBeGreaterThan(0);
    expect(outcome).toBe('closed');
    expect(t.app.services.streams.size).toBe(0);
  }, 30_000);
});
