CREATE TABLE "plan_usage" (
	"org_id" text NOT NULL,
	"metric" text NOT NULL,
	"month" text NOT NULL,
	"used" integer NOT NULL,
	CONSTRAINT "plan_usage_org_id_metric_month_pk" PRIMARY KEY("org_id","metric","month")
);
--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "plan" text;--> statement-breakpoint
ALTER TABLE "plan_usage" ADD CONSTRAINT "plan_usage_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;