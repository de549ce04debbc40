-- btree_gin lets the scalar filters share the GIN index with tags and the trigram search (PGlite loads it too: platform/db.ts).
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
DROP INDEX "leads_tags_idx";--> statement-breakpoint
DROP INDEX "leads_search_idx";--> statement-breakpoint
DROP INDEX "leads_org_created_idx";--> statement-breakpoint
DROP INDEX "leads_org_status_idx";--> statement-breakpoint
DROP INDEX "leads_org_score_idx";--> statement-breakpoint
ALTER TABLE "leads" ADD COLUMN "search" text GENERATED ALWAYS AS (lower(coalesce(name, '') || E'\n' || coalesce(email, '') || E'\n' || coalesce(company, '') || E'\n' || coalesce(website, '') || E'\n' || coalesce(phone, ''))) STORED;--> statement-breakpoint
CREATE INDEX "leads_filter_idx" ON "leads" USING gin ("status","source","score","tags","search" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "leads_org_updated_idx" ON "leads" USING btree ("org_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "leads_org_name_idx" ON "leads" USING btree ("org_id","name","id");--> statement-breakpoint
CREATE INDEX "leads_org_company_idx" ON "leads" USING btree ("org_id","company","id");--> statement-breakpoint
CREATE INDEX "leads_org_created_idx" ON "leads" USING btree ("org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_org_status_idx" ON "leads" USING btree ("org_id","status","id");--> statement-breakpoint
CREATE INDEX "leads_org_score_idx" ON "leads" USING btree ("org_id","score","id");