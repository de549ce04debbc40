import type { FastifyBaseLogger } from 'fastify';
import nodemailer, { type Transporter } from 'nodemailer';

/**
 * Outgoing e-mail through the operator's relay (`SMTP_URL`): invitations and password resets now,
 * other modules' mail later. The relay is configuration, trusted like the database; what a user
 * chooses is only the recipient, so that is what is checked: one plain address at a domain name
 * (no display name, no list, no IP literal a relay might deliver to directly). Every send has one
 * total deadline, as every outbound HTTP call does (platform/http-client.ts).
 */

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Instead of the mailer's From: a name and address (encoded by nodemailer, never raw header text). */
  from?: { name?: string; address: string };
  /** Threading (RFC 5322), each `<id@domain>`: this message's Message-ID, the one it answers, the thread's ids. */
  messageId?: string;
  inReplyTo?: string;
  references?: string[];
  /** A one-click unsubscribe URL: `List-Unsubscribe: <url>` and `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058). */
  listUnsubscribe?: string;
}

export class MailError extends Error {
  readonly code: 'NOT_CONFIGURED' | 'INVALID_RECIPIENT' | 'TIMEOUT' | 'FAILED';
  /** The relay's reply code when it refused (a 4xx is worth trying again, a 5xx is not); none for network errors. */
  readonly responseCode: number | undefined;
  constructor(code: MailError['code'], message: string, responseCode?: number) {
    super(message);
    this.code = code;
    this.responseCode = responseCode;
  }
}

// One address, its local part without quotes, spaces or separators, its domain dotted names.
const ADDRESS = /^[^\s@<>()[\]\\,;:"]{1,64}@(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

/** Why `to` is not an address the service sends to, or null. */
export function recipientProblem(to: string): string | null {
  if (to.length > 254) return 'the address is longer than 254 characters';
  if (!ADDRESS.test(to)) return 'not a single plain e-mail address at a domain name';
  return null;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text for an HTML body: a name a user chose must not become markup in someone's mail reader. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

export interface MailerOptions {
  /** `smtp://…` or `smtps://…`; unset: mail is off (`enabled` false, `send` refuses). */
  url: string | undefined;
  from: string;
  log: FastifyBaseLogger;
  /** Total deadline of one send: connect, TLS, greeting, the whole dialogue. */
  timeoutMs?: number;
  /**
   * Keep up to this many connections to the relay open and send over them (a pool), instead of one
   * connection per message: for a sender of many messages (outreach), where the SMTP greeting and
   * the AUTH dialogue would otherwise cost more than the message.
   */
  pool?: number;
}

export class Mailer {
  private readonly transport: Transporter | null;
  private readonly from: string;
  private readonly log: FastifyBaseLogger;
  private readonly timeoutMs: number;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(options: MailerOptions) {
    this.from = options.from;
    this.log = options.log;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    const stepMs = this.timeoutMs;
    this.transport = options.url
      ? nodemailer.createTransport({
          url: options.url,
          // Each phase bounded by the total, so an abandoned dialogue does not linger long after it.
          connectionTimeout: stepMs,
          greetingTimeout: stepMs,
          socketTimeout: stepMs,
          dnsTimeout: stepMs,
          // Messages are built from text the service wrote: never read a file or a URL into one.
          disableFileAccess: true,
          disableUrlAccess: true,
          ...(options.pool ? { pool: true, maxConnections: options.pool, maxMessages: 1000 } : {}),
        } as Parameters<typeof nodemailer.createTransport>[0])
      : null;
  }

  /** Whether SMTP_URL is set. */
  get enabled(): boolean {
    return this.transport !== null;
  }

  /** Sends one message; resolves with the relay's message id once the relay accepted it. */
  async send(message: MailMessage): Promise<{ messageId: string }> {
    if (!this.transport) throw new MailError('NOT_CONFIGURED', 'No mail relay is configured (SMTP_URL)');
    const problem = recipientProblem(message.to);
    if (problem) throw new MailError('INVALID_RECIPIENT', `Cannot send to "${message.to.slice(0, 80)}": ${problem}`);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new MailError('TIMEOUT', `The mail relay did not accept the message within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    const sending = this.transport.sendMail({
      from: message.from ?? this.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      ...(message.messageId ? { messageId: message.messageId } : {}),
      ...(message.inReplyTo ? { inReplyTo: message.inReplyTo } : {}),
      ...(message.references?.length ? { references: message.references } : {}),
      ...(message.listUnsubscribe
        ? { list: { unsubscribe: message.listUnsubscribe }, headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } }
        : {}),
    });
    // The abandoned send settles on its own time-outs; nobody waits for it then.
    sending.catch(() => {});
    try {
      const info = await Promise.race([sending, deadline]);
      return { messageId: String(info.messageId ?? '') };
    } catch (error) {
      if (error instanceof MailError) throw error;
      // The transport's own phase timers run on the same budget and may fire first: still a time-out.
      if ((error as { code?: unknown }).code === 'ETIMEDOUT') {
        throw new MailError('TIMEOUT', `The mail relay did not accept the message within ${this.timeoutMs} ms (${(error as Error).message})`);
      }
      const responseCode = (error as { responseCode?: unknown }).responseCode;
      throw new MailError('FAILED', (error as Error).message || 'sending failed', typeof responseCode === 'number' ? responseCode : undefined);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Sends without the caller waiting (a request whose answer must not depend on the mail, such as
   * a password reset that must not tell whether the account exists). A failure is logged, never
   * thrown; `close()` waits for the sends still under way.
   */
  sendInBackground(message: MailMessage, what: string): void {
    const work = this.send(message).then(
      ({ messageId }) => this.log.info({ mail: what, messageId }, 'mail sent'),
      (error: MailError) => this.log.warn({ mail: what, code: error.code, err: error }, 'mail not sent'),
    );
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /** Waits for background sends (each bounded by the deadline), then closes the transport. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    this.transport?.close();
  }
}
