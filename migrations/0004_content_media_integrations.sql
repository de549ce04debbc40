CREATE TABLE "posts" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"platform" text NOT NULL,
	"body" text NOT NULL,
	"hashtags" text[] DEFAULT '{}' NOT NULL,
	"media_ids" text[] DEFAULT '{}' NOT NULL,
	"scheduled_at" timestamp (3) with time zone,
	"integration_id" text,
	"status" text DEFAULT 'DRAFT' NOT NULL,
	"created_by" jsonb NOT NULL,
	"agent_run_id" text,
	"approved_by" jsonb,
	"approved_at" timestamp (3) with time zone,
	"external_id" text,
	"url" text,
	"published_at" timestamp (3) with time zone,
	"error" jsonb,
	"failed_at" timestamp (3) with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"first_attempt_at" timestamp (3) with time zone,
	"next_attempt_at" timestamp (3) with time zone,
	"locked_until" timestamp (3) with time zone,
	"in_flight" boolean DEFAULT false NOT NULL,
	"attempt_log" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"filename" text NOT NULL,
	"content_type" text NOT NULL,
	"extension" text NOT NULL,
	"size" bigint NOT NULL,
	"sha256" text NOT NULL,
	"created_by" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "posts" ADD CONSTRAINT "posts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "posts" ADD CONSTRAINT "posts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "posts_org_created_idx" ON "posts" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "posts_org_status_idx" ON "posts" USING btree ("org_id","status");--> statement-breakpoint
CREATE INDEX "posts_agent_run_idx" ON "posts" USING btree ("agent_run_id");--> statement-breakpoint
CREATE INDEX "posts_scheduled_due_idx" ON "posts" USING btree ("scheduled_at") WHERE status = 'SCHEDULED';--> statement-breakpoint
CREATE INDEX "posts_publishing_due_idx" ON "posts" USING btree ("next_attempt_at") WHERE status = 'PUBLISHING';--> statement-breakpoint
CREATE INDEX "posts_calendar_idx" ON "posts" USING btree ("org_id","scheduled_at");--> statement-breakpoint
CREATE INDEX "posts_calendar_published_idx" ON "posts" USING btree ("org_id","published_at");--> statement-breakpoint
CREATE INDEX "media_org_idx" ON "media" USING btree ("org_id","id");