import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from '../../platform/columns.ts';
import { users } from '../auth/tables.ts';
import { organizations } from '../orgs/tables.ts';

/**
 * Invitations to an organization. Only the SHA-256 of the token is stored; the link carrying it is
 * shown once, to the inviter, and e-mailed. One open invitation per address and organization:
 * inviting the address again replaces its token (the earlier link stops working). Revoking deletes.
 */
export const invitations = pgTable(
  'invitations',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** Lower-cased and trimmed, as users' addresses are. */
    email: text('email').notNull(),
    role: text('role').notNull(),
    tokenHash: text('token_hash').notNull(),
    invitedBy: text('invited_by').references(() => users.id, { onDelete: 'set null' }),
    expiresAt: ts('expires_at').notNull(),
    acceptedAt: ts('accepted_at'),
    acceptedBy: text('accepted_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('invitations_hash_uq').on(t.tokenHash),
    uniqueIndex('invitations_open_uq')
      .on(t.orgId, t.email)
      .where(sql`accepted_at is null`),
    index('invitations_org_idx').on(t.orgId, t.createdAt),
  ],
);
