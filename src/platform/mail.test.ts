import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmtpStandIn } from '../../test/smtp.ts';
import { escapeHtml, Mailer, MailError, recipientProblem } from './mail.ts';

const log = pino({ level: 'silent' });

describe('the mailer, against a real SMTP relay on loopback', () => {
  let relay: SmtpStandIn;
  beforeAll(async () => {
    relay = await new SmtpStandIn({
      auth: { user: 'mailer@example.com', pass: 'p@ss word' },
      rejectRecipient: (to) => (to.startsWith('bounce@') ? 'No such mailbox' : null),
    }).start();
  });
  afterAll(() => relay.close());

  it('logs in with the credentials of SMTP_URL and delivers from SMTP_FROM, text and HTML', async () => {
    const mailer = new Mailer({ url: relay.url, from: 'Service <no-reply@example.com>', log });
    try {
      const { messageId } = await mailer.send({
        to: 'ada@example.com',
        subject: 'Hello Ådå',
        text: 'Plain line\nwith a https://example.com/x?token=abc link',
        html: '<p>Hi</p>',
      });
      expect(messageId).toMatch(/^<.+>$/);
      const [mail] = await relay.waitFor(1);
      expect(mail).toMatchObject({ user: 'mailer@example.com', mailFrom: 'no-reply@example.com', rcptTo: ['ada@example.com'], subject: 'Hello Ådå' });
      expect(mail!.from).toBe('"Service" <no-reply@example.com>');
      expect(mail!.text.trim()).toBe('Plain line\nwith a https://example.com/x?token=abc link');
      expect(mail!.html).toContain('<p>Hi</p>');
    } finally {
      await mailer.close();
    }
  });

  it('wrong relay credentials, or a recipient the relay refuses, fail the send', async () => {
    const wrong = new Mailer({ url: relay.url.replace('p%40ss%20word', 'nope'), from: 'no-reply@example.com', log });
    await expect(wrong.send({ to: 'ada@example.com', subject: 's', text: 't' })).rejects.toMatchObject({
      code: 'FAILED',
      message: expect.stringMatching(/Invalid username or password/),
    });
    await wrong.close();
    const mailer = new Mailer({ url: relay.url, from: 'no-reply@example.com', log });
    await expect(mailer.send({ to: 'bounce@example.com', subject: 's', text: 't' })).rejects.toMatchObject({
      code: 'FAILED',
      message: expect.stringMatching(/No such mailbox/),
    });
    await mailer.close();
  });

  it('sends only to one plain address at a domain name', async () => {
    for (const to of [
      'a@example.com, b@example.com',
      'Ada <a@example.com>',
      'a@[127.0.0.1]',
      'a@localhost',
      'a@example.com\r\nBcc: b@example.com',
      'no-at-sign',
      `${'x'.repeat(250)}@example.com`,
    ]) {
      expect(recipientProblem(to), to).not.toBeNull();
    }
    for (const to of ['first.last+tag@mail.example.co', "o'brien@example.org", 'x_y-z@sub-domain.example.museum']) expect(recipientProblem(to), to).toBeNull();
    const mailer = new Mailer({ url: relay.url, from: 'no-reply@example.com', log });
    const before = relay.received.length;
    await expect(mailer.send({ to: 'a@example.com, b@example.com', subject: 's', text: 't' })).rejects.toMatchObject({ code: 'INVALID_RECIPIENT' });
    await mailer.close();
    expect(relay.received.length).toBe(before);
  });

  it('without SMTP_URL it is off and refuses to send', async () => {
    const mailer = new Mailer({ url: undefined, from: 'no-reply@example.com', log });
    expect(mailer.enabled).toBe(false);
    await expect(mailer.send({ to: 'a@example.com', subject: 's', text: 't' })).rejects.toBeInstanceOf(MailError);
    await mailer.close();
  });

  it('background sends are waited for by close()', async () => {
    const mailer = new Mailer({ url: relay.url, from: 'no-reply@example.com', log });
    const before = relay.received.length;
    mailer.sendInBackground({ to: 'later@example.com', subject: 'later', text: 't' }, 'test');
    await mailer.close();
    expect(relay.received.length).toBe(before + 1);
    expect(relay.received.at(-1)!.rcptTo).toEqual(['later@example.com']);
  });

  it('escapes text for HTML bodies', () => {
    expect(escapeHtml('<b>"Tom" & \'Jerry\'</b>')).toBe('&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;');
  });
});

describe('the mailer deadline', () => {
  let silent: Server;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // Accepts the connection and never says a word: a relay that hangs.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('gives up after the total deadline when the relay never answers', async () => {
    const mailer = new Mailer({ url: `smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`, from: 'no-reply@example.com', log, timeoutMs: 300 });
    const started = performance.now();
    await expect(mailer.send({ to: 'a@example.com', subject: 's', text: 't' })).rejects.toMatchObject({ code: 'TIMEOUT' });
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(2000);
    await mailer.close();
  });
});
