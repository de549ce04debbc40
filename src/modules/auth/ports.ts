import type { Db } from '../../platform/db.ts';
import type { ApiKeyPrincipal, Role } from '../../platform/context.ts';
import type { MailMessage } from '../../platform/mail.ts';
import type { AccessTokens } from './access-tokens.ts';

/** What the auth module needs of others, handed in by services.ts. */

/** An organization as the orgs module creates it: auth hands it back to the client that registered. */
export interface CreatedOrganization {
  id: string;
  name: string;
}

/** The orgs module: the organization a new account starts with, and a member's role (the guard). */
export interface AuthOrgsPort {
  /** In the registering transaction: the organization, owned by `ownerUserId`. */
  create(tx: Db, input: { name: string; ownerUserId: string }): Promise<CreatedOrganization>;
  /** The user's role in the organization; null when not a member. */
  roleOf(orgId: string, userId: string): Promise<Role | null>;
}

/** The api-keys module: the principal of a presented key (null: unknown, revoked or expired). */
export interface ApiKeysPort {
  authenticate(key: string): Promise<ApiKeyPrincipal | null>;
}

/** What sending mail takes: `Mailer` (platform/mail.ts) in the service, anything alike in tests. */
export interface MailPort {
  /** Whether SMTP_URL is set. */
  readonly enabled: boolean;
  /** Sends without the caller waiting; a failure is logged, never thrown. */
  sendInBackground(message: MailMessage, what: string): void;
}

/** The ports of AuthService. */
export interface AuthPorts {
  orgs: AuthOrgsPort;
  mail: MailPort;
}

/** The ports of the Guard: the module's own access tokens (AuthService's), API keys, and members' roles. */
export interface GuardPorts {
  auth: { readonly accessTokens: AccessTokens };
  apiKeys: ApiKeysPort;
  orgs: AuthOrgsPort;
}
