import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, ts, updatedAt } from '../../platform/columns.ts';
import { organizations } from '../orgs/tables.ts';

/**
 * A connected account: `linkedin` and `x` (publishing), `google` (analytics). Credentials are sealed
 * with SecretBox and never leave the service: a pasted token, or an OAuth connection's tokens
 * (`{ accessToken, refreshToken?, expiresAt?, scope? }`). `config` is what the user chose after
 * connecting (google: `propertyId` for GA4, `siteUrl` for Search Console).
 */
export const integrations = pgTable(
  'integrations',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    projectId: text('project_id'),
    provider: text('provider').notNull(),
    name: text('name').notNull(),
    credentialsSealed: text('credentials_sealed').notNull(),
    /** `connected`, or `error` after an authentication failure (re-authorization needed). */
    status: text('status').notNull().default('connected'),
    lastError: jsonb('last_error').$type<{ code: string; message: string; at: string } | null>(),
    errorAt: ts('error_at'),
    config: jsonb('config').$type<Record<string, string>>().notNull().default({}),
    /** How it was connected: `token` (pasted) or `oauth`. */
    authType: text('auth_type').notNull().default('token'),
    /** When the sealed access token expires (OAuth); refreshed before it does. */
    tokenExpiresAt: ts('token_expires_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('integrations_org_idx').on(t.orgId, t.id)],
);

/**
 * One authorization in progress (CONTRACT §10): the `state` sent to the provider (stored as its
 * hash), the hash of the secret in the starting browser's cookie (flow-cookie.ts), the PKCE verifier
 * (sealed), and what to do on return. Single-use (deleted when consumed), expires in 10 minutes.
 */
export const oauthStates = pgTable(
  'oauth_states',
  {
    stateHash: text('state_hash').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    projectId: text('project_id'),
    /** Who started it: `user:<id>` or `apikey:<id>`. */
    actor: text('actor').notNull(),
    provider: text('provider').notNull(),
    name: text('name'),
    returnTo: text('return_to'),
    /** Reconnect: the integration whose id and posts are kept. */
    integrationId: text('integration_id'),
    verifierSealed: text('verifier_sealed').notNull(),
    /** sha256 of the flow cookie's secret: only the browser that started the flow completes it. */
    browserHash: text('browser_hash').notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('oauth_states_expires_idx').on(t.expiresAt)],
);
