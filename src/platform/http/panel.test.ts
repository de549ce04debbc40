import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.ts';
import type { App } from './types.ts';
import { freshDatabase } from '../../../test/database.ts';
import { testConfig } from '../../../test/harness.ts';
import { PANEL_DIST } from './panel.ts';

/** A built panel as Vite lays it out: index.html, a hashed asset, a top-level public file. */
function fixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'panel-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><title>Panel</title><div id="root"></div><script type="module" src="/assets/index-Ab12Cd34.js"></script>',
  );
  writeFileSync(join(dir, 'assets', 'index-Ab12Cd34.js'), 'console.log("panel")');
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}

async function appWith(panelDir: string): Promise<App> {
  const database = await freshDatabase();
  const app = await buildApp({ config: testConfig(), database, logger: false, workers: false, panelDir });
  app.addHook('onClose', () => database.close());
  await app.ready();
  return app;
}

describe('the panel served at /', () => {
  let app: App;
  beforeAll(async () => {
    app = await appWith(fixture());
  });
  afterAll(async () => app.close());

  it('serves index.html at / and at every client-side path, never cached, with a CSP that allows no inline script', async () => {
    for (const url of ['/', '/orgs/org_1/leads?status=NEW', '/login', '/reset-password?token=x']) {
      const res = await app.inject({ url, headers: { accept: 'text/html' } });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<div id="root">');
      expect(res.headers['cache-control']).toBe('no-cache');
      const csp = String(res.headers['content-security-policy']);
      const scripts = csp
        .split(';')
        .map((d) => d.trim())
        .find((d) => d.startsWith('script-src'));
      expect(scripts).toBe("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
    }
  });

  it('caches hashed assets for a year and top-level files not at all', async () => {
    const asset = await app.inject({ url: '/assets/index-Ab12Cd34.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const icon = await app.inject({ url: '/favicon.svg' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
    expect((await app.inject({ url: '/assets/missing-0000.js' })).statusCode).toBe(404);
  });

  it('leaves the API, the docs and the probes alone: unknown API paths stay JSON 404s', async () => {
    for (const url of ['/api/v1/nope', '/api/v1/orgs/x/nothing-here', '/api', '/docs/nope', '/media/x', '/missing.png']) {
      const res = await app.inject({ url, headers: { accept: 'text/html' } });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
    }
    expect((await app.inject({ method: 'POST', url: '/orgs/x' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await app.inject({ url: '/docs' })).statusCode).toBeLessThan(400);
    expect((await app.inject({ url: '/api/v1/openapi.json' })).statusCode).toBe(200);
  });
});

describe('without a build', () => {
  it('answers the panel paths with 503 and how to build it, and the API as usual', async () => {
    const app = await appWith(mkdtempSync(join(tmpdir(), 'panel-empty-')));
    try {
      const res = await app.inject({ url: '/orgs/x/leads' });
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('npm run build:panel');
      expect((await app.inject({ url: '/api/v1/nope' })).statusCode).toBe(404);
    } finally {
      await app.close();
    }
  });
});

describe.runIf(existsSync(join(PANEL_DIST, 'index.html')))('the real build', () => {
  it('has no inline script in index.html (the CSP would block it)', () => {
    const html = readFileSync(join(PANEL_DIST, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\ssrc="\/assets\//);
      expect(body!.trim()).toBe('');
    }
  });
});
