CREATE TABLE "lead_keys" (
	"project_id" text NOT NULL,
	"kind" text NOT NULL,
	"key" text NOT NULL,
	"org_id" text NOT NULL,
	"lead_id" text NOT NULL,
	CONSTRAINT "lead_keys_project_id_kind_key_pk" PRIMARY KEY("project_id","kind","key")
);
--> statement-breakpoint
ALTER TABLE "lead_keys" ADD CONSTRAINT "lead_keys_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "lead_keys_lead_idx" ON "lead_keys" USING btree ("lead_id");--> statement-breakpoint
INSERT INTO "lead_keys" ("project_id", "kind", "key", "org_id", "lead_id") SELECT "project_id", 'email', "email_key", "org_id", "id" FROM "leads" WHERE "email_key" IS NOT NULL ORDER BY "id" ON CONFLICT DO NOTHING;--> statement-breakpoint
INSERT INTO "lead_keys" ("project_id", "kind", "key", "org_id", "lead_id") SELECT "project_id", 'phone', "phone_key", "org_id", "id" FROM "leads" WHERE "phone_key" IS NOT NULL ORDER BY "id" ON CONFLICT DO NOTHING;--> statement-breakpoint
INSERT INTO "lead_keys" ("project_id", "kind", "key", "org_id", "lead_id") SELECT "project_id", 'website', "website_key", "org_id", "id" FROM "leads" WHERE "website_key" IS NOT NULL ORDER BY "id" ON CONFLICT DO NOTHING;
