import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_PASSWORD, type TestApp } from '../../../test/harness.ts';
import { linkIn, SmtpStandIn } from '../../../test/smtp.ts';
import { invitations } from './tables.ts';

/** CONTRACT §2: invitations, by link and by e-mail; accepting one joins the organization, signed in. */

const PUBLIC_URL = 'https://panel.example.com';
const LINK = `${PUBLIC_URL}/accept-invitation?token=`;
const NEW_PASSWORD = 'a fine new passphrase';

let relay: SmtpStandIn;
let t: TestApp;
let now = new Date('2026-04-01T09:00:00Z');

beforeAll(async () => {
  relay = await new SmtpStandIn({ rejectRecipient: (to) => (to.startsWith('bounce@') ? 'No such mailbox' : null) }).start();
  // Sign-up is off: an invitation still creates the account.
  t = await buildTestApp({ env: { SMTP_URL: relay.url, PUBLIC_URL, ALLOW_SIGNUP: 'false' }, clock: { now: () => now }, workers: false });
});
afterAll(async () => {
  await t.close();
  await relay.close();
});

const base = () => `/api/v1/orgs/${t.orgA.orgId}/invitations`;
const invite = (email: string, role = 'member', token = t.orgA.token) => t.call({ method: 'POST', url: base(), auth: { token }, payload: { email, role } });
const accept = (payload: Record<string, unknown>, token?: string) =>
  t.call({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload, auth: token ? { token } : undefined });
const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

describe('inviting', () => {
  it('an owner invites an address: 201 with the single-use link, e-mailed to the address', async () => {
    const res = await invite('New.Person@Example.com', 'admin');
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^inv_/),
      email: 'new.person@example.com',
      role: 'admin',
      status: 'pending',
      expiresAt: new Date(now.getTime() + 7 * 24 * 3600_000).toISOString(),
      invitedBy: t.orgA.ownerId,
      createdAt: now.toISOString(),
      url: expect.stringMatching(/^https:\/\/panel\.example\.com\/accept-invitation\?token=[\w-]{43}$/),
      emailed: true,
    });
    const mail = (await relay.waitFor(1))[0]!;
    expect(mail.rcptTo).toEqual(['new.person@example.com']);
    expect(mail.subject).toBe('Owner A invited you to Org A');
    expect(mail.text).toContain('as admin');
    expect(linkIn(mail, LINK)).toBe(body.url);

    // Listed without its link; the token is stored only as a hash.
    const list = await t.call({ url: base(), auth: { token: t.orgA.token } });
    expect(list.statusCode).toBe(200);
    const listed = list.json().find((i: { id: string }) => i.id === body.id);
    expect(listed).toEqual({
      id: body.id,
      email: 'new.person@example.com',
      role: 'admin',
      status: 'pending',
      expiresAt: body.expiresAt,
      invitedBy: t.orgA.ownerId,
      createdAt: body.createdAt,
    });
    expect(JSON.stringify(list.json())).not.toContain(tokenOf(body.url));
    const rows = await t.database.db.select().from(invitations);
    for (const row of rows) expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows.some((r) => r.tokenHash === tokenOf(body.url))).toBe(false);
  });

  it('the new account accepts with a password and a name, even with sign-up off, and is signed in as a member', async () => {
    const created = (await invite('joiner@example.com', 'member')).json();
    const res = await accept({ token: tokenOf(created.url), password: NEW_PASSWORD, name: 'Joiner' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.user).toMatchObject({ id: expect.stringMatching(/^usr_/), email: 'joiner@example.com', name: 'Joiner' });
    expect(body.organization).toMatchObject({ id: t.orgA.orgId, name: 'Org A' });
    expect(body.tokens).toEqual({ accessToken: expect.any(String), refreshToken: expect.any(String), expiresIn: 900 });
    const me = await t.call({ url: '/api/v1/auth/me', auth: { token: body.tokens.accessToken } });
    expect(me.json().memberships).toEqual([{ organizationId: t.orgA.orgId, role: 'member' }]);
    expect((await t.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'joiner@example.com', password: NEW_PASSWORD } })).statusCode).toBe(
      200,
    );

    // Single use; and an accepted invitation leaves the list (it is a member now).
    const again = await accept({ token: tokenOf(created.url), password: NEW_PASSWORD });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.token' }], message: expect.stringContaining('already accepted') });
    const list = (await t.call({ url: base(), auth: { token: t.orgA.token } })).json();
    expect(list.map((i: { email: string }) => i.email)).not.toContain('joiner@example.com');
    // Inviting a member is a conflict.
    const member = await invite('joiner@example.com');
    expect(member.statusCode).toBe(409);
    expect(member.json().code).toBe('CONFLICT');
  });

  it('a new address needs an acceptable password; the refusal does not use the link up', async () => {
    const { url } = (await invite('needs-password@example.com')).json();
    const missing = await accept({ token: tokenOf(url) });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.password' }] });
    const weak = await accept({ token: tokenOf(url), password: 'password1' });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().details).toEqual([{ field: 'body.password', message: expect.stringContaining('common') }]);
    expect((await accept({ token: tokenOf(url), password: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('an existing account joins only when its owner proves it: signed in as it, or its password', async () => {
    // Owner B has an account (and an organization of their own).
    const { url } = (await invite(t.orgB.ownerEmail.toUpperCase(), 'viewer')).json();
    const token = tokenOf(url);
    // The inviter holds the link too: the link alone must not sign anyone in as Owner B.
    const bare = await accept({ token });
    expect(bare.statusCode).toBe(401);
    expect(bare.json()).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringContaining(t.orgB.ownerEmail) });
    expect((await accept({ token, password: 'not their password' })).statusCode).toBe(401);
    const otherAccount = await accept({ token }, t.orgA.token);
    expect(otherAccount.statusCode).toBe(403);

    const res = await accept({ token }, t.orgB.token);
    expect(res.statusCode).toBe(200);
    expect(res.json().user.id).toBe(t.orgB.ownerId);
    const me = await t.call({ url: '/api/v1/auth/me', auth: { token: res.json().tokens.accessToken } });
    expect(me.json().memberships).toEqual(
      expect.arrayContaining([
        { organizationId: t.orgA.orgId, role: 'viewer' },
        { organizationId: t.orgB.orgId, role: 'owner' },
      ]),
    );
    // Their password is unchanged and still theirs.
    expect((await t.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: t.orgB.ownerEmail, password: TEST_PASSWORD } })).statusCode).toBe(200);
  });

  it('an existing account may accept with its password instead, and ask for the cookie', async () => {
    const other = await t.member(t.orgB.orgId, 'member');
    const user = await t.app.services.auth.getUser(other.userId);
    const { url } = (await invite(user!.email)).json();
    const res = await accept({ token: tokenOf(url), password: TEST_PASSWORD, cookie: true });
    expect(res.statusCode).toBe(200);
    expect(res.json().tokens.refreshToken).toBeUndefined();
    expect(res.cookies.find((c) => c.name === 'refresh_token')).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/v1/auth', secure: true });
  });

  it('inviting the address again replaces the link; a revoked or expired link is refused', async () => {
    const first = (await invite('twice@example.com', 'member')).json();
    const second = (await invite('twice@example.com', 'admin')).json();
    expect(second.id).toBe(first.id);
    expect(second.role).toBe('admin');
    const list = (await t.call({ url: base(), auth: { token: t.orgA.token } })).json();
    expect(list.filter((i: { email: string }) => i.email === 'twice@example.com')).toHaveLength(1);
    expect((await accept({ token: tokenOf(first.url), password: NEW_PASSWORD })).statusCode).toBe(400);

    const revoked = await t.call({ method: 'DELETE', url: `${base()}/${second.id}`, auth: { token: t.orgA.token } });
    expect(revoked.statusCode).toBe(204);
    const afterRevoke = await accept({ token: tokenOf(second.url), password: NEW_PASSWORD });
    expect(afterRevoke.statusCode).toBe(400);
    expect(afterRevoke.json().message).toContain('revoked');
    expect((await t.call({ method: 'DELETE', url: `${base()}/${second.id}`, auth: { token: t.orgA.token } })).statusCode).toBe(404);

    const late = (await invite('late@example.com')).json();
    const before = now;
    now = new Date(now.getTime() + 7 * 24 * 3600_000 + 1000);
    const fresh = (await t.app.services.auth.login(t.orgA.ownerEmail, TEST_PASSWORD)).tokens.accessToken;
    const expiredList = (await t.call({ url: base(), auth: { token: fresh } })).json();
    expect(expiredList.find((i: { id: string }) => i.id === late.id).status).toBe('expired');
    const expired = await accept({ token: tokenOf(late.url), password: NEW_PASSWORD });
    expect(expired.statusCode).toBe(400);
    expect(expired.json().details[0].message).toContain('expired');
    expect((await accept({ token: 'no-such-token', password: NEW_PASSWORD })).statusCode).toBe(400);
    // Back to the time the fixtures' access tokens were signed at, for the tests below.
    now = before;
  });

  it('a relay refusing the address leaves the invitation made, with emailed: false', async () => {
    const res = await invite('bounce@example.com');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ emailed: false, url: expect.stringContaining(LINK) });
  });
});

describe('who may manage invitations', () => {
  it('owners and admins; members, viewers, API keys and project-bound keys are refused; other organizations see 404', async () => {
    const admin = await t.member(t.orgA.orgId, 'admin');
    expect((await invite('by-admin@example.com', 'member', admin.token)).statusCode).toBe(201);
    // Only an owner invites an owner.
    const owner = await invite('new-owner@example.com', 'owner', admin.token);
    expect(owner.statusCode).toBe(403);
    expect(owner.json().code).toBe('FORBIDDEN');
    expect((await invite('new-owner@example.com', 'owner')).statusCode).toBe(201);

    for (const role of ['member', 'viewer'] as const) {
      const m = await t.member(t.orgA.orgId, role);
      for (const [method, payload] of [
        ['GET', undefined],
        ['POST', { email: 'x@example.com', role: 'member' }],
      ] as const) {
        const res = await t.call({ method, url: base(), auth: { token: m.token }, payload });
        expect(res.statusCode, `${role} ${method}`).toBe(403);
        expect(res.json().code).toBe('FORBIDDEN');
      }
    }
    const projectKey = await t.key(t.orgA.orgId, ['*'], t.orgA.projectId);
    for (const apiKey of [t.orgA.apiKey, projectKey]) {
      expect((await t.call({ url: base(), auth: { apiKey } })).statusCode).toBe(403);
      expect((await t.call({ method: 'POST', url: base(), auth: { apiKey }, payload: { email: 'x@example.com', role: 'member' } })).statusCode).toBe(403);
    }
    const mine = (await invite('cross@example.com')).json();
    // (Owner B joined A above; an owner of B alone is the outsider here.)
    const outsider = await t.member(t.orgB.orgId, 'owner');
    expect((await t.call({ url: `/api/v1/orgs/${t.orgA.orgId}/invitations`, auth: { token: outsider.token } })).statusCode).toBe(404);
    // B's owner cannot revoke A's invitation through B's path either.
    const cross = await t.call({ method: 'DELETE', url: `/api/v1/orgs/${t.orgB.orgId}/invitations/${mine.id}`, auth: { token: outsider.token } });
    expect(cross.statusCode).toBe(404);
    expect((await accept({ token: tokenOf(mine.url), password: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('validates the body', async () => {
    const res = await t.call({ method: 'POST', url: base(), auth: { token: t.orgA.token }, payload: { email: 'not-an-address', role: 'boss' } });
    expect(res.statusCode).toBe(400);
    expect(
      res
        .json()
        .details.map((d: { field: string }) => d.field)
        .sort(),
    ).toEqual(['body.email', 'body.role']);
  });
});

describe('without SMTP_URL', () => {
  it('the invitation is made and its link returned, with emailed: false', async () => {
    const plain = await buildTestApp({ workers: false });
    try {
      const res = await plain.call({
        method: 'POST',
        url: `/api/v1/orgs/${plain.orgA.orgId}/invitations`,
        auth: { token: plain.orgA.token },
        payload: { email: 'someone@example.com', role: 'member' },
      });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ emailed: false, url: expect.stringMatching(/^http:\/\/localhost:3000\/accept-invitation\?token=/) });
    } finally {
      await plain.close();
    }
  });
});
