import { and, eq, isNull } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import { AppError, conflict, unauthorized } from '../../platform/errors.ts';
import { randomToken, sha256Hex } from '../../platform/crypto.ts';
import { newId } from '../../platform/ids.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import type { OrgsService } from '../orgs/service.ts';
import { AccessTokens } from './access-tokens.ts';
import { assertAcceptablePassword, hashPassword, verifyNothing, verifyPassword } from './passwords.ts';
import { refreshTokens, users } from './tables.ts';

export type User = typeof users.$inferSelect;

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

export function publicUser(user: User) {
  return { id: user.id, email: user.email, name: user.name, createdAt: user.createdAt };
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** Users, passwords, sessions: access tokens plus rotating refresh tokens with reuse detection. */
export class AuthService {
  readonly accessTokens: AccessTokens;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly orgs: OrgsService;

  constructor(deps: Deps, orgs: OrgsService) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
    this.orgs = orgs;
    this.accessTokens = new AccessTokens(deps.config.appSecret, deps.config.accessTokenTtlS);
  }

  /** A user with their own organization (the first owner, the CLI, signup). */
  async createUserWithOrg(input: { email: string; password: string; name?: string; organizationName?: string }) {
    assertAcceptablePassword(input.password);
    const email = normalizeEmail(input.email);
    const passwordHash = await hashPassword(input.password);
    return this.db.transaction(async (tx) => {
      const inserted = await tx
        .insert(users)
        .values({ id: newId('user'), email, name: input.name ?? null, passwordHash })
        .onConflictDoNothing()
        .returning();
      if (inserted.length === 0) throw conflict('An account with this email already exists');
      const user = inserted[0]!;
      const organization = await this.orgs.create(tx as unknown as Db, {
        name: input.organizationName ?? (input.name ? `${input.name}'s organization` : 'My organization'),
        ownerUserId: user.id,
      });
      return { user, organization };
    });
  }

  async findByEmail(email: string): Promise<User | undefined> {
    const [user] = await this.db.select().from(users).where(eq(users.email, normalizeEmail(email)));
    return user;
  }

  async getUser(userId: string): Promise<User | undefined> {
    const [user] = await this.db.select().from(users).where(eq(users.id, userId));
    return user;
  }

  async register(input: { email: string; password: string; name?: string; organizationName?: string }) {
    if (!this.config.allowSignup) throw new AppError(403, 'FORBIDDEN', 'Sign-up is disabled on this server');
    const { user, organization } = await this.createUserWithOrg(input);
    return { user: publicUser(user), organization, tokens: await this.issue(user.id, newId('refreshToken')) };
  }

  async login(email: string, password: string) {
    const user = await this.findByEmail(email);
    const ok = user ? await verifyPassword(user.passwordHash, password) : await verifyNothing(password);
    if (!user || !ok) throw unauthorized('Email or password is incorrect');
    return { user: publicUser(user), tokens: await this.issue(user.id, newId('refreshToken')) };
  }

  /**
   * Each refresh token is single-use. Presenting one that was already used means it leaked:
   * the whole family (that login's chain of tokens) is revoked.
   */
  async refresh(token: string): Promise<Tokens> {
    const now = this.clock.now();
    const hash = sha256Hex(token);
    const claimed = await this.db
      .update(refreshTokens)
      .set({ usedAt: now })
      .where(and(eq(refreshTokens.tokenHash, hash), isNull(refreshTokens.usedAt), isNull(refreshTokens.revokedAt)))
      .returning();
    const row = claimed[0];
    if (!row) {
      const [known] = await this.db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, hash));
      if (known) {
        await this.db.update(refreshTokens).set({ revokedAt: now }).where(and(eq(refreshTokens.familyId, known.familyId), isNull(refreshTokens.revokedAt)));
      }
      throw unauthorized('Refresh token is invalid, expired or already used');
    }
    if (row.expiresAt.getTime() <= now.getTime()) throw unauthorized('Refresh token is invalid, expired or already used');
    return this.issue(row.userId, row.familyId);
  }

  async logout(token: string): Promise<void> {
    const [row] = await this.db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, sha256Hex(token)));
    if (row) {
      await this.db.update(refreshTokens).set({ revokedAt: this.clock.now() }).where(and(eq(refreshTokens.familyId, row.familyId), isNull(refreshTokens.revokedAt)));
    }
  }

  private async issue(userId: string, familyId: string): Promise<Tokens> {
    const now = this.clock.now();
    const refreshToken = randomToken(32);
    await this.db.insert(refreshTokens).values({
      id: newId('refreshToken'),
      userId,
      familyId,
      tokenHash: sha256Hex(refreshToken),
      expiresAt: new Date(now.getTime() + this.config.refreshTokenTtlS * 1000),
    });
    return { accessToken: await this.accessTokens.sign(userId, now), refreshToken, expiresIn: this.accessTokens.ttl };
  }
}
