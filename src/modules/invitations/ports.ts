import type { Db } from '../../platform/db.ts';
import type { Role } from '../../platform/context.ts';
import type { Mailer } from '../../platform/mail.ts';
import type { Tokens, User } from '../auth/index.ts';
import type { Organization } from '../orgs/index.ts';

/**
 * What the invitations module uses of other modules, as interfaces: services.ts hands in the real
 * ones (auth's accounts and sessions, orgs' memberships, the mailer, plans).
 */

export type { Organization, Tokens, User };

/** The auth module: the invited address's account, a new one, its password, a session for it. */
export interface AuthPort {
  findByEmail(email: string): Promise<User | undefined>;
  getUser(userId: string): Promise<User | undefined>;
  /**
   * A new user without an organization, in the caller's transaction (an invitation being accepted);
   * null when the address is taken. The password is checked (400) and hashed by the caller first.
   */
  insertUser(tx: Db, input: { email: string; passwordHash: string; name?: string | null }): Promise<User | null>;
  /** Whether `password` is the user's; spends the same time whether or not the user exists. */
  checkPassword(user: User | undefined, password: string): Promise<boolean>;
  startSession(userId: string): Promise<Tokens>;
}

/** The orgs module: the organization invited to, who is a member, a new membership. */
export interface OrgsPort {
  get(orgId: string): Promise<Organization>;
  /** The user's role in the organization; null when not a member. */
  roleOf(orgId: string, userId: string): Promise<Role | null>;
  /** Makes a user a member in the caller's transaction; false when they already were (their role is kept). */
  addMembership(tx: Db, orgId: string, userId: string, role: Role): Promise<boolean>;
}

/** The plan's members limit (CONTRACT §12): no invitation while the organization is full; the accept checks again. */
export interface PlansPort {
  readonly enabled: boolean;
  /** In the caller's transaction: 429 PLAN_LIMIT when one more member would pass the limit (holds a lock until it ends). */
  assertRoom(tx: Db, orgId: string, limit: 'members', adding?: number): Promise<void>;
}

export interface InvitationPorts {
  auth: AuthPort;
  orgs: OrgsPort;
  mailer: Pick<Mailer, 'enabled' | 'send'>;
  plans?: PlansPort;
}
