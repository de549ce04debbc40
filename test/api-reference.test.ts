import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './harness.ts';

/** The API reference at /docs is ours: no vendor toolbar, no AI agent, no request leaves this server. */

const PUBLIC_URL = 'https://automation.example.test';
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ env: { PUBLIC_URL }, workers: false });
});
afterAll(async () => {
  await t.close();
});

/** The configuration object the page hands to the reference's script. */
function pageConfiguration(html: string): Record<string, unknown> {
  const match = /createApiReference\('#app',\s*(\{[\s\S]*?\})\s*\)\s*<\/script>/.exec(html);
  expect(match, html).not.toBeNull();
  return JSON.parse(match![1]!) as Record<string, unknown>;
}

describe('GET /docs', () => {
  it('has our name as the title and the server URL from PUBLIC_URL', async () => {
    const res = await t.call({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('<title>Automation Service API reference</title>');
    const config = pageConfiguration(res.body);
    expect(config).toMatchObject({ title: 'Automation Service API', url: '/api/v1/openapi.json', servers: [{ url: PUBLIC_URL }], baseServerURL: PUBLIC_URL });
  });

  it('turns off the vendor toolbar ("Deploy"), the "Ask AI" agent and MCP offer, telemetry and the web fonts', async () => {
    const config = pageConfiguration((await t.call({ method: 'GET', url: '/docs/' })).body);
    expect(config).toMatchObject({
      showDeveloperTools: 'never',
      agent: { disabled: true },
      mcp: { disabled: true },
      telemetry: false,
      withDefaultFonts: false,
      _integration: null,
    });
    expect(config).not.toHaveProperty('proxyUrl');
    expect(config).not.toHaveProperty('bundle');
  });

  it('references no external URL: the script comes from this server, and the only absolute URL is PUBLIC_URL', async () => {
    const html = (await t.call({ method: 'GET', url: '/docs/' })).body;
    const absolute = [...html.matchAll(/(?:https?:)?\/\/[^\s"'`)<>]+/g)].map((m) => m[0]);
    expect(absolute.filter((url) => !url.startsWith(PUBLIC_URL))).toEqual([]);
    expect(html).not.toMatch(/cdn\.jsdelivr|fonts\.(googleapis|scalar)\.com|unpkg/);
    expect(html).not.toMatch(/<link\b/);

    const sources = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources).toHaveLength(1);
    // Relative to the page, as a browser resolves it.
    const script = new URL(sources[0]!, 'http://this.server/docs/');
    expect(script.host).toBe('this.server');
    const js = await t.call({ method: 'GET', url: script.pathname });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toContain('javascript');
    expect(js.body).toContain('createApiReference');
  });
});
