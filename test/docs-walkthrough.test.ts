import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allNodes } from '../src/modules/workflows/nodes/index.ts';
import { TEMPLATES } from '../src/modules/workflows/templates/index.ts';
import { buildTestApp, type TestApp } from './harness.ts';

/**
 * The README's first steps and docs/workflows.md's walkthrough, run as written with bash, curl and
 * jq against a listening server (only the base URL changed), so the documented commands, response
 * shapes and jq paths cannot drift from the code.
 */

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const workflowsDoc = readFileSync(new URL('../docs/workflows.md', import.meta.url), 'utf8');
const shBlocks = (markdown: string) => [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '100' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  // The README's user, created the way a new user can in development: sign-up over the API.
  const res = await fetch(`${base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'you@example.com', password: 'a long password', organizationName: 'Acme' }),
  });
  expect(res.status).toBe(201);
});
afterAll(async () => {
  await t.close();
});

function bash(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('docs/workflows.md', () => {
  it('documents every node type of the catalog and every template', () => {
    for (const node of allNodes()) expect(workflowsDoc, node.type).toContain(`| \`${node.type}\` | \`${node.outputs.join('`, `')}\``);
    for (const template of TEMPLATES) expect(workflowsDoc, template.id).toContain(`| \`${template.id}\` |`);
  });

  it('README first steps, then the walkthrough: log in, API key, lead; create, run in test mode, stream, approve', { timeout: 120_000 }, async () => {
    const first = shBlocks(readme).find((b) => b.includes('ACCESS_TOKEN=$('));
    expect(first).toBeDefined();
    const walkthrough = workflowsDoc.slice(workflowsDoc.indexOf('## Walkthrough'));
    const steps = shBlocks(walkthrough);
    expect(steps.length).toBeGreaterThanOrEqual(4);
    const script = [
      first!.replace('http://localhost:3000', base),
      // (the lead's JSON ends without a newline)
      'echo; echo "VARS $ORG_ID $API_KEY ${#ACCESS_TOKEN}"',
      ...steps,
    ].join('\n');
    const run = await bash(script);
    expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);

    const vars = /^VARS (\S+) (\S+) (\d+)$/m.exec(run.stdout);
    expect(vars, run.stdout).not.toBeNull();
    const [, orgId, apiKey, tokenLength] = vars!;
    expect(orgId).toMatch(/^org_/);
    expect(apiKey).toMatch(/^svc_/);
    expect(Number(tokenLength)).toBeGreaterThan(20);
    expect(run.stdout).toContain('"name":"Ada Lovelace"');
    expect(run.stdout).toMatch(/^workflow wf_\w+$/m);

    // The stream in the background printed the run's events, up to run.finished.
    for (const event of ['run.started', 'node.waiting', 'run.finished']) expect(run.stdout).toContain(`event: ${event}`);
    expect(run.stdout).toMatch(/"type":"run.finished".*"status":"SUCCEEDED"/);
    // The approval answer, then the run summary of the last block.
    expect(run.stdout).toMatch(/"status": "APPROVED",\s*"title": "Accept the deal Navy Labs: 2500 EUR\?",\s*"comment": "Go ahead"/);
    const summary = JSON.parse(run.stdout.slice(run.stdout.lastIndexOf('\n{\n') + 1)) as {
      status: string;
      testMode: boolean;
      steps: { nodeId: string; status: string }[];
      notification: { url: string; event: string; dryRun: boolean };
    };
    expect(summary).toMatchObject({
      status: 'SUCCEEDED',
      testMode: true,
      notification: { url: 'https://hooks.example.com/deals', event: 'deal.accepted', dryRun: true },
    });
    expect(summary.steps.map((s) => `${s.nodeId}:${s.status}`)).toEqual([
      'start:SUCCEEDED',
      'prepare:SUCCEEDED',
      'isBig:SUCCEEDED',
      'approve:SUCCEEDED',
      'save:SUCCEEDED',
      'notify:SUCCEEDED',
    ]);

    // The lead the workflow saved is there, through the API.
    const leads = await t.call({ method: 'GET', url: `/api/v1/orgs/${orgId}/leads?q=grace`, auth: { apiKey } });
    expect(leads.json()).toMatchObject({ items: [{ name: 'Grace Hopper', email: 'grace@example.com', tags: ['deal'] }] });
  });
});
