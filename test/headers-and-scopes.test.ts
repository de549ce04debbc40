import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './harness.ts';

/**
 * What a black-box probe found outside the features' own tests (issue 29): headers every answer or
 * page must carry, scopes that must match CONTRACT §9 and §8, and a sort that must not reach
 * Object.prototype.
 */
let t: TestApp;
const base = () => `/api/v1/orgs/${t.orgA.orgId}`;

beforeAll(async () => {
  t = await buildTestApp({ workers: false });
});
afterAll(async () => {
  await t.close();
});

describe('headers', () => {
  it('every answer says nosniff: JSON, errors, health', async () => {
    for (const [url, status] of [
      [`${base()}/leads`, 200],
      [`${base()}/leads/lead_missing`, 404],
      ['/healthz', 200],
      ['/api/v1/nowhere', 404],
    ] as const) {
      const res = await t.call({ method: 'GET', url, auth: { token: t.orgA.token } });
      expect(res.statusCode, url).toBe(status);
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('the API reference allows only its own script and its inline configuration, by hash', async () => {
    const res = await t.call({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    const policy = String(res.headers['content-security-policy']);
    const inline = [...res.body.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)];
    expect(inline.length).toBeGreaterThan(0);
    const { createHash } = await import('node:crypto');
    for (const [, code] of inline) expect(policy).toContain(`'sha256-${createHash('sha256').update(code!).digest('base64')}'`);
    expect(policy).toMatch(/script-src 'self' 'sha256-[^;]*;/);
    expect(policy).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
    expect(policy).toContain("frame-ancestors 'none'");
  });

  it('the unsubscribe page runs no script and cannot be framed', async () => {
    const token = t.app.services.campaigns.unsubscribeToken(t.orgA.orgId, 'email', 'someone@example.com');
    for (const url of [`/api/v1/unsubscribe/${token}`, '/api/v1/unsubscribe/forged']) {
      const res = await t.call({ method: 'GET', url, headers: { accept: 'text/html' } });
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy'], url).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });
});

describe('scopes', () => {
  it('consents take the campaigns scopes (CONTRACT §9): a leads:write key cannot record a WhatsApp opt-in', async () => {
    const lead = (
      await t.call({ method: 'POST', url: `${base()}/leads`, auth: { token: t.orgA.token }, payload: { name: 'Opt', phone: '+14155550111' } })
    ).json();
    const consent = { channel: 'whatsapp', status: 'opted_in', source: 'checkout' };
    const leadsKey = await t.key(t.orgA.orgId, ['leads:read', 'leads:write']);
    const refused = await t.call({ method: 'POST', url: `${base()}/leads/${lead.id}/consents`, auth: { apiKey: leadsKey }, payload: consent });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    expect((await t.call({ method: 'GET', url: `${base()}/leads/${lead.id}/consents`, auth: { apiKey: leadsKey } })).statusCode).toBe(403);
    const campaignsKey = await t.key(t.orgA.orgId, ['campaigns:read', 'campaigns:write']);
    expect((await t.call({ method: 'POST', url: `${base()}/leads/${lead.id}/consents`, auth: { apiKey: campaignsKey }, payload: consent })).statusCode).toBe(
      201,
    );
    const listed = await t.call({ method: 'GET', url: `${base()}/leads/${lead.id}/consents`, auth: { apiKey: campaignsKey } });
    expect(listed.json().items).toMatchObject([{ channel: 'whatsapp', status: 'opted_in' }]);
  });

  it('marking a conversation read is a write (conversations:write)', async () => {
    const inbox = (
      await t.call({
        method: 'POST',
        url: `${base()}/inboxes`,
        auth: { token: t.orgA.token },
        payload: { name: 'api', channel: 'api', config: { url: 'http://127.0.0.1:9/hook' } },
      })
    ).json();
    const writer = await t.key(t.orgA.orgId, ['conversations:read', 'conversations:write']);
    const message = await t.call({
      method: 'POST',
      url: `${base()}/inboxes/${inbox.id}/messages`,
      auth: { apiKey: writer },
      payload: { contact: { address: 'reader@example.com' }, text: 'hello' },
    });
    expect(message.statusCode, message.body).toBe(201);
    const conversationId = message.json().conversationId;
    const reader = await t.key(t.orgA.orgId, ['conversations:read']);
    const refused = await t.call({ method: 'POST', url: `${base()}/conversations/${conversationId}/read`, auth: { apiKey: reader } });
    expect(refused.statusCode).toBe(403);
    const read = await t.call({ method: 'POST', url: `${base()}/conversations/${conversationId}/read`, auth: { apiKey: writer } });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({ id: conversationId, unreadCount: 0 });
  });

  it('a sort naming an Object.prototype member is a 400, not a 500', async () => {
    for (const sort of ['__proto__', 'constructor', '-toString', 'hasOwnProperty']) {
      const res = await t.call({ method: 'GET', url: `${base()}/conversations`, auth: { token: t.orgA.token }, query: { sort } });
      expect(res.statusCode, sort).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'querystring.sort' }] });
    }
  });
});
