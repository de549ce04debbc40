import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Db } from '../../platform/db.ts';
import { AppError, badRequest, conflict, unauthorized } from '../../platform/errors.ts';
import { randomToken, sha256Hex } from '../../platform/crypto.ts';
import { newId } from '../../platform/ids.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import type { AuthOrgsPort, AuthPorts, MailPort } from './ports.ts';
import { AccessTokens } from './access-tokens.ts';
import { assertAcceptablePassword, hashPassword, verifyNothing, verifyPassword } from './passwords.ts';
import { passwordResets, refreshTokens, users } from './tables.ts';
import { passwordResetMail } from './mails.ts';

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

/** A password-reset link is valid this long (and works once). */
export const PASSWORD_RESET_TTL_MS = 60 * 60 * 1000;
/** At most one reset e-mail per account this often, however often it is asked for. */
const PASSWORD_RESET_THROTTLE_MS = 60 * 1000;

/** Users, passwords, sessions: access tokens plus rotating refresh tokens with reuse detection. */
export class AuthService {
  readonly accessTokens: AccessTokens;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly orgs: AuthOrgsPort;
  private readonly mail: MailPort;

  constructor(deps: Deps, ports: AuthPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
    this.orgs = ports.orgs;
    this.mail = ports.mail;
    this.accessTokens = new AccessTokens(deps.config.appSecret, deps.config.accessTokenTtlS);
  }

  /** A user with their own organization (the first owner, the CLI, signup). */
  async createUserWithOrg(input: { email: string; password: string; name?: string; organizationName?: string }) {
    assertAcceptablePassword(input.password);
    const email = normalizeEmail(input.email);
    const passwordHash = await hashPassword(input.password);
    return transaction(this.db, async (tx) => {
      const inserted = await tx
        .insert(users)
        .values({ id: newId('user'), email, name: input.name ?? null, passwordHash })
        .onConflictDoNothing()
        .returning();
      if (inserted.length === 0) throw conflict('An account with this email already exists');
      const user = inserted[0]!;
      const organization = await this.orgs.create(tx, {
        name: input.organizationName ?? (input.name ? `${input.name}'s organization` : 'My organization'),
        ownerUserId: user.id,
      });
      return { user, organization };
    });
  }

  /**
   * A new user without an organization, in the caller's transaction (an invitation being accepted);
   * null when the address is taken. The password is checked (400) and hashed by the caller first,
   * outside the transaction: hashing takes a while.
   */
  async insertUser(tx: Db, input: { email: string; passwordHash: string; name?: string | null }): Promise<User | null> {
    const [user] = await tx
      .insert(users)
      .values({ id: newId('user'), email: normalizeEmail(input.email), name: input.name ?? null, passwordHash: input.passwordHash })
      .onConflictDoNothing()
      .returning();
    return user ?? null;
  }

  /** Whether `password` is the user's; spends the same time whether or not the user exists. */
  async checkPassword(user: User | undefined, password: string): Promise<boolean> {
    return user ? verifyPassword(user.passwordHash, password) : verifyNothing(password);
  }

  /** A new session (a new refresh-token family) for a user who proved who they are. */
  startSession(userId: string): Promise<Tokens> {
    return this.issue(userId, newId('refreshToken'));
  }

  async findByEmail(email: string): Promise<User | undefined> {
    const [user] = await this.db
      .select()
      .from(users)
      .where(eq(users.email, normalizeEmail(email)));
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
        await this.db
          .update(refreshTokens)
          .set({ revokedAt: now })
          .where(and(eq(refreshTokens.familyId, known.familyId), isNull(refreshTokens.revokedAt)));
      }
      throw unauthorized('Refresh token is invalid, expired or already used');
    }
    if (row.expiresAt.getTime() <= now.getTime()) throw unauthorized('Refresh token is invalid, expired or already used');
    return this.issue(row.userId, row.familyId);
  }

  async logout(token: string): Promise<void> {
    const [row] = await this.db
      .select()
      .from(refreshTokens)
      .where(eq(refreshTokens.tokenHash, sha256Hex(token)));
    if (row) {
      await this.db
        .update(refreshTokens)
        .set({ revokedAt: this.clock.now() })
        .where(and(eq(refreshTokens.familyId, row.familyId), isNull(refreshTokens.revokedAt)));
    }
  }

  /**
   * CONTRACT §2: the current password, then a new acceptable one (400 VALIDATION_ERROR naming the
   * field otherwise; a wrong current password is a 400 on `body.currentPassword`, not a 401, which
   * would tell a client its access token failed). Every session of the user ends.
   */
  async changePassword(userId: string, currentPassword: string, newPassword: string): Promise<void> {
    assertAcceptablePassword(newPassword, 'body.newPassword');
    const user = await this.getUser(userId);
    if (!user) throw unauthorized('This account no longer exists');
    if (!(await verifyPassword(user.passwordHash, currentPassword))) {
      throw badRequest('body.currentPassword is not the current password', [{ field: 'body.currentPassword', message: 'is not the current password' }]);
    }
    if (newPassword === currentPassword) {
      throw badRequest('body.newPassword must differ from the current password', [
        { field: 'body.newPassword', message: 'must differ from the current password' },
      ]);
    }
    const passwordHash = await hashPassword(newPassword);
    await transaction(this.db, (tx) => this.setPassword(tx, userId, passwordHash));
  }

  /**
   * Always the same answer, whether or not the address has an account (the route says 202): a
   * known address gets a single-use link valid one hour, e-mailed in the background so that the
   * answer does not wait on the relay. Without SMTP_URL no link is made: nobody could receive it.
   */
  async requestPasswordReset(email: string): Promise<void> {
    if (!this.mail.enabled) return;
    const now = this.clock.now();
    const user = await this.findByEmail(email);
    if (!user) return;
    const [recent] = await this.db
      .select({ id: passwordResets.id })
      .from(passwordResets)
      .where(and(eq(passwordResets.userId, user.id), gt(passwordResets.createdAt, new Date(now.getTime() - PASSWORD_RESET_THROTTLE_MS))))
      .limit(1);
    if (recent) return;
    const token = randomToken(32);
    await this.db.insert(passwordResets).values({
      id: newId('passwordReset'),
      userId: user.id,
      tokenHash: sha256Hex(token),
      createdAt: now,
      expiresAt: new Date(now.getTime() + PASSWORD_RESET_TTL_MS),
    });
    const link = `${this.config.publicUrl}/reset-password?token=${encodeURIComponent(token)}`;
    this.mail.sendInBackground(passwordResetMail({ to: user.email, link, publicUrl: this.config.publicUrl }), 'password-reset');
  }

  /** Sets the password through a reset link (used once, within the hour); every session of the user ends. */
  async confirmPasswordReset(token: string, newPassword: string): Promise<void> {
    assertAcceptablePassword(newPassword, 'body.newPassword');
    const passwordHash = await hashPassword(newPassword);
    const now = this.clock.now();
    await transaction(this.db, async (tx) => {
      const [reset] = await tx
        .update(passwordResets)
        .set({ usedAt: now })
        .where(and(eq(passwordResets.tokenHash, sha256Hex(token)), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, now)))
        .returning({ userId: passwordResets.userId });
      if (!reset) {
        const message = 'is not a valid password-reset token: it is unknown, expired (links last one hour) or already used; ask for a new link';
        throw badRequest(`body.token ${message}`, [{ field: 'body.token', message }]);
      }
      await this.setPassword(tx, reset.userId, passwordHash);
    });
  }

  /** A new password hash; ends every session of the user and voids their open reset links. */
  private async setPassword(db: Db, userId: string, passwordHash: string): Promise<void> {
    const now = this.clock.now();
    await db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, userId));
    await db
      .update(refreshTokens)
      .set({ revokedAt: now })
      .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)));
    await db
      .update(passwordResets)
      .set({ usedAt: now })
      .where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)));
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
