import { randomToken } from '../../platform/crypto.ts';
import { OutboundError, outboundRequest } from '../../platform/http-client.ts';
import { badRequest, unauthorized, unprocessable } from '../../platform/errors.ts';
import { Type, errors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { inboundRoute } from '../../platform/inbound.ts';
import {
  EMAIL_IN_TEXT,
  assertKnownKeys,
  type ChannelAdapter,
  type ChannelEnv,
  type Outcome,
  type Outgoing,
  type PrepareContext,
  type Prepared,
  type SendCheck,
  type InboundInput,
} from './channel-types.ts';
import type { InboundRoutesService } from './hook-ports.ts';
import type { inboxes } from './tables.ts';

type InboxRow = typeof inboxes.$inferSelect;

/**
 * `telegram`: a bot of the Telegram Bot API. Credentials `{ botToken }`; creating the inbox (or
 * giving it a new token) registers the inbox's inbound URL as the bot's webhook with a generated
 * secret token, which Telegram then sends with every update (`X-Telegram-Bot-Api-Secret-Token`).
 * Outbound: `sendMessage` to the contact's chat. A bot cannot write first: a contact must have
 * written to it.
 */

/** A bot token as BotFather issues it: `<bot id>:<secret>`. Checked before it is put in a URL path. */
const BOT_TOKEN = /^(\d{1,20}):[A-Za-z0-9_-]{1,200}$/;
/** What Telegram answers; more than this is not a Bot API answer we need to read. */
const ANSWER_BYTES = 64 * 1024;
/** Telegram's own limit on a message's text (UTF-16 code units, as JavaScript counts). */
const TEXT_LIMIT = 4096;
const NAME_LIMIT = 200;

/** Kinds of message content stored as a placeholder (with the caption, if any) when there is no text. */
const CONTENT_KINDS = [
  'photo',
  'video',
  'animation',
  'audio',
  'voice',
  'video_note',
  'document',
  'sticker',
  'location',
  'venue',
  'contact',
  'poll',
  'dice',
  'game',
  'invoice',
  'story',
] as const;

interface BotApiAnswer {
  status: number;
  ok: boolean;
  result?: unknown;
  description?: string;
  retryAfterS?: number;
}

/** The bot's id (the part of the token before the colon), or null for a token that is not one. */
export function botIdOf(token: string | undefined | null): string | null {
  if (typeof token !== 'string') return null;
  const match = BOT_TOKEN.exec(token);
  return match ? match[1]! : null;
}

/** A Bot API method call: POST JSON, answer `{ ok, result | description, parameters? }`. Throws OutboundError on the network. */
async function callBotApi(env: ChannelEnv, token: string, method: string, payload: Record<string, unknown>): Promise<BotApiAnswer> {
  const res = await outboundRequest({
    method: 'POST',
    url: `${env.telegramApiBaseUrl}/bot${token}/${method}`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    // The host is the operator's TELEGRAM_API_BASE_URL (api.telegram.org, or a local Bot API
    // server), never a user's: the token, the only part a user gives, is checked to be a token.
    // Redirects are still not followed, the time-out and the read limit still hold.
    allowPrivate: true,
    timeoutMs: env.timeoutMs,
    readBytes: ANSWER_BYTES,
  });
  const answer: BotApiAnswer = { status: res.status, ok: false };
  try {
    const parsed = JSON.parse(res.body) as { ok?: unknown; result?: unknown; description?: unknown; parameters?: { retry_after?: unknown } };
    answer.ok = parsed.ok === true && res.status >= 200 && res.status < 300;
    answer.result = parsed.result;
    if (typeof parsed.description === 'string') answer.description = parsed.description.slice(0, 500);
    const after = parsed.parameters?.retry_after;
    if (typeof after === 'number' && Number.isFinite(after)) answer.retryAfterS = Math.min(3600, Math.max(0, Math.ceil(after)));
  } catch {
    // not a Bot API answer (a proxy's error page): the status speaks for it
  }
  return answer;
}

/** An error message that can never carry the token (undici's messages do not, but nothing relies on that). */
function withoutToken(message: string, token: string): string {
  return token ? message.split(token).join('<bot token>') : message;
}

export class TelegramChannel implements ChannelAdapter {
  readonly channel = 'telegram' as const;
  private readonly env: ChannelEnv;

  constructor(env: ChannelEnv) {
    this.env = env;
  }

  async prepare(config: Record<string, unknown>, previous: Record<string, unknown> | null, context: PrepareContext): Promise<Prepared> {
    assertKnownKeys('telegram', 'config', config, ['faq']);
    const merged = { ...(previous ?? {}), ...config };
    if (previous && !context.credentialsChanged) return { config: merged };

    const credentials = context.credentials ?? {};
    assertKnownKeys('telegram', 'credentials', credentials, ['botToken']);
    const token = credentials.botToken;
    if (typeof token !== 'string' || token === '')
      throw badRequest('A telegram inbox needs credentials.botToken, the token BotFather gave the bot', [
        { field: 'body.credentials.botToken', message: 'is required for the telegram channel' },
      ]);
    if (!botIdOf(token))
      throw badRequest('credentials.botToken is not a Telegram bot token (<bot id>:<secret>)', [
        { field: 'body.credentials.botToken', message: 'must look like 123456789:AA…, as BotFather gives it' },
      ]);

    // Telegram allows 1-256 characters of A-Z, a-z, 0-9, _ and -: base64url.
    const secretToken = randomToken(32);
    let answer: BotApiAnswer;
    try {
      answer = await callBotApi(this.env, token, 'setWebhook', { url: context.inboundUrl, secret_token: secretToken, allowed_updates: ['message'] });
    } catch (error) {
      const reason = error instanceof OutboundError ? error.message : 'connection failed';
      throw unprocessable('CHANNEL_SETUP_FAILED', withoutToken(`The Telegram Bot API could not be reached to register the webhook: ${reason}`, token));
    }
    if (!answer.ok) {
      const why = answer.description ?? `it answered ${answer.status}`;
      const hint = answer.status === 401 || answer.status === 404 ? ' (check the bot token)' : '';
      throw unprocessable('CHANNEL_SETUP_FAILED', withoutToken(`Telegram refused to register the webhook: ${why}${hint}`, token), [
        { field: 'body.credentials.botToken', message: withoutToken(why, token) },
      ]);
    }
    return { config: merged, inboundSecret: secretToken, secrets: { secretToken } };
  }

  /** deleteWebhook for a bot this inbox no longer serves (deleted, or replaced by another bot; not a new token of the same bot). */
  async retire(credentials: Record<string, string> | null, replacement?: Record<string, string>): Promise<void> {
    const token = credentials?.botToken ?? '';
    const bot = botIdOf(token);
    if (!bot || (replacement && botIdOf(replacement.botToken ?? '') === bot)) return;
    await callBotApi(this.env, token, 'deleteWebhook', {});
  }

  checkSend(check: SendCheck): void {
    if (check.starting) throw unprocessable('CHANNEL_CANNOT_INITIATE', 'A Telegram bot cannot start a conversation: the contact has to write to the bot first');
    if (check.template)
      throw badRequest('Templates are a WhatsApp feature; a Telegram message is text', [
        { field: 'body.template', message: 'is not available on the telegram channel' },
      ]);
  }

  async send(out: Outgoing): Promise<Outcome> {
    const token = out.inbox.credentials?.botToken ?? '';
    if (!botIdOf(token)) return { ok: false, retry: false, error: 'the inbox has no usable bot token' };
    const address = out.conversation.contact.address;
    // Chat ids have at most 52 significant bits: a JSON number holds them exactly.
    const chatId = /^-?\d{1,16}$/.test(address) ? Number(address) : address;
    let answer: BotApiAnswer;
    try {
      answer = await callBotApi(this.env, token, 'sendMessage', { chat_id: chatId, text: out.message.text });
    } catch (error) {
      const reason = error instanceof OutboundError ? error.message : 'connection failed';
      return { ok: false, retry: true, error: withoutToken(`the Telegram Bot API could not be reached: ${reason}`, token) };
    }
    if (answer.ok) {
      const messageId = (answer.result as { message_id?: unknown } | undefined)?.message_id;
      if (typeof messageId === 'number' || (typeof messageId === 'string' && messageId.length <= 50))
        return { ok: true, externalId: `${address}:${messageId}` };
      return { ok: false, retry: false, error: 'Telegram accepted the message but did not say its message_id' };
    }
    const error = withoutToken(`Telegram answered ${answer.status}${answer.description ? `: ${answer.description}` : ''}`, token);
    if (answer.status === 429) {
      const failure: Outcome = { ok: false, retry: true, error };
      if (answer.retryAfterS !== undefined) failure.retryAfterS = answer.retryAfterS;
      return failure;
    }
    return { ok: false, retry: answer.status >= 500 || answer.status === 408, error };
  }
}

interface TelegramUser {
  id?: unknown;
  first_name?: unknown;
  last_name?: unknown;
  username?: unknown;
}
interface TelegramMessage {
  message_id?: unknown;
  from?: TelegramUser;
  chat?: { id?: unknown; type?: unknown; title?: unknown } & TelegramUser;
  text?: unknown;
  caption?: unknown;
  [kind: string]: unknown;
}
interface TelegramUpdate {
  update_id: number;
  message?: TelegramMessage;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Who wrote: the person in a private chat, the group's title for a group. */
function nameOf(message: TelegramMessage): string | undefined {
  const chat = message.chat ?? {};
  const person = (who: TelegramUser | undefined) => {
    if (!who) return undefined;
    const full = [str(who.first_name), str(who.last_name)].filter(Boolean).join(' ');
    return full || str(who.username);
  };
  const name = chat.type === 'private' || chat.type === undefined ? (person(message.from) ?? person(chat)) : (str(chat.title) ?? person(message.from));
  return name?.slice(0, NAME_LIMIT);
}

/**
 * Who the writer of a private chat says they are: their own contact card (shared with Telegram's
 * "share my phone number" button: `contact.user_id` is the sender's id — a card of someone else is
 * not theirs) or the first e-mail address in the text. The chat's contact is then linked to that
 * lead, so that campaigns and workflows can reach the lead in this chat.
 */
export function identityOf(update: TelegramUpdate): { phone?: string; email?: string } | null {
  const message = update.message;
  if (!message || typeof message !== 'object' || message.chat?.type !== 'private') return null;
  const card = message.contact as { phone_number?: unknown; user_id?: unknown } | undefined;
  const phone = str(card?.phone_number);
  if (phone && card?.user_id !== undefined && card.user_id === message.from?.id) return { phone: phone.startsWith('+') ? phone : `+${phone}` };
  const email = typeof message.text === 'string' ? EMAIL_IN_TEXT.exec(message.text)?.[0] : undefined;
  return email ? { email } : null;
}

/**
 * The message an update carries, as the service stores it; null for an update that is not a new
 * message (an edit, a member joining, anything allowed_updates did not ask for).
 */
export function inboundOf(update: TelegramUpdate, botId: string): InboundInput | null {
  const message = update.message;
  if (!message || typeof message !== 'object') return null;
  const chatId = message.chat?.id;
  if (typeof chatId !== 'number' || !Number.isSafeInteger(chatId)) return null;
  const caption = str(message.caption);
  let text = typeof message.text === 'string' && message.text !== '' ? message.text : undefined;
  if (text === undefined) {
    const kind = CONTENT_KINDS.find((k) => message[k] !== undefined && message[k] !== null);
    if (!kind) return null;
    text = caption ? `[${kind}] ${caption}` : `[${kind}]`;
  }
  const name = nameOf(message);
  return {
    contact: { address: String(chatId), ...(name ? { name } : {}) },
    text: text.slice(0, TEXT_LIMIT),
    // update_id counts per bot: with the bot's id a new token on the same inbox cannot collide with the old bot's.
    externalId: `${botId}:${update.update_id}`,
    linkLead: false,
  };
}

const Params = Type.Object({ inboxId: Type.String({ minLength: 1, maxLength: 64 }) });
/** Only what every update has; the rest is read defensively (a 400 would only make Telegram retry). */
const Update = Type.Object(
  { update_id: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) },
  { additionalProperties: true, description: 'a Telegram Update object' },
);

/**
 * `POST /api/v1/hooks/telegram/:inboxId`: Telegram's webhook deliveries. The sender is the bot whose
 * secret token (set with setWebhook) is in `X-Telegram-Bot-Api-Secret-Token`, compared in constant
 * time as a hash; an unknown inbox, an inbox of another channel or a wrong or missing token all give
 * 401 and store nothing. A message is stored before the 200; a redelivered update (same update_id)
 * stores nothing new.
 */
export function telegramHookRoutes(app: App, conversations: InboundRoutesService): void {
  inboundRoute<{ inboxId: string }, TelegramUpdate, InboxRow>(app, {
    path: '/hooks/telegram/:inboxId',
    schema: {
      tags: ['Conversations'],
      summary: "Telegram webhook: a bot's updates for a telegram inbox (X-Telegram-Bot-Api-Secret-Token)",
      security: [],
      params: Params,
      body: Update,
      response: {
        200: Type.Object({ ok: Type.Boolean() }, { description: 'The update was stored (or is not a message, or was stored before)' }),
        ...errors(413),
      },
    },
    verify: async ({ params, headers }) => {
      const inbox = await conversations.inboxById(params.inboxId);
      if (!inbox || inbox.channel !== 'telegram') return null;
      const presented = headers['x-telegram-bot-api-secret-token'];
      return conversations.inboundSecretMatches(inbox, typeof presented === 'string' ? presented : null) ? inbox : null;
    },
    refusal: () => unauthorized('Unknown inbox or wrong secret token'),
    handle: async (inbox, request) => {
      const botId = botIdOf(conversations.credentialsOf(inbox)?.botToken);
      const input = botId ? inboundOf(request.body, botId) : null;
      if (!input) return { ok: true };
      await conversations.receiveInbound(inbox, input);
      const who = identityOf(request.body);
      if (who) await conversations.identifyAddress(inbox, input.contact.address, { ...who, ...(input.contact.name ? { name: input.contact.name } : {}) });
      return { ok: true };
    },
    limits: {
      // Updates are a few KB; a message's text is at most 4096 characters.
      bodyBytes: 256 * 1024,
      // Telegram delivers every bot's updates from a few addresses; over the limit it retries later.
      rate: { max: conversations.providerRateMax, windowMs: 60_000 },
    },
  });
}
