import { createHmac } from 'node:crypto';
import type { StandInAnswer, StandInRequest } from '../world.ts';

/**
 * The providers' side of the conversations load: the inbound deliveries each provider sends (a
 * Cloud API webhook signed as Meta signs it, a Telegram update, a raw MIME message as a mail relay
 * posts it) and the send APIs' answers (Graph API `POST /{phone-number-id}/messages`, Bot API
 * `sendMessage`), with a compact record of what the service sent: per reply token, how many
 * deliveries and which ids the service gave them.
 */

/** A reply's text carries its token (`[t:<token>]`), so the stand-ins can tell whose delivery they got. */
export const tokenIn = (text: unknown): string | null => /\[t:([A-Za-z0-9]+)\]/.exec(String(text ?? ''))?.[1] ?? null;

export function signMeta(appSecret: string, body: string): string {
  return 'sha256=' + createHmac('sha256', appSecret).update(body).digest('hex');
}

/** One Cloud API delivery with one text message. */
export function whatsappDelivery(phoneNumberId: string, from: string, name: string, wamid: string, text: string): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA_CHAOS',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550001111', phone_number_id: phoneNumberId },
              contacts: [{ profile: { name }, wa_id: from }],
              messages: [{ from, id: wamid, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: text } }],
            },
          },
        ],
      },
    ],
  });
}

/** One Bot API `message` update from a private chat. */
export function telegramUpdate(chatId: number, updateId: number, messageId: number, name: string, text: string): string {
  const [first, last] = name.split(' ');
  return JSON.stringify({
    update_id: updateId,
    message: {
      message_id: messageId,
      from: { id: chatId, is_bot: false, first_name: first, last_name: last, language_code: 'en' },
      chat: { id: chatId, first_name: first, last_name: last, type: 'private' },
      date: Math.floor(Date.now() / 1000),
      text,
    },
  });
}

/** A plain-text message as a relay receives it. */
export function mime(from: string, name: string, to: string, messageId: string, subject: string, text: string): string {
  return [
    `From: "${name}" <${from}>`,
    `To: <${to}>`,
    `Subject: ${subject}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: ${messageId}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    text,
    '',
  ].join('\r\n');
}

/** What a provider got for one reply token: deliveries, and the distinct ids the service (or we) gave them. */
export interface Sent {
  deliveries: number;
  ids: Set<string>;
}

/** Outbound deliveries per reply token; anything without a token (the bot's answers) counted per channel. */
export class Outbox {
  readonly byToken = new Map<string, Sent>();
  /** Deliveries without a token (bot replies) per channel. */
  readonly untokened = new Map<string, number>();

  record(channel: string, text: unknown, id: string): void {
    const token = tokenIn(text);
    if (!token) {
      this.untokened.set(channel, (this.untokened.get(channel) ?? 0) + 1);
      return;
    }
    const sent = this.byToken.get(token) ?? { deliveries: 0, ids: new Set<string>() };
    sent.deliveries++;
    sent.ids.add(id);
    this.byToken.set(token, sent);
  }
}

const json = (status: number, body: unknown): StandInAnswer => ({ status, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

/** The Graph API's send endpoint: any phone number id, a new wamid per accepted send. */
export function whatsappApi(outbox: Outbox, next: () => number): (req: StandInRequest) => StandInAnswer {
  return (req) => {
    if (req.method !== 'POST' || !/\/\d+\/messages$/.test(req.url.split('?')[0]!))
      return json(404, { error: { message: 'Unknown path', type: 'OAuthException', code: 803 } });
    const body = (req.json ?? {}) as { to?: string; text?: { body?: string }; type?: string };
    const wamid = `wamid.CHAOS${next()}`;
    outbox.record('whatsapp', body.text?.body, wamid);
    return json(200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: wamid }] });
  };
}

/** The Bot API: setWebhook, deleteWebhook and sendMessage for any well-formed token. */
export function telegramApi(outbox: Outbox, next: () => number): (req: StandInRequest) => StandInAnswer {
  return (req) => {
    const match = /\/bot(\d+:[A-Za-z0-9_-]+)\/(\w+)$/.exec(req.url.split('?')[0]!);
    if (!match) return json(404, { ok: false, error_code: 404, description: 'Not Found' });
    const method = match[2]!;
    const body = (req.json ?? {}) as { chat_id?: number | string; text?: string };
    if (method === 'setWebhook') return json(200, { ok: true, result: true, description: 'Webhook was set' });
    if (method === 'deleteWebhook') return json(200, { ok: true, result: true, description: 'Webhook was deleted' });
    if (method === 'sendMessage') {
      const messageId = next();
      outbox.record('telegram', body.text, `${body.chat_id}:${messageId}`);
      return json(200, {
        ok: true,
        result: { message_id: messageId, chat: { id: body.chat_id, type: 'private' }, date: Math.floor(Date.now() / 1000), text: body.text },
      });
    }
    return json(404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
  };
}

/** The api channel's receiver: the envelope id is what must stay the same on every attempt. */
export function apiReceiver(outbox: Outbox, next: () => number): (req: StandInRequest) => StandInAnswer {
  return (req) => {
    const envelope = (req.json ?? {}) as { id?: string; payload?: { message?: { id?: string; text?: string } } };
    outbox.record('api', envelope.payload?.message?.text, `${envelope.id ?? '?'}`);
    return json(200, { id: `rcv-${next()}` });
  };
}
