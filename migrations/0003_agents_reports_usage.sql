CREATE TABLE "agent_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"agent_id" text,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"task" text NOT NULL,
	"input" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"model_id" text NOT NULL,
	"instructions" text,
	"max_steps" integer NOT NULL,
	"budget_usd" double precision,
	"budget_scope" text,
	"workflow_id" text,
	"workflow_run_id" text,
	"summary" text,
	"error" text,
	"output" jsonb,
	"report_id" text,
	"input_tokens" integer DEFAULT 0 NOT NULL,
	"output_tokens" integer DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"model_calls" integer DEFAULT 0 NOT NULL,
	"step_count" integer DEFAULT 0 NOT NULL,
	"inline" boolean DEFAULT false NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "agent_steps" (
	"run_id" text NOT NULL,
	"org_id" text NOT NULL,
	"index" integer NOT NULL,
	"type" text NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"name" text,
	"input" jsonb,
	"output" text,
	"duration_ms" integer,
	"text" text,
	CONSTRAINT "agent_steps_run_id_index_pk" PRIMARY KEY("run_id","index")
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"instructions" text,
	"model_id" text,
	"max_steps" integer,
	"budget_usd" double precision,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "budget_alerts" (
	"org_id" text NOT NULL,
	"scope" text NOT NULL,
	"period" text NOT NULL,
	"kind" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "budget_alerts_org_id_scope_period_kind_pk" PRIMARY KEY("org_id","scope","period","kind")
);
--> statement-breakpoint
CREATE TABLE "budgets" (
	"org_id" text PRIMARY KEY NOT NULL,
	"monthly_limit_usd" double precision,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "integrations" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"provider" text NOT NULL,
	"name" text NOT NULL,
	"credentials_sealed" text NOT NULL,
	"status" text DEFAULT 'connected' NOT NULL,
	"last_error" jsonb,
	"error_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reports" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"type" text NOT NULL,
	"title" text NOT NULL,
	"summary" text NOT NULL,
	"body" text,
	"metrics" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"recommendations" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"agent_run_id" text,
	"agent_type" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_records" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"model_id" text NOT NULL,
	"agent_run_id" text,
	"agent_type" text,
	"workflow_id" text,
	"workflow_run_id" text,
	"input_tokens" integer NOT NULL,
	"output_tokens" integer NOT NULL,
	"cost_usd" double precision NOT NULL,
	"at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "integrations" ADD CONSTRAINT "integrations_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_runs_org_created_idx" ON "agent_runs" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "agent_runs_queued_idx" ON "agent_runs" USING btree ("id") WHERE status = 'QUEUED';--> statement-breakpoint
CREATE INDEX "agent_runs_running_idx" ON "agent_runs" USING btree ("lease_until") WHERE status = 'RUNNING';--> statement-breakpoint
CREATE INDEX "agents_org_idx" ON "agents" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "integrations_org_idx" ON "integrations" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "reports_org_created_idx" ON "reports" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "reports_org_type_idx" ON "reports" USING btree ("org_id","type");--> statement-breakpoint
CREATE INDEX "usage_records_org_at_idx" ON "usage_records" USING btree ("org_id","at");--> statement-breakpoint
CREATE INDEX "usage_records_agent_run_idx" ON "usage_records" USING btree ("agent_run_id");