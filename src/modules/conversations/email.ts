import { createHash } from 'node:crypto';
import { simpleParser, type HeaderValue, type ParsedMail } from 'mailparser';
import pino from 'pino';
import { randomToken } from '../../platform/crypto.ts';
import { AppError, badRequest, unauthorized, unprocessable } from '../../platform/errors.ts';
import { Type, errors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { inboundRoute } from '../../platform/inbound.ts';
import { MailError, Mailer, recipientProblem } from '../../platform/mail.ts';
import { assertKnownKeys, type ChannelAdapter, type ChannelEnv, type Outcome, type Outgoing, type Prepared, type InboundInput } from './channel-types.ts';
import type { InboundRoutesService } from './hook-ports.ts';
import type { inboxes } from './tables.ts';

type InboxRow = typeof inboxes.$inferSelect;

/**
 * `email`: config `{ address, fromName? }`. Outbound mail goes through the operator's relay
 * (`SMTP_URL`) from `"fromName" <address>`, each message with our own Message-ID
 * (`<message id@address's domain>`, its `externalId`) and `In-Reply-To`/`References` naming the
 * thread's earlier messages, so that replies stay one thread in the contact's mail reader. Inbound
 * mail is posted as raw MIME (`message/rfc822`) by a mail relay to
 * `/api/v1/hooks/email/:inboxId?token=…`; a reply naming a message of the inbox in its
 * `In-Reply-To`/`References` joins that message's conversation (inbound.ts).
 */

/** Largest raw message the inbound route takes. */
export const EMAIL_BODY_BYTES = 10 * 1024 * 1024;
/** The most text stored of one inbound message (after the quoted earlier message is cut). */
const TEXT_LIMIT = 20_000;
const SUBJECT_LIMIT = 300;
const NAME_LIMIT = 200;
/** Message-IDs read from one message's In-Reply-To and References (the newest are at the end). */
const THREAD_IDS = 50;
/** The domain of the id a received message without a Message-ID is known by (never sent as a reference). */
const NO_ID_DOMAIN = 'no-message-id.invalid';
/** One Message-ID, angle brackets included. */
const MESSAGE_ID = /<[^<>\s]{1,250}>/g;
const SENDER = /^[^\s@<>]{1,64}@[^\s@<>]{1,253}$/;
// Control characters (line breaks included) must never reach a header, whatever nodemailer does with them.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Common subjects of automatic answers (Outlook, Gmail, Exchange in several languages). */
const AUTO_SUBJECT =
  /^\s*(auto(matic)?[ -]?(reply|response)|autoreply|out of (the )?office|abwesenheitsnotiz|automatische antwort|r[ée]ponse automatique|respuesta autom[aá]tica|risposta automatica|automatisch antwoord|autosvar)\b/i;
/** `Re:` and its usual translations, as a reply's subject starts. */
const REPLY_PREFIX = /^\s*(re|aw|sv|antw|r)\s*:/i;

/** The text of a header whatever shape mailparser gave it (a string, a list, a structured value). */
function headerText(value: HeaderValue | undefined): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((v) => headerText(v as HeaderValue)).join(' ');
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object' && 'value' in value && typeof value.value === 'string') return value.value;
  if (typeof value === 'object' && 'text' in value && typeof value.text === 'string') return value.text;
  return '';
}

/** Whether a message is an automatic answer: `Auto-Submitted` other than `no`, `X-Autoreply`, `X-Autorespond`, `Precedence: auto_reply|bulk|junk`, an out-of-office subject. */
export function isAutoReply(headers: Map<string, HeaderValue>, subject: string): boolean {
  const value = (name: string) => headerText(headers.get(name)).split(';')[0]!.trim().toLowerCase();
  const submitted = value('auto-submitted');
  if (submitted && submitted !== 'no') return true;
  for (const name of ['x-autoreply', 'x-autorespond']) {
    if (headers.has(name) && !['no', 'false', '0'].includes(value(name))) return true;
  }
  if (['auto_reply', 'bulk', 'junk'].includes(value('precedence'))) return true;
  return AUTO_SUBJECT.test(subject);
}

/**
 * Where a reply's quoted earlier message starts: an attribution line ("On … wrote:", also wrapped
 * over two lines, and its German and French forms), Outlook's "Original Message" rule or its
 * `From:`/`Sent:` header block. Each is matched against one line (or two joined), anchored and
 * bounded, so a hostile message costs linear time.
 */
const ATTRIBUTION = [
  /^[\s>]*On\s.{1,600}\swrote:\s*$/,
  /^[\s>]*Am\s.{1,600}\sschrieb.{0,200}:\s*$/,
  /^[\s>]*Le\s.{1,600}\sa écrit\s?:\s*$/,
  /^\s*-{2,}\s*Original Message\s*-{2,}\s*$/i,
];
const OUTLOOK_FROM = /^\s*From:\s/;
const OUTLOOK_SENT = /^\s*(Sent|Date):\s/;

function quoteStart(lines: string[]): number {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const next = lines[i + 1];
    if (line.length > 1000) continue;
    if (ATTRIBUTION.some((re) => re.test(line))) return i;
    if (next !== undefined && next.length <= 1000 && /^[\s>]*(On|Am|Le)\s/.test(line) && ATTRIBUTION.some((re) => re.test(`${line} ${next.trim()}`))) return i;
    if (next !== undefined && OUTLOOK_FROM.test(line) && OUTLOOK_SENT.test(next)) return i;
  }
  return -1;
}

/**
 * The new part of a reply: the text above the quoted earlier message, when there is any (a reply
 * written below the quote, or a message that is all quote, stays whole); trailing `>` lines go too.
 */
export function stripQuoted(text: string): string {
  const all = text.split('\n');
  const at = quoteStart(all);
  const lines = at > 0 && all.slice(0, at).some((l) => l.trim()) ? all.slice(0, at) : all;
  let end = lines.length;
  while (end > 0 && !lines[end - 1]!.trim()) end--;
  let quoted = end;
  while (quoted > 0 && /^\s*>/.test(lines[quoted - 1]!)) quoted--;
  // A quote with nothing above it is the message.
  if (quoted > 0 && lines.slice(0, quoted).some((l) => l.trim())) end = quoted;
  return lines.slice(0, end).join('\n').trim();
}

/** Text as PostgreSQL stores it and people read it: no NUL, no lone surrogate, bounded. */
function clean(text: string, limit: number): string {
  const out = text.replaceAll('\u0000', '').toWellFormed();
  return out.length > limit ? `${out.slice(0, limit - 1)}…` : out;
}

/** A one-line value (a subject, a name): whitespace runs folded. */
function oneLine(text: string | undefined, limit: number): string | undefined {
  if (!text) return undefined;
  const out = clean(text.replace(/\s+/g, ' ').trim(), limit);
  return out || undefined;
}

/** The Message-IDs a message names as its ancestors, oldest first (In-Reply-To last: the one it answers). */
function threadIdsOf(mail: ParsedMail): string[] {
  const ids = [...[mail.references ?? []].flat(), mail.inReplyTo ?? ''].flatMap((v) => v.match(MESSAGE_ID) ?? []);
  const unique = [...new Set(ids.reverse())].reverse();
  return unique.slice(-THREAD_IDS);
}

/** One raw message as the inbound side stores it; throws 400 for a message with no usable From. */
export async function parseInboundMail(raw: Buffer): Promise<InboundInput> {
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, {
      skipImageLinks: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      keepCidLinks: true,
      checksumAlgo: false,
      maxHtmlLengthToParse: 2 * 1024 * 1024,
    });
  } catch (error) {
    throw badRequest(`The body is not a MIME message: ${(error as Error).message.slice(0, 200)}`, [
      { field: 'body', message: 'must be a raw e-mail message (message/rfc822)' },
    ]);
  }
  const from = mail.from?.value.find((a) => a.address);
  const address = from?.address?.trim().toLowerCase() ?? '';
  if (!SENDER.test(address) || address.length > 254) {
    throw badRequest('The message has no From address to answer', [{ field: 'body.from', message: 'must hold one e-mail address' }]);
  }
  const subject = oneLine(mail.subject, SUBJECT_LIMIT);
  // Files the sender attached (not the images an HTML body embeds), named in the text.
  const attached = mail.attachments.filter((a) => !a.related);
  const names = attached.map((a) => oneLine(a.filename, 100) ?? a.contentType).slice(0, 20);
  // Bounded before it is searched: the stored text is at most TEXT_LIMIT anyway.
  let text = clean(stripQuoted((mail.text ?? '').slice(0, 10 * TEXT_LIMIT).replace(/\r\n?/g, '\n')), TEXT_LIMIT);
  if (names.length) text = `${text}${text ? '\n\n' : ''}[attachments: ${names.join(', ')}${attached.length > names.length ? ', …' : ''}]`;
  const messageId = (mail.messageId?.match(MESSAGE_ID) ?? [])[0];
  const input: InboundInput = {
    contact: { address, ...(oneLine(from?.name, NAME_LIMIT) ? { name: oneLine(from?.name, NAME_LIMIT)! } : {}) },
    text: text || '(no text)',
    // A message without a Message-ID (rare: every relay adds one) is known again by its bytes.
    externalId: messageId ?? `<sha256.${createHash('sha256').update(raw).digest('hex')}@${NO_ID_DOMAIN}>`,
    autoReply: isAutoReply(mail.headers, mail.subject ?? ''),
    threadIds: threadIdsOf(mail),
  };
  if (subject) input.subject = subject;
  return input;
}

/** The subject of an outbound message: the thread's, as `Re: …` once the thread has earlier mail. */
export function subjectFor(subject: string | null, fallback: string, reply: boolean): string {
  const base = subject?.trim();
  if (!base) return fallback;
  return reply && !REPLY_PREFIX.test(base) ? `Re: ${base}` : base;
}

export class EmailChannel implements ChannelAdapter {
  readonly channel = 'email' as const;
  private readonly env: ChannelEnv;
  private mailerInstance: Mailer | null = null;

  constructor(env: ChannelEnv) {
    this.env = env;
  }

  /** One transport for every e-mail inbox (the From is per message); made on the first send. */
  private get mailer(): Mailer {
    this.mailerInstance ??= new Mailer({
      url: this.env.smtpUrl,
      from: 'conversations@localhost',
      log: pino({ enabled: false }),
      timeoutMs: Math.max(this.env.timeoutMs, 15_000),
      // The outbound loop sends a batch at once (a campaign's step): a few connections, reused.
      pool: 5,
    });
    return this.mailerInstance;
  }

  async close(): Promise<void> {
    await this.mailerInstance?.close();
    this.mailerInstance = null;
  }

  async prepare(config: Record<string, unknown>, previous: Record<string, unknown> | null): Promise<Prepared> {
    if (!this.env.smtpUrl) {
      throw unprocessable(
        'CHANNEL_NOT_AVAILABLE',
        "the email channel needs SMTP_URL: set it to the mail relay that sends the inboxes' mail (smtp://user:password@host:587)",
      );
    }
    assertKnownKeys('email', 'config', config, ['address', 'fromName', 'faq']);
    const address = config.address ?? previous?.address;
    if (typeof address !== 'string' || address.trim() === '')
      throw badRequest('An email inbox needs config.address, the address it sends from and receives at', [
        { field: 'body.config.address', message: 'is required for the email channel' },
      ]);
    const problem = recipientProblem(address.trim());
    if (problem)
      throw badRequest(`config.address: ${problem}`, [{ field: 'body.config.address', message: 'must be one plain e-mail address (no display name)' }]);
    const next: Record<string, unknown> = { ...(previous ?? {}), ...config, address: address.trim().toLowerCase() };
    if (config.fromName !== undefined) {
      const name = typeof config.fromName === 'string' ? config.fromName.trim() : '';
      if (CONTROL.test(name))
        throw badRequest('config.fromName must be one line of text', [
          { field: 'body.config.fromName', message: 'must not contain line breaks or control characters' },
        ]);
      if (name) next.fromName = name;
      else delete next.fromName;
    }
    const out: Prepared = { config: next };
    if (!previous) {
      out.inboundSecret = randomToken(32);
      out.secrets = { token: out.inboundSecret };
    }
    return out;
  }

  async send(out: Outgoing): Promise<Outcome> {
    const address = String(out.inbox.config.address ?? '');
    const fromName = typeof out.inbox.config.fromName === 'string' && out.inbox.config.fromName ? out.inbox.config.fromName : undefined;
    const domain = address.slice(address.lastIndexOf('@') + 1) || 'localhost';
    const messageId = `<${out.message.id}@${domain}>`;
    // Only real Message-IDs: not the stand-in of a received message that had none.
    const references = (out.conversation.references ?? []).filter((id) => /^<[^<>\s]{1,250}>$/.test(id) && !id.endsWith(`@${NO_ID_DOMAIN}>`));
    const subject = subjectFor(out.conversation.subject, out.inbox.name ?? fromName ?? address, references.length > 0);
    try {
      await this.mailer.send({
        from: { address, ...(fromName ? { name: fromName } : {}) },
        to: out.conversation.contact.address,
        subject,
        text: out.message.text,
        messageId,
        ...(references.length ? { inReplyTo: references.at(-1)!, references } : {}),
        ...(out.unsubscribeUrl ? { listUnsubscribe: out.unsubscribeUrl } : {}),
      });
      return { ok: true, externalId: messageId };
    } catch (error) {
      const e = error instanceof MailError ? error : new MailError('FAILED', (error as Error).message);
      // The relay's 5xx, a recipient we never send to, no relay: trying again changes nothing.
      const final = e.code === 'INVALID_RECIPIENT' || e.code === 'NOT_CONFIGURED' || (e.responseCode !== undefined && e.responseCode >= 500);
      return { ok: false, retry: !final, error: e.message.slice(0, 1000) };
    }
  }
}

const Params = Type.Object({ inboxId: Type.String({ maxLength: 64 }) });
const Query = Type.Object({ token: Type.Optional(Type.String({ maxLength: 200, description: "the inbox's `secrets.token`, shown when it was created" })) });
const Answer = Type.Object({
  id: Type.String({ description: 'the stored message' }),
  conversationId: Type.String(),
  duplicate: Type.Boolean({ description: "true when this Message-ID was stored before (a relay's retry): nothing new was written" }),
});

/**
 * `POST /api/v1/hooks/email/:inboxId?token=…`: a mail relay posts one received message as raw MIME
 * (`Content-Type: message/rfc822`, at most 10 MB). The token is the credential (hashed at rest,
 * compared in constant time); unknown inbox or wrong token: 401 and nothing stored.
 */
export function emailHookRoutes(app: App, conversations: InboundRoutesService): void {
  inboundRoute<{ inboxId: string }, undefined, InboxRow>(app, {
    path: '/hooks/email/:inboxId',
    rawContentTypes: ['message/rfc822'],
    schema: {
      tags: ['Conversations'],
      summary: 'E-mail inbound: a mail relay posts a received message as raw MIME (message/rfc822) with the inbox token',
      security: [],
      consumes: ['message/rfc822'],
      // Documents the raw message; the bytes are read from request.rawBody (the parsed body stays empty).
      body: {
        content: {
          'message/rfc822': {
            schema: Type.Unsafe<undefined>({
              type: ['string', 'null'],
              format: 'binary',
              maxLength: EMAIL_BODY_BYTES,
              description: 'the message as received (RFC 5322 with its MIME parts), at most 10 MB',
            }),
          },
        },
      },
      params: Params,
      querystring: Query,
      response: { 200: Answer, 201: Answer, ...errors(413, 415) },
    },
    verify: async ({ params, query }) => {
      const inbox = await conversations.inboxById(params.inboxId);
      if (!inbox || inbox.channel !== 'email') return null;
      return conversations.inboundSecretMatches(inbox, typeof query.token === 'string' ? query.token : null) ? inbox : null;
    },
    refusal: () => unauthorized('Unknown inbox or wrong token'),
    handle: async (inbox, request, reply) => {
      const type = String(request.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      if (type !== 'message/rfc822') {
        throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type '${type}' is not accepted here: send Content-Type: message/rfc822`, [
          { field: 'headers.content-type', message: 'must be message/rfc822', code: 'contentType', allowed: ['message/rfc822'] },
        ]);
      }
      const raw = request.rawBody;
      if (!raw || raw.length === 0)
        throw badRequest('The body is empty: post the raw message', [{ field: 'body', message: 'must be a raw e-mail message (message/rfc822)' }]);
      const { message, duplicate } = await conversations.receiveInbound(inbox, await parseInboundMail(raw));
      reply.code(duplicate ? 200 : 201);
      return { id: message.id, conversationId: message.conversationId, duplicate };
    },
    limits: { bodyBytes: EMAIL_BODY_BYTES, rate: { max: conversations.providerRateMax, windowMs: 60_000 } },
  });
}
