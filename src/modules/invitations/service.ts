import { and, asc, count, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { Role } from '../../platform/context.ts';
import { randomToken, sha256Hex } from '../../platform/crypto.ts';
import { transaction, type Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import { badRequest, conflict, forbidden, notFound, unauthorized } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Config } from '../../config.ts';
import { normalizeEmail } from '../auth/index.ts';
import { assertAcceptablePassword, hashPassword } from '../auth/index.ts';
import type { InvitationPorts, Organization, Tokens, User } from './ports.ts';
import { invitationMail } from './mails.ts';
import { invitations } from './tables.ts';

/** An invitation link is valid this long (CONTRACT §2) and works once. */
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
/** Open invitations an organization may have at once: the list stays a short array. */
export const MAX_OPEN_INVITATIONS = 1000;

type Row = typeof invitations.$inferSelect;

export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  status: 'pending' | 'expired';
  expiresAt: Date;
  invitedBy: string | null;
  createdAt: Date;
}

const INVALID_TOKEN = 'is not a valid invitation: it is unknown, expired (invitations last 7 days), already accepted or revoked; ask for a new one';

/**
 * Invitations to an organization (CONTRACT §2): an owner or admin invites an address with a role;
 * the link, shown to them once and e-mailed when SMTP_URL is set, makes its holder a member. A new
 * address becomes an account (even with sign-up off: the invitation is the permission). An address
 * that already has an account joins only when its owner proves it, by being signed in as that
 * account or by giving its password: the inviter also holds the link, and must not get a session
 * of somebody else's account from it.
 */
export class InvitationsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly log: FastifyBaseLogger;
  private readonly ports: InvitationPorts;

  constructor(deps: Deps, ports: InvitationPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
    this.log = deps.log;
    this.ports = ports;
  }

  /** The organization's open invitations, newest first; accepted ones are members now. */
  async list(orgId: string): Promise<InvitationView[]> {
    const rows = await this.db
      .select()
      .from(invitations)
      .where(and(eq(invitations.orgId, orgId), isNull(invitations.acceptedAt)))
      .orderBy(desc(invitations.createdAt), asc(invitations.id));
    return rows.map((row) => this.view(row));
  }

  /**
   * Invites an address; inviting it again replaces the open invitation's role and link (the earlier
   * link stops working). A member already: 409. `emailed` says whether the relay took the e-mail.
   */
  async create(input: {
    orgId: string;
    invitedBy: string;
    inviterRole: Role | null;
    email: string;
    role: Role;
  }): Promise<InvitationView & { status: 'pending'; url: string; emailed: boolean }> {
    if (input.role === 'owner' && input.inviterRole !== 'owner') throw forbidden('Only an owner can invite another owner');
    const email = normalizeEmail(input.email);
    const existing = await this.ports.auth.findByEmail(email);
    if (existing && (await this.ports.orgs.roleOf(input.orgId, existing.id))) throw conflict(`${email} is already a member of this organization`);
    const plans = this.ports.plans;
    if (plans?.enabled) await transaction(this.db, (tx) => plans.assertRoom(tx, input.orgId, 'members'));
    const now = this.clock.now();
    const [open] = await this.db
      .select({ n: count() })
      .from(invitations)
      .where(and(eq(invitations.orgId, input.orgId), isNull(invitations.acceptedAt)));
    if ((open?.n ?? 0) >= MAX_OPEN_INVITATIONS) {
      const [same] = await this.db
        .select({ id: invitations.id })
        .from(invitations)
        .where(and(eq(invitations.orgId, input.orgId), eq(invitations.email, email), isNull(invitations.acceptedAt)));
      if (!same) throw conflict(`This organization has ${MAX_OPEN_INVITATIONS} open invitations; revoke some first`);
    }
    const token = randomToken(32);
    const values = {
      tokenHash: sha256Hex(token),
      role: input.role,
      invitedBy: input.invitedBy,
      expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
      createdAt: now,
    };
    const [row] = await this.db
      .insert(invitations)
      .values({ id: newId('invitation'), orgId: input.orgId, email, ...values })
      .onConflictDoUpdate({ target: [invitations.orgId, invitations.email], targetWhere: sql`accepted_at is null`, set: values })
      .returning();
    const url = `${this.config.publicUrl}/accept-invitation?token=${encodeURIComponent(token)}`;
    return { ...this.view(row!), status: 'pending', url, emailed: await this.email(row!, url) };
  }

  /** Revokes an open invitation: its link stops working. */
  async revoke(orgId: string, id: string): Promise<void> {
    const deleted = await this.db
      .delete(invitations)
      .where(and(eq(invitations.orgId, orgId), eq(invitations.id, id), isNull(invitations.acceptedAt)))
      .returning({ id: invitations.id });
    if (deleted.length === 0) throw notFound('Invitation');
  }

  /**
   * Accepts an invitation: the account of its address (created with `password` and `name` when the
   * address is new) becomes a member with the invited role, and gets a new session. `signedInAs` is
   * the user of the request's access token, if any.
   */
  async accept(
    input: { token: string; password?: string; name?: string },
    signedInAs: string | null,
  ): Promise<{ user: User; organization: Organization; tokens: Tokens }> {
    const now = this.clock.now();
    const [invitation] = await this.db
      .select()
      .from(invitations)
      .where(eq(invitations.tokenHash, sha256Hex(input.token)));
    if (!invitation || invitation.acceptedAt || invitation.expiresAt.getTime() <= now.getTime()) {
      throw badRequest(`body.token ${INVALID_TOKEN}`, [{ field: 'body.token', message: INVALID_TOKEN }]);
    }
    const existing = await this.ports.auth.findByEmail(invitation.email);
    let passwordHash: string | null = null;
    if (existing) {
      await this.assertOwnerOf(existing, input.password, signedInAs);
    } else {
      if (input.password === undefined) {
        const message = `is required: the invitation creates the account ${invitation.email}`;
        throw badRequest(`body.password ${message}`, [{ field: 'body.password', message }]);
      }
      assertAcceptablePassword(input.password, 'body.password');
      passwordHash = await hashPassword(input.password);
    }
    const user = await transaction(this.db, async (tx) => {
      const member = existing ?? (await this.ports.auth.insertUser(tx, { email: invitation.email, passwordHash: passwordHash!, name: input.name }));
      if (!member) throw conflict(`An account for ${invitation.email} was created meanwhile; sign in as it and accept the invitation again`);
      const claimed = await tx
        .update(invitations)
        .set({ acceptedAt: now, acceptedBy: member.id })
        .where(and(eq(invitations.id, invitation.id), isNull(invitations.acceptedAt), gt(invitations.expiresAt, now)))
        .returning({ id: invitations.id });
      if (claimed.length === 0) throw badRequest(`body.token ${INVALID_TOKEN}`, [{ field: 'body.token', message: INVALID_TOKEN }]);
      await this.ports.orgs.addMembership(tx, invitation.orgId, member.id, invitation.role as Role);
      return member;
    });
    return { user, organization: await this.ports.orgs.get(invitation.orgId), tokens: await this.ports.auth.startSession(user.id) };
  }

  /** The holder of the link must also be the account's owner: its session, or its password. */
  private async assertOwnerOf(user: User, password: string | undefined, signedInAs: string | null): Promise<void> {
    if (password !== undefined) {
      if (await this.ports.auth.checkPassword(user, password)) return;
      throw unauthorized(`The password is not that of the account ${user.email}`);
    }
    if (signedInAs === user.id) return;
    if (signedInAs) throw forbidden(`This invitation is for ${user.email}, and you are signed in as another account`);
    throw unauthorized(`This invitation is for the existing account ${user.email}: sign in as it (Authorization: Bearer) or send its password`);
  }

  private view(row: Row): InvitationView {
    return {
      id: row.id,
      email: row.email,
      role: row.role as Role,
      status: row.expiresAt.getTime() <= this.clock.now().getTime() ? 'expired' : 'pending',
      expiresAt: row.expiresAt,
      invitedBy: row.invitedBy,
      createdAt: row.createdAt,
    };
  }

  /** E-mails the link when a relay is configured; a failure is logged and reported as `emailed: false`, the link is in the answer anyway. */
  private async email(row: Row, url: string): Promise<boolean> {
    if (!this.ports.mailer.enabled) return false;
    try {
      const [organization, inviter] = await Promise.all([this.ports.orgs.get(row.orgId), row.invitedBy ? this.ports.auth.getUser(row.invitedBy) : undefined]);
      await this.ports.mailer.send(
        invitationMail({
          to: row.email,
          url,
          organizationName: organization.name,
          role: row.role,
          inviter: inviter?.name ?? inviter?.email ?? null,
          expiresAt: row.expiresAt,
          publicUrl: this.config.publicUrl,
        }),
      );
      return true;
    } catch (error) {
      this.log.warn({ mail: 'invitation', invitationId: row.id, err: error }, 'invitation e-mail not sent');
      return false;
    }
  }
}
