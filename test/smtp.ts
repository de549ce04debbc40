import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One message as the relay received it, parsed by a real MIME parser. */
export interface ReceivedMail {
  /** The SMTP envelope. */
  mailFrom: string;
  rcptTo: string[];
  /** The user the client authenticated as, if it did. */
  user: string | undefined;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  raw: string;
}

export interface SmtpStandInOptions {
  /** Require AUTH with these credentials (over the plain connection, as a local relay may allow). */
  auth?: { user: string; pass: string };
  /** A reason to refuse a recipient with 550, or null to accept it. */
  rejectRecipient?: (address: string) => string | null;
  /** Awaited before a message is accepted (after its data arrived): the test does what must happen while the sender waits for the 250. */
  beforeAccept?: () => Promise<void>;
}

/**
 * A real SMTP server on loopback (`smtp-server`) standing in for the operator's relay: it speaks the
 * protocol, checks credentials and records every message it accepts. No STARTTLS, so `smtp://`
 * clients talk plain text to it.
 */
export class SmtpStandIn {
  readonly received: ReceivedMail[] = [];
  private server: SMTPServer | null = null;
  private waiters: { count: number; resolve: () => void }[] = [];
  private readonly options: SmtpStandInOptions;

  constructor(options: SmtpStandInOptions = {}) {
    this.options = options;
  }

  async start(): Promise<this> {
    const { auth, rejectRecipient, beforeAccept } = this.options;
    this.server = new SMTPServer({
      logger: false,
      disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
      authOptional: !auth,
      allowInsecureAuth: true,
      size: 1024 * 1024,
      onAuth: (login, _session, callback) => {
        if (auth && login.username === auth.user && login.password === auth.pass) return callback(null, { user: login.username });
        callback(new Error('Invalid username or password'));
      },
      onRcptTo: (address, _session, callback) => {
        const reason = rejectRecipient?.(address.address);
        if (!reason) return callback();
        callback(Object.assign(new Error(reason), { responseCode: 550 }));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          void simpleParser(raw).then(
            async (parsed) => {
              await beforeAccept?.();
              this.received.push({
                mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                rcptTo: session.envelope.rcptTo.map((r) => r.address),
                user: session.user as string | undefined,
                from: parsed.from?.text ?? '',
                to: [parsed.to ?? []]
                  .flat()
                  .map((a) => a.text)
                  .join(', '),
                subject: parsed.subject ?? '',
                text: parsed.text ?? '',
                html: typeof parsed.html === 'string' ? parsed.html : '',
                raw,
              });
              this.waiters = this.waiters.filter((w) => (this.received.length >= w.count ? (w.resolve(), false) : true));
              callback();
            },
            (error: Error) => callback(error),
          );
        });
      },
    });
    // A client that drops its connection (a sender killed mid-message) is a connection's error,
    // not the relay's: a real relay logs it and goes on serving the others.
    this.server.on('error', () => undefined);
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server!.server.address() as AddressInfo).port;
  }

  /** The SMTP_URL of this relay. */
  get url(): string {
    const auth = this.options.auth;
    const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';
    return `smtp://${credentials}127.0.0.1:${this.port}`;
  }

  /** Resolves once `count` messages in all have been received; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 5000): Promise<ReceivedMail[]> {
    if (this.received.length < count) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`expected ${count} messages, got ${this.received.length} in ${timeoutMs} ms`)), timeoutMs);
        this.waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    }
    return this.received.slice(0, count);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The first link in a message's text that starts with `prefix`. */
export function linkIn(mail: ReceivedMail, prefix: string): string {
  const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}\\S+`).exec(mail.text);
  if (!match) throw new Error(`no link starting with ${prefix} in:\n${mail.text}`);
  return match[0];
}
