import { randomToken } from '../../platform/crypto.ts';
import { assertOutboundUrl } from '../../platform/http-client.ts';
import { badRequest, unprocessable } from '../../platform/errors.ts';
import { sendSigned } from '../webhooks/index.ts';
import {
  assertKnownKeys,
  retryAfterSeconds,
  type Channel,
  type ChannelAdapter,
  type ChannelEnv,
  type Outcome,
  type Outgoing,
  type Prepared,
} from './channel-types.ts';
import { WhatsAppChannel } from './whatsapp.ts';
import { TelegramChannel } from './telegram.ts';
import { EmailChannel } from './email.ts';
import { WebChannel } from './web.ts';

/** The receiver's id for the message, when its answer is JSON carrying `{ id }`. */
function idFromBody(body: string | undefined): string | null {
  if (!body) return null;
  try {
    const parsed = JSON.parse(body) as unknown;
    const id = parsed && typeof parsed === 'object' ? (parsed as { id?: unknown }).id : undefined;
    if ((typeof id === 'string' && id.length > 0 && id.length <= 200) || typeof id === 'number') return String(id);
  } catch {
    // not JSON: the delivery id stands for the message
  }
  return null;
}

/**
 * `api`: inbound is posted by the customer's own system with an API key; outbound is a webhook to
 * `config.url`, signed and enveloped as SPEC's webhooks (the webhooks module's signer).
 */
export class ApiChannel implements ChannelAdapter {
  readonly channel = 'api' as const;
  private readonly env: ChannelEnv;

  constructor(env: ChannelEnv) {
    this.env = env;
  }

  async prepare(config: Record<string, unknown>, previous: Record<string, unknown> | null): Promise<Prepared> {
    const url = config.url ?? previous?.url;
    if (typeof url !== 'string' || url === '')
      throw badRequest('An api inbox needs config.url, where its outbound messages are delivered', [
        { field: 'body.config.url', message: 'is required for the api channel' },
      ]);
    await assertOutboundUrl(url, 'body.config.url', { allowPrivate: this.env.allowPrivate, requireHttps: true });
    assertKnownKeys('api', 'config', config, ['url', 'faq']);
    const out: Prepared = { config: { ...(previous ?? {}), ...config, url } };
    if (!previous) {
      out.signingSecret = 'whsec_' + randomToken(32);
      out.secrets = { signingSecret: out.signingSecret };
    }
    return out;
  }

  async send(out: Outgoing): Promise<Outcome> {
    const deliveryId = `dlv_${out.message.id}_${randomToken(6)}`;
    const envelope = {
      id: out.message.id,
      type: 'conversation.message',
      organizationId: out.orgId,
      projectId: out.projectId,
      at: new Date(out.message.at).toISOString(),
      payload: { message: out.message, conversation: out.conversation },
    };
    const result = await sendSigned({
      url: String(out.inbox.config.url),
      secret: out.inbox.signingSecret ?? '',
      body: JSON.stringify(envelope),
      eventType: 'conversation.message',
      deliveryId,
      allowPrivate: this.env.allowPrivate,
      previewBytes: 2048,
      timeoutMs: this.env.timeoutMs,
    });
    if (result.ok) return { ok: true, externalId: idFromBody(result.responseBodyPreview) ?? deliveryId };
    const status = result.statusCode;
    const retry = status === undefined || status >= 500 || status === 429 || status === 408;
    const answer = result.responseBodyPreview ? `: ${result.responseBodyPreview.slice(0, 500)}` : '';
    const failure: Outcome = { ok: false, retry, error: `${result.error ?? 'delivery failed'}${answer}` };
    const after = retryAfterSeconds(result.retryAfter);
    if (after !== undefined) failure.retryAfterS = after;
    return failure;
  }
}

/** The channels built so far; the others are refused with a clear 422 until they are. */
export function channelAdapters(env: ChannelEnv): Partial<Record<Channel, ChannelAdapter>> {
  return {
    api: new ApiChannel(env),
    whatsapp: new WhatsAppChannel(env),
    telegram: new TelegramChannel(env),
    email: new EmailChannel(env),
    web: new WebChannel(),
  };
}

export function notAvailable(channel: string) {
  return unprocessable('CHANNEL_NOT_AVAILABLE', `the ${channel} channel is not available yet`);
}
