CREATE UNIQUE INDEX "projects_org_id_uq" ON "projects" USING btree ("org_id","id");--> statement-breakpoint
DROP INDEX "projects_org_idx";--> statement-breakpoint
ALTER TABLE "leads" DROP CONSTRAINT "leads_org_id_organizations_id_fk";--> statement-breakpoint
ALTER TABLE "leads" DROP CONSTRAINT "leads_project_id_projects_id_fk";--> statement-breakpoint
ALTER TABLE "leads" ADD CONSTRAINT "leads_project_fk" FOREIGN KEY ("org_id","project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;
