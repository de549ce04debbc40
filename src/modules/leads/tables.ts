import { sql } from 'drizzle-orm';
import { doublePrecision, foreignKey, index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from '../../platform/columns.ts';
import { projects } from '../orgs/tables.ts';

/*
 * The columns in the order they are stored (migration 0029): a search or filter reads a row's
 * columns from the first up to the last it needs, so what the ranked lists read (the id, the
 * organization, the creation time, the search text, then the filters) comes first. With `search`
 * last, reading ten thousand matches of a word spent a fifth of its time stepping over the others.
 */
export const leads = pgTable(
  'leads',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    createdAt: createdAt(),
    /**
     * The text `q` searches: name, e-mail, company, website and phone, lower-cased, kept by the
     * database. One trigram index on it serves a substring match over all five, and checking a row
     * against the pattern is a plain LIKE on stored text (a quarter of the time of joining the fields
     * and matching case-insensitively per row, which a broad search does ten thousand times). A newline
     * separates the fields so a match does not run from one into the next.
     */
    search: text('search').generatedAlwaysAs(
      sql`lower(coalesce(name, '') || E'\\n' || coalesce(email, '') || E'\\n' || coalesce(company, '') || E'\\n' || coalesce(website, '') || E'\\n' || coalesce(phone, ''))`,
    ),
    projectId: text('project_id').notNull(),
    status: text('status').notNull().default('NEW'),
    /** 0 until something scores the lead (CONTRACT §3). */
    score: doublePrecision('score').notNull().default(0),
    source: text('source'),
    updatedAt: updatedAt(),
    name: text('name'),
    email: text('email'),
    phone: text('phone'),
    company: text('company'),
    website: text('website'),
    scoreReason: text('score_reason'),
    tags: text('tags').array().notNull().default([]),
    custom: jsonb('custom').$type<Record<string, unknown>>().notNull().default({}),
    // De-duplication keys: email trimmed and lower-cased, phone in E.164, website host without www.
    emailKey: text('email_key'),
    phoneKey: text('phone_key'),
    websiteKey: text('website_key'),
  },
  (t) => [
    // One key for both: the project exists and belongs to the lead's organization (whose deletion
    // removes its projects and so its leads). One check per insert, not two on the same hot rows.
    foreignKey({ name: 'leads_project_fk', columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete('cascade'),
    // Only leads carrying the key are indexed: many have no phone or website, and a match always names a value.
    index('leads_project_email_idx')
      .on(t.projectId, t.emailKey)
      .where(sql`${t.emailKey} is not null`),
    index('leads_project_phone_idx')
      .on(t.projectId, t.phoneKey)
      .where(sql`${t.phoneKey} is not null`),
    index('leads_project_website_idx')
      .on(t.projectId, t.websiteKey)
      .where(sql`${t.websiteKey} is not null`),
    // The filters and the search in one GIN index (btree_gin for the scalar columns): GIN serves any
    // subset of its columns equally, so status + tag or a search + status intersect in the index
    // instead of in two bitmaps of a hundred thousand rows each.
    index('leads_filter_idx').using('gin', t.status, t.source, t.score, t.tags, t.search.op('gin_trgm_ops')),
    // The list's orders, each (org_id, field, created_at, id) as the list sorts (list-planner.ts leadOrder),
    // so that a page of a million leads stops after the page, whether sorted by the field or filtered
    // on one status or source and read newest first.
    index('leads_org_created_idx').on(t.orgId, t.createdAt, t.id),
    index('leads_org_updated_idx').on(t.orgId, t.updatedAt, t.createdAt, t.id),
    index('leads_org_name_idx').on(t.orgId, t.name, t.createdAt, t.id),
    index('leads_org_company_idx').on(t.orgId, t.company, t.createdAt, t.id),
    index('leads_org_status_idx').on(t.orgId, t.status, t.createdAt, t.id),
    index('leads_org_score_idx').on(t.orgId, t.score, t.createdAt, t.id),
    index('leads_org_source_idx').on(t.orgId, t.source, t.createdAt, t.id),
  ],
);

/**
 * De-duplication keys someone has claimed in a project. Its primary key makes two concurrent creates
 * of one person meet in the database: the second waits for the first and then finds the key taken.
 * Every key a lead carries has a claim (each write claims its lead's keys; a delete hands its claims
 * to another lead carrying the key), so a free claim means a new person. A claim may outlive the
 * value it was made for: it only gates the fast path; matching itself reads the leads.
 */
export const leadKeys = pgTable(
  'lead_keys',
  {
    projectId: text('project_id').notNull(),
    kind: text('kind').notNull(),
    key: text('key').notNull(),
    orgId: text('org_id').notNull(),
    leadId: text('lead_id')
      .notNull()
      .references(() => leads.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.kind, t.key] }), index('lead_keys_lead_idx').on(t.leadId)],
);
