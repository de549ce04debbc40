import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_PASSWORD, type TestApp } from '../../../test/harness.ts';
import { linkIn, SmtpStandIn } from '../../../test/smtp.ts';
import { passwordResets } from './tables.ts';

/** CONTRACT §2: changing a password, and resetting a forgotten one through an e-mailed link. */

const NEW_PASSWORD = 'a brand new passphrase';

async function signUp(t: TestApp, email: string) {
  const res = await t.call({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: TEST_PASSWORD } });
  expect(res.statusCode).toBe(201);
  return res.json() as { user: { id: string }; tokens: { accessToken: string; refreshToken: string } };
}
const loginAs = (t: TestApp, email: string, password: string) => t.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });

describe('POST /auth/password', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ workers: false });
  });
  afterAll(() => t.close());

  const change = (token: string | undefined, payload: Record<string, unknown>, apiKey?: string) =>
    t.call({ method: 'POST', url: '/api/v1/auth/password', payload, auth: apiKey ? { apiKey } : { token } });

  it('changes the password and ends every session of the user', async () => {
    const email = 'changer@example.com';
    const account = await signUp(t, email);
    const other = (await loginAs(t, email, TEST_PASSWORD)).json().tokens.refreshToken;
    const res = await change(account.tokens.accessToken, { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    for (const refreshToken of [account.tokens.refreshToken, other]) {
      expect((await t.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken } })).statusCode).toBe(401);
    }
    expect((await loginAs(t, email, TEST_PASSWORD)).statusCode).toBe(401);
    expect((await loginAs(t, email, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('a wrong current password is a 400 naming the field, and changes nothing', async () => {
    const email = 'wrong-current@example.com';
    const account = await signUp(t, email);
    const res = await change(account.tokens.accessToken, { currentPassword: 'not my password', newPassword: NEW_PASSWORD });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION_ERROR', details: [{ field: 'body.currentPassword' }] });
    expect((await loginAs(t, email, TEST_PASSWORD)).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: account.tokens.refreshToken } })).statusCode).toBe(200);
  });

  it('a weak or unchanged new password is a 400 naming body.newPassword', async () => {
    const account = await signUp(t, 'weak-new@example.com');
    for (const newPassword of ['short', '        ', 'password123', TEST_PASSWORD]) {
      const res = await change(account.tokens.accessToken, { currentPassword: TEST_PASSWORD, newPassword });
      expect(res.statusCode, newPassword).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.newPassword' }] });
    }
  });

  it('needs a user session: 401 without one, 403 for an API key', async () => {
    const none = await change(undefined, { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD });
    expect(none.statusCode).toBe(401);
    expect(none.json().code).toBe('UNAUTHORIZED');
    const key = await change(undefined, { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD }, t.orgA.apiKey);
    expect(key.statusCode).toBe(403);
    expect(key.json().code).toBe('FORBIDDEN');
  });
});

describe('password reset by e-mail', () => {
  let relay: SmtpStandIn;
  let t: TestApp;
  let now = new Date('2026-03-01T10:00:00Z');
  const PUBLIC_URL = 'https://panel.example.com';

  beforeAll(async () => {
    relay = await new SmtpStandIn().start();
    t = await buildTestApp({
      env: { SMTP_URL: relay.url, SMTP_FROM: 'Service <no-reply@example.com>', PUBLIC_URL },
      clock: { now: () => now },
      workers: false,
    });
  });
  afterAll(async () => {
    await t.close();
    await relay.close();
  });

  const ask = (email: string) => t.call({ method: 'POST', url: '/api/v1/auth/password-reset', payload: { email } });
  const confirm = (token: string, newPassword: string) =>
    t.call({ method: 'POST', url: '/api/v1/auth/password-reset/confirm', payload: { token, newPassword } });
  const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;

  it('202 for an unknown address and no e-mail; 202 for a known one and a link by e-mail that sets a new password once', async () => {
    const email = 'forgetful@example.com';
    const account = await signUp(t, email);

    const unknown = await ask('nobody-here@example.com');
    expect(unknown.statusCode).toBe(202);
    expect(unknown.body).toBe('');
    const known = await ask('Forgetful@Example.COM');
    expect(known.statusCode).toBe(202);
    expect(known.body).toBe('');

    const [mail] = await relay.waitFor(1);
    expect(relay.received).toHaveLength(1);
    expect(mail).toMatchObject({ rcptTo: [email], mailFrom: 'no-reply@example.com', subject: 'Reset your password on panel.example.com' });
    const link = linkIn(mail!, `${PUBLIC_URL}/reset-password?token=`);
    expect(mail!.html).toContain(link.replace(/&/g, '&amp;'));
    const token = tokenOf(link);
    expect(token).toMatch(/^[\w-]{43}$/);

    // Only the hash is stored, valid one hour.
    const [row] = await t.database.db.select().from(passwordResets).where(eq(passwordResets.userId, account.user.id));
    expect(row!.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.tokenHash).not.toBe(token);
    expect(row!.expiresAt.getTime() - now.getTime()).toBe(3600_000);

    // A refused password does not use the token up.
    const weak = await confirm(token, 'qwerty123');
    expect(weak.statusCode).toBe(400);
    expect(weak.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.newPassword' }] });

    expect((await confirm(token, NEW_PASSWORD)).statusCode).toBe(204);
    expect((await loginAs(t, email, NEW_PASSWORD)).statusCode).toBe(200);
    expect((await loginAs(t, email, TEST_PASSWORD)).statusCode).toBe(401);
    // Every earlier session ended.
    expect((await t.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: account.tokens.refreshToken } })).statusCode).toBe(401);

    const again = await confirm(token, 'yet another passphrase');
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({
      statusCode: 400,
      code: 'VALIDATION_ERROR',
      details: [{ field: 'body.token' }],
      message: expect.stringContaining('already used'),
    });
  });

  it('an unknown token and an expired one are 400 with a clear message', async () => {
    const unknown = await confirm('not-a-token', NEW_PASSWORD);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toMatch(/unknown, expired .* or already used/);

    await signUp(t, 'slow@example.com');
    const before = relay.received.length;
    expect((await ask('slow@example.com')).statusCode).toBe(202);
    const mail = (await relay.waitFor(before + 1)).at(-1)!;
    now = new Date(now.getTime() + 3600_000 + 1000);
    const expired = await confirm(tokenOf(linkIn(mail, `${PUBLIC_URL}/reset-password?token=`)), NEW_PASSWORD);
    expect(expired.statusCode).toBe(400);
    expect(expired.json().details).toEqual([{ field: 'body.token', message: expect.stringContaining('expired') }]);
    expect((await loginAs(t, 'slow@example.com', TEST_PASSWORD)).statusCode).toBe(200);
  });

  it('sends at most one e-mail a minute per account, and a newer link does not void an older one', async () => {
    await signUp(t, 'impatient@example.com');
    const before = relay.received.length;
    for (let i = 0; i < 3; i++) expect((await ask('impatient@example.com')).statusCode).toBe(202);
    const first = (await relay.waitFor(before + 1)).at(-1)!;
    now = new Date(now.getTime() + 61_000);
    expect((await ask('impatient@example.com')).statusCode).toBe(202);
    const second = (await relay.waitFor(before + 2)).at(-1)!;
    await new Promise((r) => setTimeout(r, 200));
    expect(relay.received.length).toBe(before + 2);
    expect(tokenOf(linkIn(second, PUBLIC_URL))).not.toBe(tokenOf(linkIn(first, PUBLIC_URL)));
    // Using one link voids the other: a password set is a password set.
    expect((await confirm(tokenOf(linkIn(first, PUBLIC_URL)), NEW_PASSWORD)).statusCode).toBe(204);
    expect((await confirm(tokenOf(linkIn(second, PUBLIC_URL)), 'other new passphrase')).statusCode).toBe(400);
  });

  it('changing the password voids open reset links', async () => {
    const account = await signUp(t, 'changes-mind@example.com');
    now = new Date(now.getTime() + 61_000);
    const before = relay.received.length;
    await ask('changes-mind@example.com');
    const mail = (await relay.waitFor(before + 1)).at(-1)!;
    const changed = await t.call({
      method: 'POST',
      url: '/api/v1/auth/password',
      auth: { token: account.tokens.accessToken },
      payload: { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD },
    });
    expect(changed.statusCode).toBe(204);
    expect((await confirm(tokenOf(linkIn(mail, PUBLIC_URL)), 'other new passphrase')).statusCode).toBe(400);
  });

  it('the request is validated like any other', async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/auth/password-reset', payload: { email: 'not an address' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().details[0].field).toBe('body.email');
  });
});

describe('password reset without SMTP_URL', () => {
  it('answers 202 and makes no link nobody could receive', async () => {
    const t = await buildTestApp({ workers: false });
    try {
      expect((await t.call({ method: 'POST', url: '/api/v1/auth/password-reset', payload: { email: t.orgA.ownerEmail } })).statusCode).toBe(202);
      expect(await t.database.db.select().from(passwordResets)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe('the password-route limit', () => {
  it('covers password reset, its confirmation and the password change, per client address', async () => {
    const t = await buildTestApp({ env: { AUTH_RATE_LIMIT_MAX: '2', RATE_LIMIT_MAX: '1000' }, workers: false });
    try {
      for (const [url, payload, auth] of [
        ['/api/v1/auth/password-reset', { email: 'x@example.com' }, undefined],
        ['/api/v1/auth/password-reset/confirm', { token: 'nope', newPassword: NEW_PASSWORD }, undefined],
        ['/api/v1/auth/password', { currentPassword: 'guess', newPassword: NEW_PASSWORD }, { token: t.orgA.token }],
      ] as const) {
        const remoteAddress = `192.0.2.${url.length}`;
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++)
          statuses.push(
            (await t.app.inject({ method: 'POST', url, payload, remoteAddress, headers: auth ? { authorization: `Bearer ${auth.token}` } : {} })).statusCode,
          );
        expect(statuses[2], url).toBe(429);
        expect(
          statuses.slice(0, 2).every((s) => s !== 429),
          url,
        ).toBe(true);
      }
    } finally {
      await t.close();
    }
  });
});
