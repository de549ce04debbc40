-- pg_trgm backs the lead search index (PGlite loads it too: platform/db.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE INDEX "leads_search_idx" ON "leads" USING gin ((coalesce("name", '') || E'\n' || coalesce("email", '') || E'\n' || coalesce("company", '') || E'\n' || coalesce("website", '') || E'\n' || coalesce("phone", '')) gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "leads_org_source_idx" ON "leads" USING btree ("org_id","source");--> statement-breakpoint
CREATE INDEX "leads_org_score_idx" ON "leads" USING btree ("org_id","score");