import { sql, type SQL } from 'drizzle-orm';
import { doublePrecision, foreignKey, index, jsonb, pgTable, primaryKey, text, type AnyPgColumn } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from '../../platform/columns.ts';
import { projects } from '../orgs/tables.ts';

/**
 * The text `q` searches (name, e-mail, company, website, phone), one expression so that one trigram
 * index serves a case-insensitive substring match over all five. The list query repeats it exactly
 * (PostgreSQL uses an expression index only for the same expression); a newline separates the
 * fields so a match does not run from one into the next.
 */
export function searchText(t: { name: AnyPgColumn; email: AnyPgColumn; company: AnyPgColumn; website: AnyPgColumn; phone: AnyPgColumn }): SQL {
  return sql`(coalesce(${t.name}, '') || E'\\n' || coalesce(${t.email}, '') || E'\\n' || coalesce(${t.company}, '') || E'\\n' || coalesce(${t.website}, '') || E'\\n' || coalesce(${t.phone}, ''))`;
}

export const leads = pgTable('leads', {
  id: text('id').primaryKey(),
  orgId: text('org_id').notNull(),
  projectId: text('project_id').notNull(),
  name: text('name'),
  email: text('email'),
  phone: text('phone'),
  company: text('company'),
  website: text('website'),
  source: text('source'),
  status: text('status').notNull().default('NEW'),
  /** 0 until something scores the lead (CONTRACT §3). */
  score: doublePrecision('score').notNull().default(0),
  scoreReason: text('score_reason'),
  tags: text('tags').array().notNull().default([]),
  custom: jsonb('custom').$type<Record<string, unknown>>().notNull().default({}),
  // De-duplication keys: email trimmed and lower-cased, phone in E.164, website host without www.
  emailKey: text('email_key'),
  phoneKey: text('phone_key'),
  websiteKey: text('website_key'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
}, (t) => [
  // One key for both: the project exists and belongs to the lead's organization (whose deletion
  // removes its projects and so its leads). One check per insert, not two on the same hot rows.
  foreignKey({ name: 'leads_project_fk', columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete('cascade'),
  index('leads_org_created_idx').on(t.orgId, t.createdAt),
  // Only leads carrying the key are indexed: many have no phone or website, and a match always names a value.
  index('leads_project_email_idx').on(t.projectId, t.emailKey).where(sql`${t.emailKey} is not null`),
  index('leads_project_phone_idx').on(t.projectId, t.phoneKey).where(sql`${t.phoneKey} is not null`),
  index('leads_project_website_idx').on(t.projectId, t.websiteKey).where(sql`${t.websiteKey} is not null`),
  index('leads_org_status_idx').on(t.orgId, t.status),
  index('leads_tags_idx').using('gin', t.tags),
  // Search and the filters that can be selective, so a list at a million leads reads only its matches.
  index('leads_search_idx').using('gin', sql`${searchText(t)} gin_trgm_ops`),
  index('leads_org_source_idx').on(t.orgId, t.source),
  index('leads_org_score_idx').on(t.orgId, t.score),
]);

/**
 * De-duplication keys someone has claimed in a project. Its primary key makes two concurrent creates
 * of one person meet in the database: the second waits for the first and then finds the key taken.
 * Every key a lead carries has a claim (each write claims its lead's keys; a delete hands its claims
 * to another lead carrying the key), so a free claim means a new person. A claim may outlive the
 * value it was made for: it only gates the fast path; matching itself reads the leads.
 */
export const leadKeys = pgTable('lead_keys', {
  projectId: text('project_id').notNull(),
  kind: text('kind').notNull(),
  key: text('key').notNull(),
  orgId: text('org_id').notNull(),
  leadId: text('lead_id').notNull().references(() => leads.id, { onDelete: 'cascade' }),
}, (t) => [primaryKey({ columns: [t.projectId, t.kind, t.key] }), index('lead_keys_lead_idx').on(t.leadId)]);
