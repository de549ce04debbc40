import { bigint, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt } from '../../platform/columns.ts';
import { organizations } from '../orgs/tables.ts';

/** An uploaded image or video; the bytes live under DATA_DIR/media/<orgId>/<id>. */
export const media = pgTable(
  'media',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    projectId: text('project_id'),
    filename: text('filename').notNull(),
    /** Sniffed from the bytes, never taken from the client. */
    contentType: text('content_type').notNull(),
    extension: text('extension').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    sha256: text('sha256').notNull(),
    createdBy: jsonb('created_by').$type<{ type: string; id: string }>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('media_org_idx').on(t.orgId, t.id)],
);
