CREATE TABLE "analytics_daily" (
	"integration_id" text NOT NULL,
	"source" text NOT NULL,
	"date" text NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"metrics" jsonb NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "analytics_daily_integration_id_source_date_pk" PRIMARY KEY("integration_id","source","date")
);
--> statement-breakpoint
CREATE TABLE "analytics_rules" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"integration_id" text,
	"name" text NOT NULL,
	"metric" text NOT NULL,
	"compare" text NOT NULL,
	"threshold" double precision NOT NULL,
	"window" text NOT NULL,
	"min_baseline" double precision,
	"state" text DEFAULT 'ok' NOT NULL,
	"last_value" double precision,
	"last_fired_at" timestamp (3) with time zone,
	"last_evaluated_at" timestamp (3) with time zone,
	"error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "analytics_sync_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"integration_id" text NOT NULL,
	"status" text NOT NULL,
	"trigger" text NOT NULL,
	"from" text NOT NULL,
	"to" text NOT NULL,
	"rows" integer DEFAULT 0 NOT NULL,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"locked_until" timestamp (3) with time zone,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_states" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"actor" text NOT NULL,
	"provider" text NOT NULL,
	"name" text,
	"return_to" text,
	"integration_id" text,
	"verifier_sealed" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "integrations" ADD COLUMN "config" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "integrations" ADD COLUMN "auth_type" text DEFAULT 'token' NOT NULL;--> statement-breakpoint
ALTER TABLE "integrations" ADD COLUMN "token_expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "analytics_daily" ADD CONSTRAINT "analytics_daily_integration_id_integrations_id_fk" FOREIGN KEY ("integration_id") REFERENCES "public"."integrations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_rules" ADD CONSTRAINT "analytics_rules_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_rules" ADD CONSTRAINT "analytics_rules_integration_id_integrations_id_fk" FOREIGN KEY ("integration_id") REFERENCES "public"."integrations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_sync_runs" ADD CONSTRAINT "analytics_sync_runs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_sync_runs" ADD CONSTRAINT "analytics_sync_runs_integration_id_integrations_id_fk" FOREIGN KEY ("integration_id") REFERENCES "public"."integrations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_states" ADD CONSTRAINT "oauth_states_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "analytics_daily_org_date_idx" ON "analytics_daily" USING btree ("org_id","date");--> statement-breakpoint
CREATE INDEX "analytics_rules_org_idx" ON "analytics_rules" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "analytics_sync_runs_integration_idx" ON "analytics_sync_runs" USING btree ("integration_id","created_at");--> statement-breakpoint
CREATE INDEX "analytics_sync_runs_queue_idx" ON "analytics_sync_runs" USING btree ("created_at") WHERE status in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "oauth_states_expires_idx" ON "oauth_states" USING btree ("expires_at");