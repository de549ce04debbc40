import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { buildTestApp, type OrgFixture, type TestApp } from '../../../test/harness.ts';
import { SmtpStandIn, type ReceivedMail } from '../../../test/smtp.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { EmailChannel, stripQuoted } from './email.ts';
import { conversations, inboxes, messages } from './tables.ts';

let t: TestApp;
let smtp: SmtpStandIn;

beforeAll(async () => {
  smtp = await new SmtpStandIn({ rejectRecipient: (address) => (address.startsWith('nobody') ? '5.1.1 No such user here' : null) }).start();
  t = await buildTestApp({ env: { SMTP_URL: smtp.url, WEBHOOK_RETRY_DELAYS_S: '0,0,0', WEBHOOK_TIMEOUT_MS: '5000', PUBLIC_URL: 'https://svc.example.com' } });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const base = (org: OrgFixture = t.orgA) => `/api/v1/orgs/${org.orgId}`;
const owner = (org: OrgFixture = t.orgA) => ({ token: org.token });
let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}`;

interface Inbox {
  id: string;
  channel: string;
  inboundUrl: string;
  config: Record<string, unknown>;
  secrets?: { token: string };
}

async function emailInbox(org: OrgFixture = t.orgA, config: Record<string, unknown> = {}): Promise<Inbox & { secrets: { token: string } }> {
  const res = await t.call({
    method: 'POST',
    url: `${base(org)}/inboxes`,
    auth: owner(org),
    payload: { name: 'Support', channel: 'email', config: { address: `${unique('support')}@shop.example.com`, fromName: 'Shop Support', ...config } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** A raw message as a mail relay posts it (CRLF line ends). */
function mime(o: {
  from: string;
  to?: string;
  subject?: string;
  messageId?: string;
  inReplyTo?: string;
  references?: string;
  headers?: Record<string, string>;
  body?: string;
  contentType?: string;
}): string {
  const lines = [
    `From: ${o.from}`,
    `To: ${o.to ?? 'support@shop.example.com'}`,
    ...(o.subject !== undefined ? [`Subject: ${o.subject}`] : []),
    'Date: Mon, 23 Nov 2026 10:00:00 +0000',
    ...(o.messageId ? [`Message-ID: ${o.messageId}`] : []),
    ...(o.inReplyTo ? [`In-Reply-To: ${o.inReplyTo}`] : []),
    ...(o.references ? [`References: ${o.references}`] : []),
    ...Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    'MIME-Version: 1.0',
    `Content-Type: ${o.contentType ?? 'text/plain; charset=utf-8'}`,
    '',
    o.body ?? 'Hello',
  ];
  return lines.join('\r\n').replace(/(?<!\r)\n/g, '\r\n');
}

function post(inbox: Pick<Inbox, 'id'>, raw: string | Buffer, token: string | null, contentType = 'message/rfc822') {
  const url = `/api/v1/hooks/email/${inbox.id}${token === null ? '' : `?token=${encodeURIComponent(token)}`}`;
  return t.call({ method: 'POST', url, headers: { 'content-type': contentType }, payload: raw });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function conversation(id: string, org: OrgFixture = t.orgA): Promise<Record<string, any>> {
  const res = await t.call({ method: 'GET', url: `${base(org)}/conversations/${id}`, auth: owner(org) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const rowsOf = (inboxId: string) => t.database.db.select().from(messages).where(eq(messages.inboxId, inboxId));

/** The mail the relay received for an address, with its threading headers. */
async function mailTo(address: string, nth = 1): Promise<ReceivedMail & { messageId: string; inReplyTo?: string; references: string[] }> {
  const mail = await eventually(() => {
    const found = smtp.received.filter((m) => m.rcptTo.includes(address));
    return found.length >= nth ? found[nth - 1] : undefined;
  });
  const parsed = await simpleParser(mail.raw);
  return { ...mail, messageId: parsed.messageId!, inReplyTo: parsed.inReplyTo, references: [parsed.references ?? []].flat() };
}

describe('email inboxes', () => {
  it('an email inbox takes a plain address, shows its inbound token once and keeps it hashed', async () => {
    const inbox = await emailInbox();
    expect(inbox.channel).toBe('email');
    expect(inbox.secrets.token.length).toBeGreaterThanOrEqual(32);
    expect(inbox.inboundUrl).toBe(`https://svc.example.com/api/v1/hooks/email/${inbox.id}`);
    expect(inbox.config).toMatchObject({ fromName: 'Shop Support' });
    const [row] = await t.database.db.select().from(inboxes).where(eq(inboxes.id, inbox.id));
    expect(row!.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(inbox.secrets.token);
    const got = await t.call({ method: 'GET', url: `${base()}/inboxes/${inbox.id}`, auth: owner() });
    expect(got.json().secrets).toBeUndefined();
    // A change of name keeps the token working.
    const patched = await t.call({ method: 'PATCH', url: `${base()}/inboxes/${inbox.id}`, auth: owner(), payload: { config: { fromName: 'Shop' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().secrets).toBeUndefined();
    expect(patched.json().config).toMatchObject({ address: inbox.config.address, fromName: 'Shop' });
    expect((await post(inbox, mime({ from: `${unique('k')}@example.com`, messageId: `<${unique('k')}@example.com>` }), inbox.secrets.token)).statusCode).toBe(
      201,
    );

    for (const config of [
      {},
      { address: 'Shop <shop@example.com>' },
      { address: 'not an address' },
      { address: 'a@b.example.com', url: 'https://x.example.com' },
      { address: 'a@b.example.com', fromName: 'Evil\r\nBcc: x@y.example.com' },
    ]) {
      const res = await t.call({ method: 'POST', url: `${base()}/inboxes`, auth: owner(), payload: { name: 'bad', channel: 'email', config } });
      expect(res.statusCode, JSON.stringify(config)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('without SMTP_URL an email inbox is refused with 422 CHANNEL_NOT_AVAILABLE naming SMTP_URL', async () => {
    const other = await buildTestApp({ workers: false });
    try {
      const res = await other.call({
        method: 'POST',
        url: `/api/v1/orgs/${other.orgA.orgId}/inboxes`,
        auth: { token: other.orgA.token },
        payload: { name: 'mail', channel: 'email', config: { address: 'help@shop.example.com' } },
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('CHANNEL_NOT_AVAILABLE');
      expect(res.json().message).toContain('SMTP_URL');
      expect((await other.database.db.select().from(inboxes)).length).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe('inbound e-mail', () => {
  it("a message with the token opens a conversation with its subject, linked to the lead of the sender's address", async () => {
    const inbox = await emailInbox();
    const known = `${unique('known')}@example.com`;
    const lead = await t.call({ method: 'POST', url: `${base()}/leads`, auth: owner(), payload: { email: known, name: 'Known Person', source: 'import' } });
    expect(lead.statusCode).toBe(201);
    const res = await post(
      inbox,
      mime({
        from: `"Known Person" <${known.toUpperCase()}>`,
        subject: 'Question about pricing',
        messageId: `<${unique('q')}@mail.example.com>`,
        body: 'How much is the pro plan?',
      }),
      inbox.secrets.token,
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ duplicate: false });
    const thread = await conversation(res.json().conversationId);
    expect(thread).toMatchObject({
      channel: 'email',
      status: 'OPEN',
      subject: 'Question about pricing',
      leadId: lead.json().id,
      contact: { name: 'Known Person', address: known },
    });
    const received = (await eventsOf(t, t.orgA.orgId, 'message.received')).filter((e) => e.payload.message.id === res.json().id);
    expect(received).toHaveLength(1);
    expect(received[0]!.payload.message).toMatchObject({ text: 'How much is the pro plan?', direction: 'in', sender: 'contact' });

    // A sender no lead has yet becomes one, with source email.
    const stranger = `${unique('new')}@example.com`;
    const second = await post(
      inbox,
      mime({ from: `Nora New <${stranger}>`, subject: 'Hi', messageId: `<${unique('n')}@mail.example.com>` }),
      inbox.secrets.token,
    );
    const leadId = (await conversation(second.json().conversationId)).leadId as string;
    const created = await t.call({ method: 'GET', url: `${base()}/leads/${leadId}`, auth: owner() });
    expect(created.json()).toMatchObject({ email: stranger, name: 'Nora New', source: 'email' });
  });

  it("the same Message-ID posted again (a relay's retry) is stored once", async () => {
    const inbox = await emailInbox();
    const raw = mime({ from: `${unique('r')}@example.com`, subject: 'Retry me', messageId: `<${unique('retry')}@mail.example.com>` });
    const first = await post(inbox, raw, inbox.secrets.token);
    const again = await post(inbox, raw, inbox.secrets.token);
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...first.json(), duplicate: true });
    expect(await rowsOf(inbox.id)).toHaveLength(1);
    expect((await eventsOf(t, t.orgA.orgId, 'message.received')).filter((e) => e.payload.message.id === first.json().id)).toHaveLength(1);
  });

  it("a missing or wrong token, or another inbox's, gives 401 and stores nothing", async () => {
    const inbox = await emailInbox();
    const other = await emailInbox();
    const raw = mime({ from: `${unique('x')}@example.com`, messageId: `<${unique('x')}@mail.example.com>` });
    for (const token of [null, '', 'wrong', other.secrets.token, `${inbox.secrets.token}x`]) {
      const res = await post(inbox, raw, token);
      expect(res.statusCode, String(token)).toBe(401);
      expect(res.json().code).toBe('UNAUTHORIZED');
    }
    expect((await post({ id: 'inb_unknown' }, raw, inbox.secrets.token)).statusCode).toBe(401);
    expect(await rowsOf(inbox.id)).toHaveLength(0);
    // With the right token, a body that is not a raw message is refused, and so is one without a From.
    expect((await post(inbox, JSON.stringify({ text: 'hi' }), inbox.secrets.token, 'application/json')).statusCode).toBe(415);
    expect((await post(inbox, 'plain', inbox.secrets.token, 'text/plain')).statusCode).toBe(415);
    expect((await post(inbox, mime({ from: 'nobody' }), inbox.secrets.token)).statusCode).toBe(400);
    expect(await rowsOf(inbox.id)).toHaveLength(0);
  });

  it('refuses a message over 10 MB with 413', async () => {
    const inbox = await emailInbox();
    const res = await post(inbox, mime({ from: `${unique('big')}@example.com`, body: 'x'.repeat(10 * 1024 * 1024 + 10) }), inbox.secrets.token);
    expect(res.statusCode).toBe(413);
    expect(await rowsOf(inbox.id)).toHaveLength(0);
  });

  it('takes the text part of a multipart/alternative message, the text of an HTML-only one, and names attached files', async () => {
    const inbox = await emailInbox();
    const from = `${unique('html')}@example.com`;
    const alternative = mime({
      from,
      subject: 'Both',
      messageId: `<${unique('alt')}@mail.example.com>`,
      contentType: 'multipart/alternative; boundary="b1"',
      body: [
        '--b1',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'The plain words',
        '--b1',
        'Content-Type: text/html; charset=utf-8',
        '',
        '<p>The <b>HTML</b> words</p>',
        '--b1--',
        '',
      ].join('\r\n'),
    });
    const both = await post(inbox, alternative, inbox.secrets.token);
    expect(both.statusCode, both.body).toBe(201);
    const htmlOnly = await post(
      inbox,
      mime({
        from,
        subject: 'HTML',
        messageId: `<${unique('h')}@mail.example.com>`,
        contentType: 'text/html; charset=utf-8',
        body: '<html><body><p>Only <b>markup</b> here</p><script>alert(1)</script></body></html>',
      }),
      inbox.secrets.token,
    );
    const withFile = await post(
      inbox,
      mime({
        from,
        subject: 'Offer',
        messageId: `<${unique('f')}@mail.example.com>`,
        contentType: 'multipart/mixed; boundary="m1"',
        body: [
          '--m1',
          'Content-Type: text/plain; charset=utf-8',
          '',
          'See the offer.',
          '--m1',
          'Content-Type: application/pdf; name="offer.pdf"',
          'Content-Disposition: attachment; filename="offer.pdf"',
          'Content-Transfer-Encoding: base64',
          '',
          'JVBERi0xLjQK',
          '--m1--',
          '',
        ].join('\r\n'),
      }),
      inbox.secrets.token,
    );
    const rows = await rowsOf(inbox.id);
    expect(rows.find((r) => r.id === both.json().id)!.text).toBe('The plain words');
    expect(rows.find((r) => r.id === withFile.json().id)!.text).toBe('See the offer.\n\n[attachments: offer.pdf]');
    const text = rows.find((r) => r.id === htmlOnly.json().id)!.text;
    expect(text).toContain('Only markup here');
    expect(text).not.toContain('<');
  });

  it('stores out-of-office answers with autoReply: Auto-Submitted, X-Autoreply, Precedence, an out-of-office subject', async () => {
    const inbox = await emailInbox();
    const from = `${unique('ooo')}@example.com`;
    const cases: [Record<string, string>, string, boolean][] = [
      [{ 'Auto-Submitted': 'auto-replied' }, 'Away', true],
      [{ 'Auto-Submitted': 'no' }, 'A person wrote this', false],
      [{ 'X-Autoreply': 'yes' }, 'Away', true],
      [{ Precedence: 'bulk' }, 'News', true],
      [{}, 'Automatic reply: Question about pricing', true],
      [{}, 'Out of Office: back Monday', true],
      [{}, 'Question about the office', false],
    ];
    for (const [headers, subject, auto] of cases) {
      const res = await post(inbox, mime({ from, subject, headers, messageId: `<${unique('a')}@mail.example.com>` }), inbox.secrets.token);
      expect(res.statusCode, res.body).toBe(201);
      const [row] = await t.database.db.select().from(messages).where(eq(messages.id, res.json().id));
      expect(row!.autoReply, `${JSON.stringify(headers)} ${subject}`).toBe(auto);
    }
  });
});

describe('replies by e-mail', () => {
  it("a human reply is mailed in the thread (Message-ID, In-Reply-To, References, Re: subject) and is sent with its Message-ID; the contact's answer joins the conversation", async () => {
    const inbox = await emailInbox();
    const contact = `${unique('ann')}@example.com`;
    const firstId = `<${unique('first')}@mail.example.com>`;
    const opened = await post(
      inbox,
      mime({ from: `Ann <${contact}>`, subject: 'Question about pricing', messageId: firstId, body: 'How much?' }),
      inbox.secrets.token,
    );
    const conversationId = opened.json().conversationId as string;

    const reply = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversationId}/messages`,
      auth: owner(),
      payload: { text: 'It is 10 a month.' },
    });
    expect(reply.statusCode, reply.body).toBe(201);
    const mail = await mailTo(contact);
    const domain = String(inbox.config.address).split('@')[1];
    expect(mail.messageId).toBe(`<${reply.json().id}@${domain}>`);
    expect(mail.inReplyTo).toBe(firstId);
    expect(mail.references).toEqual([firstId]);
    expect(mail.subject).toBe('Re: Question about pricing');
    expect(mail.from).toBe(`"Shop Support" <${inbox.config.address}>`);
    expect(mail.text.trim()).toBe('It is 10 a month.');
    const sent = await eventually(async () => {
      const [row] = await t.database.db.select().from(messages).where(eq(messages.id, reply.json().id));
      return row!.status === 'sent' ? row : undefined;
    });
    expect(sent.externalId).toBe(mail.messageId);
    expect((await eventsOf(t, t.orgA.orgId, 'message.sent')).filter((e) => e.payload.message.id === reply.json().id)).toHaveLength(1);

    // The contact answers our mail from a mail reader: quoted text below the attribution goes.
    const answer = await post(
      inbox,
      mime({
        from: `Ann <${contact}>`,
        subject: 'Re: Question about pricing',
        messageId: `<${unique('answer')}@mail.example.com>`,
        inReplyTo: mail.messageId,
        references: `${firstId} ${mail.messageId}`,
        body: 'Great, I will take it.\n\nOn Mon, 23 Nov 2026 at 10:05, Shop Support <support@shop.example.com> wrote:\n> It is 10 a month.\n',
      }),
      inbox.secrets.token,
    );
    expect(answer.json().conversationId).toBe(conversationId);
    const [row] = await t.database.db.select().from(messages).where(eq(messages.id, answer.json().id));
    expect(row!.text).toBe('Great, I will take it.');

    // Our next reply names the whole thread, the contact's answer last.
    const second = await t.call({ method: 'POST', url: `${base()}/conversations/${conversationId}/messages`, auth: owner(), payload: { text: 'Done.' } });
    const next = await mailTo(contact, 2);
    expect(next.messageId).toBe(`<${second.json().id}@${domain}>`);
    expect(next.references).toEqual([firstId, mail.messageId, row!.externalId]);
    expect(next.inReplyTo).toBe(row!.externalId);
    expect(next.subject).toBe('Re: Question about pricing');
  });

  it("an answer to a closed conversation's mail reopens it; a new message without references after the close opens a new one", async () => {
    const inbox = await emailInbox();
    const contact = `${unique('bob')}@example.com`;
    const firstId = `<${unique('c1')}@mail.example.com>`;
    const opened = await post(inbox, mime({ from: contact, subject: 'Order 17', messageId: firstId }), inbox.secrets.token);
    const conversationId = opened.json().conversationId as string;
    expect((await t.call({ method: 'POST', url: `${base()}/conversations/${conversationId}/close`, auth: owner() })).statusCode).toBe(200);

    const late = await post(
      inbox,
      mime({ from: contact, subject: 'Re: Order 17', messageId: `<${unique('c2')}@mail.example.com>`, inReplyTo: firstId, references: firstId }),
      inbox.secrets.token,
    );
    expect(late.json().conversationId).toBe(conversationId);
    expect(await conversation(conversationId)).toMatchObject({ status: 'OPEN', subject: 'Order 17' });
    expect((await eventsOf(t, t.orgA.orgId, 'conversation.opened')).filter((e) => e.payload.conversation.inboxId === inbox.id)).toHaveLength(1);

    await t.call({ method: 'POST', url: `${base()}/conversations/${conversationId}/close`, auth: owner() });
    const fresh = await post(inbox, mime({ from: contact, subject: 'Something else', messageId: `<${unique('c3')}@mail.example.com>` }), inbox.secrets.token);
    expect(fresh.json().conversationId).not.toBe(conversationId);
    expect(await conversation(fresh.json().conversationId)).toMatchObject({ status: 'OPEN', subject: 'Something else' });
  });

  it("an outbound start mails the subject without In-Reply-To; a relay's 5xx fails the message with its answer", async () => {
    const inbox = await emailInbox();
    const email = `${unique('lead')}@example.com`;
    const lead = await t.call({ method: 'POST', url: `${base()}/leads`, auth: owner(), payload: { email, name: 'Lena' } });
    const started = await t.call({
      method: 'POST',
      url: `${base()}/conversations`,
      auth: owner(),
      payload: { inboxId: inbox.id, leadId: lead.json().id, text: 'Welcome aboard', subject: 'Welcome' },
    });
    expect(started.statusCode, started.body).toBe(201);
    const mail = await mailTo(email);
    expect(mail.subject).toBe('Welcome');
    expect(mail.inReplyTo).toBeUndefined();
    expect(mail.references).toEqual([]);

    const gone = `nobody-${unique('g')}@example.com`;
    const goneLead = await t.call({ method: 'POST', url: `${base()}/leads`, auth: owner(), payload: { email: gone } });
    const failing = await t.call({
      method: 'POST',
      url: `${base()}/conversations`,
      auth: owner(),
      payload: { inboxId: inbox.id, leadId: goneLead.json().id, text: 'Hello?' },
    });
    expect(failing.statusCode, failing.body).toBe(201);
    const failed = await eventually(async () => {
      const [row] = await t.database.db.select().from(messages).where(eq(messages.conversationId, failing.json().id));
      return row?.status === 'failed' ? row : undefined;
    });
    expect(failed.error).toContain('550');
    expect(failed.error).toContain('No such user here');
    expect(failed.attempts).toBe(1);
  });

  it("a relay's 4xx is worth another try (retry), a 5xx is final", async () => {
    let answer = 451;
    const relay = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS', 'AUTH'],
      authOptional: true,
      onRcptTo: (_address, _session, callback) =>
        callback(Object.assign(new Error(`${answer === 451 ? '4.7.1 Try again later' : '5.7.1 Refused'}`), { responseCode: answer })),
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const channel = new EmailChannel({
        allowPrivate: true,
        timeoutMs: 5000,
        whatsappApiBaseUrl: '',
        telegramApiBaseUrl: '',
        publicUrl: '',
        smtpUrl: `smtp://127.0.0.1:${(relay.server.address() as AddressInfo).port}`,
      });
      const out = {
        orgId: 'org_x',
        projectId: 'prj_x',
        inbox: { id: 'inb_x', name: 'Support', config: { address: 'help@shop.example.com' }, signingSecret: null, credentials: null },
        message: { id: 'msg_x', text: 'Hello', at: new Date() },
        conversation: { id: 'conv_x', subject: null, contact: { id: 'ctc_x', name: null, address: 'someone@example.com' } },
      };
      const soft = await channel.send(out);
      expect(soft).toMatchObject({ ok: false, retry: true });
      answer = 554;
      const hard = await channel.send(out);
      expect(hard).toMatchObject({ ok: false, retry: false });
      expect(hard.ok === false && hard.error).toContain('Refused');
    } finally {
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  });
});

describe('organizations apart', () => {
  it('another organization neither sees an email conversation nor joins it by naming its Message-IDs', async () => {
    const inboxA = await emailInbox(t.orgA);
    const inboxB = await emailInbox(t.orgB);
    const contact = `${unique('both')}@example.com`;
    const idA = `<${unique('a')}@mail.example.com>`;
    const a = await post(inboxA, mime({ from: contact, subject: 'To A', messageId: idA }), inboxA.secrets.token);
    // B's token does not open A's inbox.
    expect((await post(inboxA, mime({ from: contact, messageId: `<${unique('z')}@mail.example.com>` }), inboxB.secrets.token)).statusCode).toBe(401);
    const b = await post(
      inboxB,
      mime({ from: contact, subject: 'To B', messageId: `<${unique('b')}@mail.example.com>`, inReplyTo: idA, references: idA }),
      inboxB.secrets.token,
    );
    expect(b.statusCode).toBe(201);
    expect(b.json().conversationId).not.toBe(a.json().conversationId);
    const [convB] = await t.database.db.select().from(conversations).where(eq(conversations.id, b.json().conversationId));
    expect(convB).toMatchObject({ orgId: t.orgB.orgId, subject: 'To B' });
    const viewB = await conversation(b.json().conversationId, t.orgB);
    const viewA = await conversation(a.json().conversationId, t.orgA);
    expect(viewB.leadId).not.toBe(viewA.leadId);
    expect((await t.call({ method: 'GET', url: `${base(t.orgB)}/conversations/${a.json().conversationId}`, auth: owner(t.orgB) })).statusCode).toBe(404);
    expect(
      (await t.call({ method: 'POST', url: `${base(t.orgB)}/conversations/${a.json().conversationId}/messages`, auth: owner(t.orgB), payload: { text: 'hi' } }))
        .statusCode,
    ).toBe(404);
    expect((await t.call({ method: 'GET', url: `${base(t.orgB)}/inboxes/${inboxA.id}`, auth: owner(t.orgB) })).statusCode).toBe(404);
  });
});

describe('quoted text', () => {
  it('cuts the quoted earlier message below an attribution line, and keeps a message that is all quote', () => {
    expect(stripQuoted('Yes please.\n\nOn Mon, 23 Nov 2026 at 10:05, Shop <s@x.example.com>\nwrote:\n> Want it?')).toBe('Yes please.');
    expect(stripQuoted('Ja.\n\nAm 23.11.2026 um 10:05 schrieb Shop <s@x.example.com>:\n> Willst du?')).toBe('Ja.');
    expect(stripQuoted('Sure\n\n-----Original Message-----\nFrom: Shop\nSent: Monday')).toBe('Sure');
    expect(stripQuoted('Fine\n> quoted\n> more')).toBe('Fine');
    expect(stripQuoted('> only a quote')).toBe('> only a quote');
    expect(stripQuoted('On second thought, no.')).toBe('On second thought, no.');
  });
});
