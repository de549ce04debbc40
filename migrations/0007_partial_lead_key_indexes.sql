DROP INDEX "leads_project_email_idx";--> statement-breakpoint
DROP INDEX "leads_project_phone_idx";--> statement-breakpoint
DROP INDEX "leads_project_website_idx";--> statement-breakpoint
CREATE INDEX "leads_project_email_idx" ON "leads" USING btree ("project_id","email_key") WHERE "leads"."email_key" is not null;--> statement-breakpoint
CREATE INDEX "leads_project_phone_idx" ON "leads" USING btree ("project_id","phone_key") WHERE "leads"."phone_key" is not null;--> statement-breakpoint
CREATE INDEX "leads_project_website_idx" ON "leads" USING btree ("project_id","website_key") WHERE "leads"."website_key" is not null;