CREATE TABLE "approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"run_id" text,
	"node_id" text,
	"title" text NOT NULL,
	"description" text,
	"payload" jsonb,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"decision" text,
	"by" text,
	"comment" text,
	"edited_payload" jsonb,
	"expires_at" timestamp (3) with time zone,
	"resolved_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "run_events" (
	"run_id" text NOT NULL,
	"seq" integer NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	CONSTRAINT "run_events_run_id_seq_pk" PRIMARY KEY("run_id","seq")
);
--> statement-breakpoint
CREATE TABLE "run_steps" (
	"run_id" text NOT NULL,
	"node_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"org_id" text NOT NULL,
	"status" text NOT NULL,
	"outputs" jsonb,
	"item_count" integer,
	"error" jsonb,
	"started_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone,
	"duration_ms" integer,
	CONSTRAINT "run_steps_run_id_node_id_attempt_pk" PRIMARY KEY("run_id","node_id","attempt")
);
--> statement-breakpoint
CREATE TABLE "workflow_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"workflow_id" text NOT NULL,
	"workflow_name" text NOT NULL,
	"status" text NOT NULL,
	"test_mode" boolean DEFAULT false NOT NULL,
	"input" jsonb NOT NULL,
	"definition" jsonb NOT NULL,
	"trigger" jsonb NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"error" jsonb,
	"event_seq" integer DEFAULT 0 NOT NULL,
	"wake_at" timestamp (3) with time zone,
	"locked_by" text,
	"locked_until" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "workflow_schedules" (
	"workflow_id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"cron" text NOT NULL,
	"timezone" text NOT NULL,
	"next_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflows" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"name" text NOT NULL,
	"description" text,
	"nodes" jsonb NOT NULL,
	"edges" jsonb NOT NULL,
	"budget_usd" double precision,
	"active" boolean DEFAULT true NOT NULL,
	"trigger_type" text NOT NULL,
	"trigger_events" text[] DEFAULT '{}'::text[] NOT NULL,
	"webhook_token_hash" text,
	"template_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "approvals_org_idx" ON "approvals" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "approvals_expiry_idx" ON "approvals" USING btree ("expires_at") WHERE status = 'PENDING';--> statement-breakpoint
CREATE INDEX "workflow_runs_org_idx" ON "workflow_runs" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "workflow_runs_workflow_idx" ON "workflow_runs" USING btree ("workflow_id","id");--> statement-breakpoint
CREATE INDEX "workflow_runs_due_idx" ON "workflow_runs" USING btree ("wake_at") WHERE status in ('QUEUED','RUNNING','WAITING');--> statement-breakpoint
CREATE INDEX "workflow_schedules_next_idx" ON "workflow_schedules" USING btree ("next_at");--> statement-breakpoint
CREATE INDEX "workflows_org_idx" ON "workflows" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "workflows_event_trigger_idx" ON "workflows" USING btree ("org_id") WHERE trigger_type = 'trigger.event' and active;