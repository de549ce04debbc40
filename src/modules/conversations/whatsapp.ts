import type { FastifyRequest } from 'fastify';
import { hmacSha256Hex, randomToken, safeEqual } from '../../platform/crypto.ts';
import { badRequest, forbidden, unauthorized, unprocessable } from '../../platform/errors.ts';
import { outboundRequest } from '../../platform/http-client.ts';
import { Type, FreeObject, errors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { inboundRoute } from '../../platform/inbound.ts';
import {
  assertKnownKeys,
  retryAfterSeconds,
  type ChannelAdapter,
  type ChannelEnv,
  type Outcome,
  type Outgoing,
  type PrepareContext,
  type Prepared,
  type SendCheck,
  type InboundInput,
  type Receipt,
} from './channel-types.ts';
import type { InboundRoutesService } from './hook-ports.ts';
import type { inboxes } from './tables.ts';

type InboxRow = typeof inboxes.$inferSelect;

/** WhatsApp's customer service window: free text only within 24 hours of the contact's last message. */
export const WINDOW_MS = 24 * 60 * 60 * 1000;

/** Graph API error codes that mean "slow down, try again" (rate and pair-rate limits, spam throttling). */
const THROTTLING_CODES = new Set([4, 80007, 130429, 131056]);

const PHONE_NUMBER_ID = /^\d{1,30}$/;
const CREDENTIAL_KEYS = ['accessToken', 'appSecret'] as const;

/** Limits on what one webhook delivery is read for (Meta batches at most a few hundred items). */
const MAX_ENTRIES = 100;
const MAX_CHANGES = 100;
const MAX_ITEMS = 1000;
const MAX_TEXT = 4096;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v !== '' ? v.slice(0, max) : undefined);
const listOf = (v: unknown, max: number, field: string): unknown[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw badRequest(`${field} must be an array`, [{ field: `body.${field}`, message: 'must be an array' }]);
  if (v.length > max) throw badRequest(`${field} has more than ${max} items`, [{ field: `body.${field}`, message: `must have at most ${max} items` }]);
  return v;
};

/**
 * `whatsapp`: the WhatsApp Cloud API. Config `{ phoneNumberId }`, credentials `{ accessToken,
 * appSecret }`; the inbox makes a verify token for Meta's webhook handshake (shown once). Outbound
 * messages go to `POST {WHATSAPP_API_BASE_URL}/{phoneNumberId}/messages`; inbound messages and
 * delivery statuses arrive signed on `POST /api/v1/hooks/whatsapp/:inboxId` (whatsappHookRoutes).
 */
export class WhatsAppChannel implements ChannelAdapter {
  readonly channel = 'whatsapp' as const;
  private readonly env: ChannelEnv;

  constructor(env: ChannelEnv) {
    this.env = env;
  }

  async prepare(config: Record<string, unknown>, previous: Record<string, unknown> | null, context: PrepareContext): Promise<Prepared> {
    assertKnownKeys('whatsapp', 'config', config, ['phoneNumberId', 'faq']);
    const phoneNumberId = config.phoneNumberId ?? previous?.phoneNumberId;
    if (typeof phoneNumberId !== 'string' || phoneNumberId === '')
      throw badRequest('A whatsapp inbox needs config.phoneNumberId, the WhatsApp Business phone number id', [
        { field: 'body.config.phoneNumberId', message: 'is required for the whatsapp channel' },
      ]);
    if (!PHONE_NUMBER_ID.test(phoneNumberId))
      throw badRequest('config.phoneNumberId is the numeric id Meta shows for the phone number (not the phone number itself)', [
        { field: 'body.config.phoneNumberId', message: 'must be digits only' },
      ]);
    if (!previous || context.credentialsChanged) {
      const credentials = context.credentials ?? {};
      for (const key of CREDENTIAL_KEYS) {
        if (typeof credentials[key] !== 'string' || credentials[key].trim() === '')
          throw badRequest(`A whatsapp inbox needs credentials.${key}`, [
            { field: `body.credentials.${key}`, message: 'is required for the whatsapp channel' },
          ]);
      }
      assertKnownKeys('whatsapp', 'credentials', credentials, CREDENTIAL_KEYS);
    }
    const out: Prepared = { config: { ...(previous ?? {}), ...config, phoneNumberId } };
    if (!previous) {
      // Compared only (Meta presents it on the handshake): stored as a hash.
      out.inboundSecret = randomToken(24);
      out.secrets = { verifyToken: out.inboundSecret };
    }
    return out;
  }

  checkSend(check: SendCheck): void {
    if (check.template) return;
    if (check.lastInboundAt === null || check.now.getTime() - check.lastInboundAt.getTime() > WINDOW_MS) {
      throw unprocessable(
        'CHANNEL_WINDOW_CLOSED',
        check.lastInboundAt === null
          ? 'WhatsApp only lets a business start a conversation with a template message: send `template` instead of `text`'
          : "The contact's last WhatsApp message is more than 24 hours old: only a template message can be sent (send `template` instead of `text`)",
      );
    }
  }

  async send(out: Outgoing): Promise<Outcome> {
    const phoneNumberId = String(out.inbox.config.phoneNumberId ?? '');
    const token = out.inbox.credentials?.accessToken;
    if (!PHONE_NUMBER_ID.test(phoneNumberId)) return { ok: false, retry: false, error: 'the inbox has no valid config.phoneNumberId' };
    if (!token) return { ok: false, retry: false, error: 'the inbox has no credentials.accessToken' };
    const to = out.conversation.contact.address.replace(/\D/g, '');
    if (to.length < 6 || to.length > 20)
      return {
        ok: false,
        retry: false,
        error: `the contact's address (${out.conversation.contact.address.slice(0, 50)}) is not a phone number WhatsApp can reach`,
      };
    const template = out.message.template as { name: string; language: string; components?: unknown[] } | undefined;
    const body = template
      ? {
          messaging_product: 'whatsapp',
          recipient_type: 'individual',
          to,
          type: 'template',
          template: { name: template.name, language: { code: template.language }, ...(template.components ? { components: template.components } : {}) },
        }
      : { messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'text', text: { body: out.message.text } };
    let res;
    try {
      res = await outboundRequest({
        method: 'POST',
        url: `${this.env.whatsappApiBaseUrl}/${phoneNumberId}/messages`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        // The base URL is the operator's configuration (WHATSAPP_API_BASE_URL), not a user's choice.
        allowPrivate: true,
        timeoutMs: this.env.timeoutMs,
        readBytes: 64 * 1024,
      });
    } catch (error) {
      return { ok: false, retry: true, error: `the WhatsApp API could not be reached: ${(error as Error).message}` };
    }
    let answer: Json | null = null;
    try {
      const parsed = JSON.parse(res.body) as unknown;
      if (isObject(parsed)) answer = parsed;
    } catch {
      // not JSON: judged by the status alone
    }
    if (res.status >= 200 && res.status < 300) {
      const first = Array.isArray(answer?.messages) ? (answer.messages as unknown[])[0] : undefined;
      const id = isObject(first) ? str(first.id, 200) : undefined;
      if (id) return { ok: true, externalId: id };
      return { ok: false, retry: false, error: 'the WhatsApp API accepted the message without giving its id' };
    }
    const error = isObject(answer?.error) ? answer.error : {};
    const code = typeof error.code === 'number' ? error.code : undefined;
    const subcode = typeof error.error_subcode === 'number' ? error.error_subcode : undefined;
    const details = isObject(error.error_data) ? str(error.error_data.details, 500) : undefined;
    const message = str(error.message, 500) ?? `HTTP ${res.status}`;
    const codes = [code !== undefined ? `code ${code}` : null, subcode !== undefined ? `subcode ${subcode}` : null].filter(Boolean).join(', ');
    const text = `${message}${details && details !== message ? ` (${details})` : ''}${codes ? ` [${codes}]` : ''}`;
    const retry = res.status === 429 || res.status >= 500 || (code !== undefined && THROTTLING_CODES.has(code));
    const failure: Outcome = { ok: false, retry, error: text };
    const header = res.headers['retry-after'];
    const after = retryAfterSeconds(Array.isArray(header) ? header[0] : header);
    if (after !== undefined) failure.retryAfterS = after;
    return failure;
  }
}

/** The text an inbound message is stored with: its text, a reply's title, or a short placeholder. */
export function inboundText(message: Json): string {
  const type = typeof message.type === 'string' && /^[a-z_]{1,40}$/.test(message.type) ? message.type : 'unknown';
  const part = isObject(message[type]) ? message[type] : {};
  const placeholder = (extra?: string) => (extra ? `[${type}] ${extra}` : `[${type}]`);
  switch (type) {
    case 'text':
      return str(part.body, MAX_TEXT) ?? '[text]';
    case 'image':
    case 'video':
    case 'document':
    case 'audio':
    case 'sticker':
      return placeholder(str(part.caption, MAX_TEXT) ?? (type === 'document' ? str(part.filename, 300) : undefined));
    case 'location': {
      const where = [str(part.name, 300), str(part.address, 500)].filter(Boolean).join(', ');
      const at = typeof part.latitude === 'number' && typeof part.longitude === 'number' ? `(${part.latitude}, ${part.longitude})` : '';
      return placeholder([where, at].filter(Boolean).join(' ') || undefined);
    }
    case 'button':
      return str(part.text, MAX_TEXT) ?? str(part.payload, MAX_TEXT) ?? '[button]';
    case 'interactive': {
      const reply = isObject(part.button_reply) ? part.button_reply : isObject(part.list_reply) ? part.list_reply : null;
      return (reply && (str(reply.title, MAX_TEXT) ?? str(reply.id, 300))) ?? '[interactive]';
    }
    case 'reaction':
      return str(part.emoji, 50) ? `[reaction ${str(part.emoji, 50)}]` : '[reaction removed]';
    case 'contacts': {
      const names = Array.isArray(message.contacts)
        ? message.contacts
            .slice(0, 20)
            .map((c) => (isObject(c) && isObject(c.name) ? str(c.name.formatted_name, 200) : undefined))
            .filter(Boolean)
        : [];
      return names.length ? `[contacts] ${names.join(', ')}` : '[contacts]';
    }
    case 'system':
      return str(part.body, MAX_TEXT) ?? '[system]';
    default:
      return placeholder();
  }
}

/** Meta's delivery statuses that map onto a message's status; others (`deleted`, …) are ignored. */
const RECEIPTS = new Set<Receipt>(['sent', 'delivered', 'read', 'failed']);

function statusError(status: Json): string | undefined {
  const first = Array.isArray(status.errors) ? status.errors[0] : undefined;
  if (!isObject(first)) return undefined;
  const title = str(first.title, 300);
  const message = str(first.message, 500);
  const details = isObject(first.error_data) ? str(first.error_data.details, 500) : undefined;
  const parts = [title, message && message !== title ? message : undefined, details && details !== message ? details : undefined].filter(Boolean);
  const code = typeof first.code === 'number' ? ` [code ${first.code}]` : '';
  return parts.length ? `${parts.join(': ')}${code}` : undefined;
}

interface Delivery {
  inbound: InboundInput[];
  receipts: { id: string; status: Receipt; error?: string }[];
}

/**
 * What a signed webhook delivery carries for this inbox: its messages and statuses, every entry and
 * change in order. Changes of another field, and of another phone number (one Meta app posts every
 * number's events to the URL it has), are skipped.
 */
export function readDelivery(body: unknown, phoneNumberId: string): Delivery {
  const out: Delivery = { inbound: [], receipts: [] };
  if (!isObject(body)) throw badRequest('The body must be a JSON object', [{ field: 'body', message: 'must be an object' }]);
  if (body.object !== 'whatsapp_business_account') return out;
  for (const [e, entry] of listOf(body.entry, MAX_ENTRIES, 'entry').entries()) {
    if (!isObject(entry)) continue;
    for (const change of listOf(entry.changes, MAX_CHANGES, `entry.${e}.changes`)) {
      if (!isObject(change) || change.field !== 'messages' || !isObject(change.value)) continue;
      const value = change.value;
      const metadata = isObject(value.metadata) ? value.metadata : {};
      if (metadata.phone_number_id !== undefined && String(metadata.phone_number_id) !== phoneNumberId) continue;
      const names = new Map<string, string>();
      for (const contact of listOf(value.contacts, MAX_ITEMS, 'contacts')) {
        if (!isObject(contact)) continue;
        const waId = str(contact.wa_id, 30);
        const name = isObject(contact.profile) ? str(contact.profile.name, 200) : undefined;
        if (waId && name) names.set(waId, name);
      }
      for (const message of listOf(value.messages, MAX_ITEMS, 'messages')) {
        if (!isObject(message)) continue;
        const id = str(message.id, 200);
        const from = typeof message.from === 'string' ? message.from.replace(/\D/g, '') : '';
        if (!id || from.length < 6 || from.length > 20) continue;
        const name = names.get(from);
        out.inbound.push({ contact: { address: `+${from}`, ...(name ? { name } : {}) }, text: inboundText(message), externalId: id });
      }
      for (const status of listOf(value.statuses, MAX_ITEMS, 'statuses')) {
        if (!isObject(status)) continue;
        const id = str(status.id, 200);
        const kind = status.status as Receipt;
        if (!id || !RECEIPTS.has(kind)) continue;
        const error = kind === 'failed' ? statusError(status) : undefined;
        out.receipts.push({ id, status: kind, ...(error ? { error } : {}) });
      }
    }
  }
  return out;
}

const Params = Type.Object({ inboxId: Type.String({ minLength: 1, maxLength: 64 }) });
const Handshake = Type.Object({
  'hub.mode': Type.Optional(Type.String({ maxLength: 20 })),
  'hub.verify_token': Type.Optional(Type.String({ maxLength: 200 })),
  'hub.challenge': Type.Optional(Type.String({ maxLength: 200, pattern: '^[A-Za-z0-9._~-]+$' })),
});

/** The X-Hub-Signature-256 header's digest, when it has the form `sha256=<64 hex>`. */
function presentedDigest(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  const match = typeof value === 'string' ? /^sha256=([0-9a-fA-F]{64})$/.exec(value.trim()) : null;
  return match ? match[1]!.toLowerCase() : null;
}

/**
 * `GET /api/v1/hooks/whatsapp/:inboxId`: Meta's subscription handshake (echo `hub.challenge` for the
 * inbox's verify token). `POST` the same path: messages and statuses, signed with the app secret
 * (`X-Hub-Signature-256`), all stored before the 200.
 */
export function whatsappHookRoutes(app: App, conversations: InboundRoutesService): void {
  app.get(
    '/hooks/whatsapp/:inboxId',
    {
      schema: {
        tags: ['Conversations'],
        summary: "WhatsApp webhook handshake: echoes hub.challenge for the inbox's verify token",
        security: [],
        params: Params,
        querystring: Handshake,
        response: {
          200: { description: 'The hub.challenge, as text', content: { 'text/plain': { schema: Type.String() } } },
          ...errors(403),
        },
      },
    },
    async (request: FastifyRequest<{ Params: { inboxId: string }; Querystring: Record<string, string | undefined> }>, reply) => {
      const query = request.query;
      const inbox = await conversations.inboxById(request.params.inboxId);
      const ok =
        inbox?.channel === 'whatsapp' &&
        query['hub.mode'] === 'subscribe' &&
        typeof query['hub.challenge'] === 'string' &&
        conversations.inboundSecretMatches(inbox, query['hub.verify_token']);
      if (!ok) throw forbidden('The verify token does not match this inbox');
      reply.header('x-content-type-options', 'nosniff').type('text/plain; charset=utf-8');
      return query['hub.challenge'];
    },
  );

  inboundRoute<{ inboxId: string }, unknown, InboxRow>(app, {
    path: '/hooks/whatsapp/:inboxId',
    schema: {
      tags: ['Conversations'],
      summary: 'WhatsApp Cloud API webhook: messages and delivery statuses, signed with the app secret',
      security: [],
      params: Params,
      body: FreeObject('the WhatsApp Cloud API webhook payload (`object: "whatsapp_business_account"`, `entry[].changes[].value`)'),
      response: {
        200: Type.Object(
          {
            messages: Type.Integer({ description: 'messages stored now' }),
            duplicates: Type.Integer({ description: "messages stored before (Meta's retries)" }),
            statuses: Type.Integer({ description: 'delivery statuses that changed a message' }),
          },
          { description: 'Everything in the delivery is stored' },
        ),
        ...errors(413),
      },
    },
    limits: { bodyBytes: 1024 * 1024, rate: { max: conversations.providerRateMax, windowMs: 60_000 } },
    verify: async ({ params, headers, rawBody }) => {
      const digest = presentedDigest(headers['x-hub-signature-256']);
      if (!digest) return null;
      const inbox = await conversations.inboxById(params.inboxId);
      if (inbox?.channel !== 'whatsapp') return null;
      let appSecret: string | undefined;
      try {
        appSecret = conversations.credentialsOf(inbox)?.appSecret;
      } catch {
        return null;
      }
      if (!appSecret) return null;
      return safeEqual(hmacSha256Hex(appSecret, rawBody), digest) ? inbox : null;
    },
    refusal: () => unauthorized('Missing or invalid X-Hub-Signature-256'),
    handle: async (inbox, request) => {
      const delivery = readDelivery(request.body, String(inbox.config.phoneNumberId ?? ''));
      let stored = 0;
      let duplicates = 0;
      let statuses = 0;
      // In order, one at a time: a contact's messages keep their order, and the 200 means all are stored.
      for (const input of delivery.inbound) {
        const result = await conversations.receiveInbound(inbox, input);
        if (result.duplicate) duplicates++;
        else stored++;
      }
      for (const receipt of delivery.receipts) {
        if (await conversations.applyReceipt(inbox, receipt.id, receipt.status, receipt.error)) statuses++;
      }
      return { messages: stored, duplicates, statuses };
    },
  });
}
