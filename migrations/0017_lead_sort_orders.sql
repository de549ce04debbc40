DROP INDEX "leads_org_source_idx";--> statement-breakpoint
DROP INDEX "leads_org_updated_idx";--> statement-breakpoint
DROP INDEX "leads_org_name_idx";--> statement-breakpoint
DROP INDEX "leads_org_company_idx";--> statement-breakpoint
DROP INDEX "leads_org_status_idx";--> statement-breakpoint
DROP INDEX "leads_org_score_idx";--> statement-breakpoint
CREATE INDEX "leads_org_source_idx" ON "leads" USING btree ("org_id","source","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_org_updated_idx" ON "leads" USING btree ("org_id","updated_at","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_org_name_idx" ON "leads" USING btree ("org_id","name","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_org_company_idx" ON "leads" USING btree ("org_id","company","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_org_status_idx" ON "leads" USING btree ("org_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_org_score_idx" ON "leads" USING btree ("org_id","score","created_at","id");