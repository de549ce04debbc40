CREATE TABLE "notification_reads" (
	"notification_id" text NOT NULL,
	"reader_id" text NOT NULL,
	"org_id" text NOT NULL,
	"read_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notification_reads_notification_id_reader_id_pk" PRIMARY KEY("notification_id","reader_id")
);
--> statement-breakpoint
CREATE TABLE "org_secrets" (
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "org_secrets_org_id_name_pk" PRIMARY KEY("org_id","name")
);
--> statement-breakpoint
ALTER TABLE "notifications" ADD COLUMN "project_id" text;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD COLUMN "recoveries" integer DEFAULT 0 NOT NULL;