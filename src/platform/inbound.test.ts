import { createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unauthorized } from './errors.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { FreeObject, Type } from './http/schemas.ts';
import type { App } from './http/types.ts';
import { inboundRoute } from './inbound.ts';

// A provider-style route: the sender signs the raw bytes of the body (like Stripe or WhatsApp), so
// the check only passes if the bytes the verifier sees are the bytes that were sent.
const SECRET = 'provider-secret';
const sign = (raw: string) => createHmac('sha256', SECRET).update(raw).digest('hex');

describe('inbound routes', () => {
  let app: App;
  const handled: unknown[] = [];
  let otherRouteRawBody: unknown = 'unset';

  beforeAll(async () => {
    app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
    registerErrorHandling(app);
    await app.register(rateLimit, { global: false });
    inboundRoute<{ account: string }, Record<string, unknown>, { account: string }>(app, {
      path: '/inbound/:account',
      schema: { params: Type.Object({ account: Type.String() }), body: FreeObject('the provider event') },
      verify: async ({ params, headers, rawBody }) => {
        if (params.account === 'broken') throw new Error('the secret store is down');
        const given = Buffer.from(String(headers['x-signature'] ?? ''), 'hex');
        const wanted = Buffer.from(sign(rawBody.toString('utf8')), 'hex');
        return given.length === wanted.length && timingSafeEqual(given, wanted) ? { account: params.account } : null;
      },
      refusal: () => unauthorized('Bad signature'),
      handle: async (sender, request) => {
        handled.push({ sender, body: request.body });
        return { ok: true };
      },
      limits: { bodyBytes: 256, rate: { max: 4, windowMs: 60_000 } },
    });
    app.post('/plain', async (request) => {
      otherRouteRawBody = request.rawBody;
      return { ok: true };
    });
    await app.ready();
  });
  afterAll(() => app.close());

  const post = (raw: string, signature = sign(raw), account = 'acme') =>
    app.inject({ method: 'POST', url: `/inbound/${account}`, headers: { 'content-type': 'application/json', 'x-signature': signature }, payload: raw });

  it('verifies the bytes as sent, then hands the parsed body to the handler', async () => {
    // Spacing and key order a re-serialization would change.
    const raw = '{ "b": 1,   "a": "ü" }';
    const res = await post(raw);
    expect(res.statusCode).toBe(200);
    expect(handled).toEqual([{ sender: { account: 'acme' }, body: { b: 1, a: 'ü' } }]);
  });

  it('fails closed: a sender that does not verify, or a verifier that throws, never reaches the handler', async () => {
    handled.length = 0;
    const refused = await post('{"a":1}', sign('{"a": 1}'));
    expect(refused.statusCode).toBe(401);
    expect(refused.json().message).toBe('Bad signature');
    expect((await post('{"a":1}', sign('{"a":1}'), 'broken')).statusCode).toBe(500);
    expect(handled).toEqual([]);
  });

  it('keeps the raw body on inbound routes only', async () => {
    await app.inject({ method: 'POST', url: '/plain', payload: { a: 1 } });
    expect(otherRouteRawBody).toBeUndefined();
  });

  it('applies the limits declared with the route', async () => {
    expect((await post(JSON.stringify({ text: 'x'.repeat(300) }))).statusCode).toBe(413);
    // Four requests in the window so far (the 413 included); the fifth is refused.
    const limited = await post('{}');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
  });
});
