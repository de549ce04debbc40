import { createHmac } from 'node:crypto';
import { deriveKey, safeEqual } from '../../platform/crypto.ts';

/** An address as campaigns keep it: e-mail lower-cased, a phone number's digits (and +), anything else trimmed. */
export const normalAddress = (channel: string, address: string) => {
  const a = address.trim();
  return channel === 'email' ? a.toLowerCase() : channel === 'whatsapp' ? a.replace(/[^\d+]/g, '') : a;
};

/**
 * One-click unsubscribe links (CONTRACT §9, RFC 8058): a token names (organization, channel,
 * address) with their HMAC, so nothing else is needed to honour it. Pure: made once in services.ts
 * and handed to both users, the campaigns' e-mail footer and the conversations sender's
 * List-Unsubscribe header, so the two links are one.
 */
export class UnsubscribeLinks {
  private readonly key: Buffer;
  private readonly publicUrl: string;

  constructor(config: { appSecret: string; publicUrl: string }) {
    this.key = deriveKey(config.appSecret, 'unsubscribe');
    this.publicUrl = config.publicUrl;
  }

  /** The token of one address: (organization, channel, address) and their HMAC; nothing else is needed to honour it. */
  token(orgId: string, channel: string, address: string): string {
    const payload = Buffer.from([orgId, channel, normalAddress(channel, address)].join('\n')).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  url(orgId: string, channel: string, address: string): string {
    return `${this.publicUrl}/api/v1/unsubscribe/${this.token(orgId, channel, address)}`;
  }

  /** What a token names, or null when it is not one of ours (fails closed). */
  read(token: string): { orgId: string; channel: string; address: string } | null {
    const [payload, mac] = token.split('.');
    if (!payload || !mac || token.length > 2000) return null;
    if (!safeEqual(this.mac(payload), mac)) return null;
    const [orgId, channel, address, extra] = Buffer.from(payload, 'base64url').toString('utf8').split('\n');
    return orgId && channel && address && extra === undefined ? { orgId, channel, address } : null;
  }

  /** 128 bits of the HMAC-SHA256 of a token's payload, base64url. */
  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, 16).toString('base64url');
  }
}
