import { jwtVerify, SignJWT } from 'jose';
import { deriveKey } from '../../platform/crypto.ts';

/** Short-lived HS256 access tokens; the key is derived from APP_SECRET. */
export class AccessTokens {
  private readonly key: Uint8Array;
  private readonly ttlS: number;

  constructor(appSecret: string, ttlS: number) {
    this.key = new Uint8Array(deriveKey(appSecret, 'access-token'));
    this.ttlS = ttlS;
  }

  get ttl(): number {
    return this.ttlS;
  }

  async sign(userId: string, now: Date): Promise<string> {
    const iat = Math.floor(now.getTime() / 1000);
    return new SignJWT({ typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlS)
      .sign(this.key);
  }

  /** The user id, or null for anything invalid or expired; a token without `exp` would never expire, so it is invalid too. */
  async verify(token: string, now: Date): Promise<string | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], currentDate: now, requiredClaims: ['exp', 'sub'] });
      if (payload.typ !== 'access' || typeof payload.sub !== 'string') return null;
      return payload.sub;
    } catch {
      return null;
    }
  }
}
