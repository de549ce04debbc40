import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, ts, updatedAt } from '../../platform/columns.ts';
import { organizations } from '../orgs/tables.ts';

/** A connected social account. Credentials are sealed with SecretBox and never leave the service. */
export const integrations = pgTable('integrations', {
  id: text('id').primaryKey(),
  orgId: text('org_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  projectId: text('project_id'),
  provider: text('provider').notNull(),
  name: text('name').notNull(),
  credentialsSealed: text('credentials_sealed').notNull(),
  /** `connected`, or `error` after an authentication failure (re-authorization needed). */
  status: text('status').notNull().default('connected'),
  lastError: jsonb('last_error').$type<{ code: string; message: string; at: string } | null>(),
  errorAt: ts('error_at'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
}, (t) => [index('integrations_org_idx').on(t.orgId, t.id)]);
