import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './harness.ts';
import { freePort } from './processes.ts';
import { eventually } from './helpers.ts';

// The receiver printed in docs/webhooks.md, run as written (only its port changed) against real deliveries.
let t: TestApp;
let child: ChildProcess;
let output = '';
let port = 0;

beforeAll(async () => {
  const doc = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8');
  const code = /```ts\n([\s\S]*?)```/.exec(doc)![1]!;
  port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'doc-receiver-'));
  writeFileSync(join(dir, 'receiver.ts'), code.replace('.listen(8080)', `.listen(${port})`));
  child = spawn(process.execPath, [join(dir, 'receiver.ts')], { env: { ...process.env, WEBHOOK_SECRET: 'whsec_documented' } });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  t = await buildTestApp();
  await eventually(async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' })).status === 401);
});
afterAll(async () => {
  child.kill();
  await t.close();
});

it('the documented receiver accepts signed deliveries once each and refuses forged or stale ones', async () => {
  const base = `/api/v1/orgs/${t.orgA.orgId}`;
  const ep = (
    await t.call({
      method: 'POST',
      url: `${base}/webhook-endpoints`,
      auth: { token: t.orgA.token },
      payload: { url: `http://127.0.0.1:${port}/`, events: ['*'], secret: 'whsec_documented' },
    })
  ).json();
  const lead = (await t.call({ method: 'POST', url: `${base}/leads`, auth: { token: t.orgA.token }, payload: { name: 'Documented' } })).json();
  const first = await eventually(async () => {
    const list = (await t.call({ method: 'GET', url: `${base}/webhook-endpoints/${ep.id}/deliveries`, auth: { token: t.orgA.token } })).json();
    return list.items.find((d: { status: string }) => d.status === 'succeeded');
  });
  expect(first.statusCode).toBe(204);
  await eventually(() => output.includes(lead.id));
  // A resend carries the same envelope id: accepted, but not handled twice.
  await t.call({ method: 'POST', url: `${base}/webhook-endpoints/${ep.id}/deliveries/${first.id}/resend`, auth: { token: t.orgA.token } });
  await eventually(
    async () =>
      (
        await t.call({ method: 'GET', url: `${base}/webhook-endpoints/${ep.id}/deliveries`, auth: { token: t.orgA.token }, query: { status: 'succeeded' } })
      ).json().total === 2,
  );
  expect(output.split('lead.created').length - 1).toBe(1);
  const forged = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    body: '{"id":"evt_x"}',
    headers: { 'x-service-timestamp': String(Math.floor(Date.now() / 1000)), 'x-service-signature': 'sha256=' + '0'.repeat(64) },
  });
  expect(forged.status).toBe(401);
  const stale = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    body: '{}',
    headers: { 'x-service-timestamp': String(Math.floor(Date.now() / 1000) - 301), 'x-service-signature': 'sha256=x' },
  });
  expect(stale.status).toBe(401);
});
